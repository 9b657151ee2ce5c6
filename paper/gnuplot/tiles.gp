# Labelled tiles (the scorecard picture, the packet/flow ratio grid): one box per cell, its
# colour given per cell, a short text on it; rows top to bottom.
# datafile columns: col  row  rgb (integer 0xRRGGBB)  text
# caller sets: ncols, nrows, extra (xtics/ytics), keys (legend entries)
load gpdir."/common.gp"
set xrange [-0.5:ncols-0.5]
set yrange [nrows-0.5:-0.5]
set xtics rotate by 90 right font ",7" scale 0 noenhanced
set ytics font ",7" scale 0 noenhanced
set style fill solid 1.0 border lc rgb "#9e9e9e"
set key below center horizontal font ",7" samplen 2.5 noenhanced
eval extra
plot datafile using 1:2:(0.5):(0.5):3 with boxxyerror lc rgb variable notitle, \
     datafile using 1:2:4 with labels font ",6" noenhanced notitle @keys
