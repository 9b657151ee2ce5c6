# Jobs over time as boxes (seed 004 Fig 1): x = time [days], y = node index in the system's
# host order; one box per contiguous run of a job's nodes, one colour per job (cycling).
# datafile: header "start<TAB>end<TAB>lo<TAB>hi<TAB>job", one row per run.
# caller sets: xlabel_text, ylabel_text
load gpdir."/common.gp"
set xlabel xlabel_text noenhanced
set ylabel ylabel_text noenhanced
set style fill solid 0.7 noborder
unset key
set yrange [-0.5:*]
plot datafile using (($1+$2)/2):(($3+$4)/2):1:2:($3-0.5):($4+0.5):(int($5)%8+1) skip 1 \
     with boxxyerror lc variable
