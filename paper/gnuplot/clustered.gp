# Clustered bars: one cluster per row (label in column 1), one bar per column 2..ncols+1.
# caller sets: ncols, ylabel_text; extra (e.g. a log axis); a zero line is drawn.
load gpdir."/common.gp"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel ylabel_text noenhanced
set xtics rotate by 30 right scale 0 noenhanced
set key outside top center horizontal font ",7" noenhanced width 2 samplen 2
set xzeroaxis lt -1
eval extra
plot for [i=2:ncols+1] datafile using i:xtic(1) title columnheader(i) lc (i-1)
