# Shared by every t2hx figure template. The caller (t2hx/post/plots.py) sets:
#   termtype ('png' | 'pdf'), outfile, datafile, title, figw/figh (inches), extra (commands).
# Fonts are sized for a figure printed at figw inches wide (paper column/page width).
reset
if (!exists("figw")) figw = 6.5
if (!exists("figh")) figh = 3.0
if (termtype eq "pdf") {
    set terminal pdfcairo enhanced color font "Helvetica,8" size figw, figh
} else {
    set terminal pngcairo enhanced color font "Helvetica,10" size int(figw*160), int(figh*160)
}
set output outfile
set datafile separator "\t"
set datafile missing "NaN"
set title title noenhanced
set border lw 0.8
# Okabe-Ito qualitative colours (colour-blind safe), one per combo.
set linetype 1 lc rgb "#0072B2" lw 1.5 pt 7
set linetype 2 lc rgb "#E69F00" lw 1.5 pt 5
set linetype 3 lc rgb "#009E73" lw 1.5 pt 9
set linetype 4 lc rgb "#CC79A7" lw 1.5 pt 11
set linetype 5 lc rgb "#56B4E9" lw 1.5 pt 13
set linetype 6 lc rgb "#D55E00" lw 1.5 pt 3
set linetype 7 lc rgb "#000000" lw 1.5 pt 1
set linetype 8 lc rgb "#F0E442" lw 1.5 pt 2
set linetype cycle 8
# Diverging palette centred at 0 for gains (ColorBrewer PuOr, colour-blind safe):
# orange = worse than the baseline, white = equal, purple = better.
pal_gain = "set palette defined (-1 '#b35806', -0.6 '#f1a340', -0.25 '#fee0b6', 0 '#f7f7f7', 0.25 '#d8daeb', 0.6 '#998ec3', 1 '#542788')"
# Sequential palette (viridis) for bandwidth matrices.
pal_seq = "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')"
