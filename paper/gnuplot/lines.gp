# One line per series (combos for eBB and ring allreduce, engines for EFI histograms).
# datafile: header row "x<TAB>series1<TAB>…", then rows; NaN = no value (gap).
# caller sets: nseries, xlabel_text, ylabel_text, logx, logy (0/1), style ("linespoints"|"steps")
load gpdir."/common.gp"
set xlabel xlabel_text noenhanced
set ylabel ylabel_text noenhanced
if (logx) set logscale x 2
if (logy) set logscale y
set key outside top center horizontal font ",7" noenhanced
set grid ytics lc rgb "#dddddd"
eval extra
plot for [i=2:nseries+1] datafile using 1:i with @style title columnheader(i) lc (i-1)
