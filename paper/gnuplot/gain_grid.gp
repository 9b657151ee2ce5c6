# Relative-gain grid (seed 000 Fig 4): rows = combos, columns = (node count, message size)
# cells, colour + printed number = gain vs the baseline; missing cells (NaN) stay empty.
# datafile columns: col  row  gain  nodes  msg_size  combo
# caller sets: ncols, nrows, cbmax, extra (xtics/ytics/node-group labels)
load gpdir."/common.gp"
@pal_gain
set cbrange [-cbmax:cbmax]
set cblabel "relative gain vs baseline"
set xrange [-0.5:ncols-0.5]
set yrange [nrows-0.5:-0.5]
set xtics rotate by 90 right font ",7" scale 0
set ytics font ",8" scale 0
set xlabel "message size, grouped by node count" offset 0,-0.5
set tmargin 5
set title offset 0,1.6
set style fill solid 1.0 noborder
set key off
eval extra
plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \
     datafile using 1:2:(sprintf("%+.2f", $3)) with labels font ",6"
