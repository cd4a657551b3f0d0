#!/usr/bin/env bash
# plot_scaling.sh -- the scaling figure of bench/RESULTS.md: CPU seconds
# against events and peak resident memory against nodes, log-log, one
# series per table (named after its file), from the markdown tables that
# bench_timing prints.  A line of slope 1 marks linear cost.
#
# usage: bench/plot_scaling.sh OUT.png TABLE.md...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/plot_scaling.sh OUT.png TABLE.md..." >&2; exit 2; }
out=$1
shift
dat=$(mktemp)
trap 'rm -f "$dat" "$dat".*' EXIT
# columns: | algorithm | nodes | simulated s | events | CPU s median [..] | wall | rate | RSS MiB | ...
for t in "$@"; do
  label=$(basename "$t" .md)
  awk -F'|' -v label="$label" '$3 ~ /^ *[0-9]+ *$/ {
      split($6, c, " "); printf "%s %d %s %s %s\n", label, $3, $5, c[1], $9 }' "$t" \
    | sed 's/ \+/ /g' >> "$dat"
done
series=$(awk '{print $1}' "$dat" | sort -u)
plot_cpu=""
plot_rss=""
for s in $series; do
  awk -v s="$s" '$1 == s {print $2, $3, $4, $5}' "$dat" | sort -n > "$dat.$s"
  plot_cpu="$plot_cpu'$dat.$s' using 2:3 with linespoints title '$s', "
  plot_rss="$plot_rss'$dat.$s' using 1:4 with linespoints title '$s', "
done
gnuplot <<GP
set terminal pngcairo size 1100,450 font ",10"
set output "$out"
set multiplot layout 1,2
set logscale xy
set grid
set key top left
set xlabel "events"
set ylabel "CPU seconds (median)"
set title "time against events"
plot $plot_cpu x / 1e7 with lines dashtype 2 lc rgb "gray" title "slope 1 (10 M events/s)"
set xlabel "nodes"
set ylabel "peak RSS, MiB"
set title "memory against nodes"
plot $plot_rss
unset multiplot
GP
