#!/bin/sh
# papers.sh -- the figure of one of dtsim's literature replications, drawn
# by gnuplot from the tables plots/papers-table.sh wrote into the sweep
# folder (scenarios/papers/run.sh calls both).
#
#   plots/papers.sh NAME SWEEP_DIR      -> SWEEP_DIR/plots/NAME.png and .pdf
#
#   adpsgd-straggler  throughput relative to no straggler, and time to the
#                     target loss, against the straggler's slowdown
#   prague            time to the target loss per protocol and condition
#   hop               the same for D-PSGD and Hop's variants
#   ringmaster        time to the target loss at each method's best
#                     learning rate, and against the learning rate
#   local-sgd         time to the target accuracy, and speedup over H = 1,
#                     against H, for fast and slow links
# Points are means over replicates; whiskers run from the smallest to the
# largest replicate.  Nothing is computed here beyond what the tables hold.
set -eu

[ $# -eq 2 ] || { echo "usage: plots/papers.sh NAME SWEEP_DIR" >&2; exit 2; }
name=$1 dir=${2%/}
command -v gnuplot >/dev/null 2>&1 || {
  echo "papers.sh: error: gnuplot not found (Debian: apt-get install gnuplot-nox, or scripts/install-deps --plots)" >&2
  exit 1
}
t=$dir/table.tsv
[ -f "$t" ] || { echo "papers.sh: error: $t: no such file (run plots/papers-table.sh first)" >&2; exit 1; }
mkdir -p "$dir/plots"
body=$(mktemp)
trap 'rm -f "$body"' EXIT

common="set datafile separator tab; set key autotitle columnhead; set grid; set datafile missing 'nan'"
case $name in
  adpsgd-straggler)
    # columns: name slowdown ttt(mean sd min max reached)=3..7
    # steps(mean sd min max reached)=8..12 ttt ratio=13..15 steps ratio=16..18
    cat > "$body" <<EOF
$common
set multiplot layout 1,2 title 'AD-PSGD vs D-PSGD vs all-reduce, 16 workers on a ring, one worker slowed down'
set logscale x; set xrange [0.8:130]; set xtics (1, 2, 10, 100)
set xlabel "slowdown of worker 0"; set key bottom left
set logscale y; set ylabel 'gradient throughput / throughput with no straggler'
set yrange [0.005:2]
plot for [a in "adpsgd dpsgd allreduce"] '$t' using (strcol(1) eq a ? \$2 : NaN):16:17:18 with yerrorlines lw 2 pt 7 title a, \
     1/x with lines dt 3 lc black title '1 / slowdown'
set ylabel 'simulated time to train loss 0.3 (s)'; set yrange [*:*]; set key top left
plot for [a in "adpsgd dpsgd allreduce"] '$t' using (strcol(1) eq a ? \$2 : NaN):3:5:6 with yerrorlines lw 2 pt 7 title a
unset multiplot
EOF
    ;;
  prague)
    # rows: 4 protocols x 3 conditions; columns: algorithm slowdown factor
    # ttt(mean sd min max reached)=4..8 speedup=9..11
    cat > "$body" <<EOF
$common
set title 'Partial all-reduce (Prague) vs all-reduce and AD-PSGD, 16 workers'
set ylabel 'simulated time to train loss 0.3 (s)'; set yrange [0:*]
set xtics ('homogeneous' 0, 'worker 0 4x slower' 1, 'random 5x slowdowns, 10 pct of time' 2)
set xrange [-0.6:2.6]; set key top left; set style fill solid 0.6 border -1; set boxwidth 0.18
cond(s, f) = (s == 4 ? 1 : (f == 5 ? 2 : 0))
plot for [k=0:3] '$t' every ::(3*k)::(3*k+2) using (cond(\$2, \$3) + (k - 1.5) * 0.2):4 with boxes lc (k+1) title columnhead(1), \
     for [k=0:3] '' every ::(3*k)::(3*k+2) using (cond(\$2, \$3) + (k - 1.5) * 0.2):4:6:7 with yerrorbars lc black pt -1 notitle
EOF
    # box titles: the protocol of each block of three rows
    sed -i 's/title columnhead(1)/title word("all-reduce AD-PSGD prague-static prague-random", k+1)/' "$body"
    ;;
  hop)
    # rows: 5 variants x 3 conditions; columns as for prague
    cat > "$body" <<EOF
$common
set title 'Hop (backup workers, bounded staleness, skipping) vs D-PSGD, 16 workers on a ring'
set ylabel 'simulated time to train loss 0.3 (s)'; set yrange [0:*]
set xtics ('homogeneous' 0, 'worker 0 4x slower' 1, 'random 5x slowdowns, 10 pct of time' 2)
set xrange [-0.6:2.6]; set key top left font ',9'; set style fill solid 0.6 border -1; set boxwidth 0.15
cond(s, f) = (s == 4 ? 1 : (f == 5 ? 2 : 0))
plot for [k=0:4] '$t' every ::(3*k)::(3*k+2) using (cond(\$2, \$3) + (k - 2) * 0.16):4 with boxes lc (k+1) title columnhead(1), \
     for [k=0:4] '' every ::(3*k)::(3*k+2) using (cond(\$2, \$3) + (k - 2) * 0.16):4:6:7 with yerrorbars lc black pt -1 notitle
EOF
    sed -i 's/title columnhead(1)/title word("D-PSGD hop-b0-s2 hop-b1-s2 hop-b1-s2-skip hop-b1-s8-skip", k+1)/' "$body"
    ;;
  ringmaster)
    # table.tsv: algorithm lr ttt(mean sd min max reached)=3..7
    # table-all.tsv: the same for every learning rate
    a=$dir/table-all.tsv
    cat > "$body" <<EOF
$common
set multiplot layout 1,2 title 'Step times 1 + sqrt(i), 16 workers, linear regression (noise 0.1), free communication'
set title "each method at its best learning rate"
set ylabel 'simulated time to train loss 0.01 (s)'; set yrange [0:*]
set style fill solid 0.6 border -1; set boxwidth 0.6; set key off
set xtics rotate by -35 left font ',8'; set bmargin 7; set xrange [-0.6:*]
plot '$t' using 0:3:xtic(sprintf("%s, lr %s", strcol(1), strcol(2))) with boxes lc 1, '' using 0:3:5:6 with yerrorbars lc black pt -1
set title "against the learning rate (missing: never reached or diverged)"
set xtics norotate font ',10'; set bmargin; set xrange [*:*]
set yrange [*:*]; set logscale xy; set xlabel 'learning rate'; set key top right font ',8'
methods = system("cut -f1 '$a' | tail -n +2 | awk '!s[\$0]++' | tr ' ' '_'")
nm = words(methods)
nl = int(system("tail -n +2 '$a' | wc -l")) / nm
R = int(system("tail -n +2 '$a' | cut -f7 | sort -n | tail -n 1"))
plot for [k=0:nm-1] '$a' every ::(nl*k)::(nl*k+nl-1) using (\$7 == R ? \$2 : NaN):3 with linespoints lw 2 pt (k < 8 ? 7 : 5) title word(methods, k+1)
unset multiplot
EOF
    ;;
  local-sgd)
    # columns: latency_s bandwidth_Bps every_s local_steps ttt(mean sd min
    # max reached)=5..9 speedup=10..12
    cat > "$body" <<EOF
$common
set multiplot layout 1,2 title 'Local SGD on Fashion-MNIST softmax, 16 workers, ring all-reduce every H steps'
set logscale x 2; set xlabel 'H (local steps between all-reduces)'; set xrange [0.8:80]
set ylabel 'simulated time to test accuracy 0.80 (s)'; set logscale y; set key top right
plot '$t' using (\$1 < 1e-3 ? \$4 : NaN):5:7:8 with yerrorlines lw 2 pt 7 title 'fast: 10 Gbit/s, 50 us', \
     '' using (\$1 >= 1e-3 ? \$4 : NaN):5:7:8 with yerrorlines lw 2 pt 7 title 'slow: 100 Mbit/s, 5 ms'
set ylabel 'speedup over H = 1'; unset logscale y; set yrange [0:*]; set key top left
plot '$t' using (\$1 < 1e-3 ? \$4 : NaN):10:11:12 with yerrorlines lw 2 pt 7 title 'fast: 10 Gbit/s, 50 us', \
     '' using (\$1 >= 1e-3 ? \$4 : NaN):10:11:12 with yerrorlines lw 2 pt 7 title 'slow: 100 Mbit/s, 5 ms'
unset multiplot
EOF
    ;;
  *) echo "papers.sh: error: unknown replication $name (adpsgd-straggler, prague, hop, ringmaster, local-sgd)" >&2; exit 2 ;;
esac

{
  echo "set terminal pngcairo size 1200,560 font ',11' noenhanced"
  echo "set output '$dir/plots/$name.png'"
  cat "$body"
  echo "set terminal pdfcairo size 8in,3.8in font ',9' noenhanced"
  echo "set output '$dir/plots/$name.pdf'"
  cat "$body"
} | gnuplot
echo "papers.sh: wrote $dir/plots/$name.png, $name.pdf"
