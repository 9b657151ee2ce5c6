# One line per series (combos for eBB and ring allreduce, engines for EFI histograms).
# datafile: header row "x<TAB>series1<TAB>…", then rows; NaN = no value (gap).
# caller sets: nseries, xlabel_text, ylabel_text, logx, logy (0/1), style ("linespoints"|"steps"),
#   ratio (0/1: a lower panel of every series over the first, where lines that lie on top of
#   each other above come apart), ratio_label (that panel's y label)
load gpdir."/common.gp"
if (!exists("ratio")) ratio = 0
if (!exists("ratio_label")) ratio_label = "÷ first series"
set xlabel xlabel_text noenhanced
set ylabel ylabel_text noenhanced
if (logx) set logscale x 2
if (logy) set logscale y
set key outside top center horizontal font ",7" noenhanced width 2 samplen 2
set grid ytics lc rgb "#dddddd"
eval extra
if (ratio) {
    set multiplot title title noenhanced
    unset title
    set lmargin 10
    set origin 0, 0.32
    set size 1, 0.62
    set format x ""
    set xlabel " "
}
plot for [i=2:nseries+1] datafile using 1:i with @style title columnheader(i) lc (i-1)
if (ratio) {
    set origin 0, 0
    set size 1, 0.34
    set tmargin 0.5
    unset logscale y
    set format x
    set xlabel xlabel_text noenhanced
    set ylabel ratio_label noenhanced
    set key off
    eval extra
    plot for [i=2:nseries+1] datafile using 1:(column(i)/column(2)) with @style notitle lc (i-1)
    unset multiplot
}
