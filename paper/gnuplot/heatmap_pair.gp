# mpiGraph pair (seed 000 Fig 1's layout): two sender x receiver bandwidth matrices side by
# side, one colour scale. datafile: two data sets (index 0 left, 1 right) with columns
# sender  receiver  GiB/s (blank line between sender rows).
# caller sets: n (ranks), cbmax, left_title, right_title
load gpdir."/common.gp"
@pal_seq
set multiplot title title noenhanced
set size ratio -1
set xrange [-0.5:n-0.5]
set yrange [n-0.5:-0.5]
set cbrange [0:cbmax]
step = (n > 16) ? int(n/8) : 1
set xtics 0, step, n-1 out
set ytics 0, step, n-1 out
set xlabel "receiver rank"
set ylabel "sender rank"
set key off
eval extra
set origin 0, 0
set size 0.46, 0.92
unset colorbox
set title left_title noenhanced font ",9"
plot datafile index 0 using 2:1:3 with image
set origin 0.44, 0
set size 0.56, 0.92
set colorbox
set cblabel "GiB/s"
unset ylabel
set title right_title noenhanced font ",9"
plot datafile index 1 using 2:1:3 with image
unset multiplot
