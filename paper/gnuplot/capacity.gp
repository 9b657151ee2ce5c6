# Capacity (seed 000 Fig 7): finished runs per app (clusters) per combo (bars).
# datafile: header row "app<TAB>combo1<TAB>combo2…", then one row per app.
# caller sets: ncombos
load gpdir."/common.gp"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "finished runs"
set yrange [0:*]
set xtics rotate by 45 right scale 0 noenhanced
set key outside top center horizontal font ",7" noenhanced width 2 samplen 2
eval extra
plot for [i=2:ncombos+1] datafile using i:xtic(1) title columnheader(i) lc (i-1)
