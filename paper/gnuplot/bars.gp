# Labelled bars (dark fiber share per routing engine, seed 004 Def 8).
# datafile columns: label  value  value_text
# caller sets: ylabel_text, ymax
load gpdir."/common.gp"
set style fill solid 0.7 border -1
set boxwidth 0.6
set ylabel ylabel_text noenhanced
set yrange [0:ymax]
set xtics scale 0 noenhanced
set key off
eval extra
plot datafile using 0:2:xtic(1) with boxes lc 1, \
     datafile using 0:2:3 with labels offset 0,0.7 font ",7"
