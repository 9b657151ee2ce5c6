# mpiGraph (seed 000 Fig 1): sender x receiver bandwidth matrix of one run; average in title.
# datafile columns: sender  receiver  GiB/s (blank line between sender rows)
# caller sets: n (ranks), cbmax
load gpdir."/common.gp"
@pal_seq
set size ratio -1
set xrange [-0.5:n-0.5]
set yrange [n-0.5:-0.5]
set cbrange [0:cbmax]
step = (n > 16) ? int(n/8) : 1
set xtics 0, step, n-1 out
set ytics 0, step, n-1 out
set cblabel "GiB/s"
set xlabel "receiver rank"
set ylabel "sender rank"
set key off
eval extra
plot datafile using 2:1:3 with image
