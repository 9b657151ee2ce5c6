# Whisker plot (seed 000 Fig 5b-6): per node count one box per combo (min, q1, median, q3,
# max of the repetitions); the best-run gain vs the baseline is printed above each box.
# datafile columns: x  combo_idx  nodes  min  q1  median  q3  max  gain  label_y  gain_label
# caller sets: ylabel_text, logy (0/1), extra (xtics, key entries via `keys` macro)
load gpdir."/common.gp"
set ylabel ylabel_text noenhanced
set xlabel "nodes"
if (logy) set logscale y
set style fill solid 0.35 border
set boxwidth 0.8
set key outside top center horizontal font ",7" noenhanced width 2 samplen 2
set xtics scale 0
eval extra
plot datafile using 1:5:4:8:7:2 with candlesticks lc variable notitle whiskerbars 0.5, \
     datafile using 1:6:6:6:6:2 with candlesticks lc variable lw 2 notitle, \
     datafile using 1:10:11 with labels offset 0,0.7 font ",6" notitle @keys
