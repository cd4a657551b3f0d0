#!/bin/sh
# plot.sh -- the standard figures of a dtsim run or sweep folder, drawn by
# gnuplot (Debian's gnuplot-nox) as PNG and PDF into DIR/plots/.
#
#   plots/plot.sh DIR...        (or: dtsim plot DIR...)
#
# A run folder (metrics.csv):
#   convergence   train and test loss (log scale) and test accuracy against
#                 simulated time
#   consensus     consensus distance against simulated time (log scale)
#   timeline      per-node timeline from trace.csv, one colour per kind of
#                 interval (computing, sending, down, ...); blank is idle.
#                 Skipped when the run wrote no trace.csv.
# A sweep folder (sweep.csv, summary.csv):
#   convergence   as above, one line per grid point (the swept parameters'
#                 values), the mean over replicates, and a band from the
#                 smallest to the largest replicate
#   consensus     the same for the consensus distance
#   time_to_target  bars: mean simulated time to the target accuracy (and
#                 loss) per grid point, whiskers min..max over replicates;
#                 skipped when the scenario set no target.  Replicates that
#                 never reached the target are left out of the bar and
#                 counted in its label.
# Columns are found by name in the CSV header, so added columns do not
# break the figures.  This script reads dtsim's CSV; it computes nothing
# but means and ranges over replicates.
set -eu

if [ $# -eq 0 ]; then
  echo "usage: plots/plot.sh RUN_OR_SWEEP_DIR..." >&2
  exit 2
fi
command -v gnuplot >/dev/null 2>&1 || {
  echo "plot.sh: error: gnuplot not found (Debian: apt-get install gnuplot-nox, or scripts/install-deps --plots)" >&2
  exit 1
}

# awk prelude: split a CSV line (RFC 4180 quotes) into f[1..n]; col[name]
# from the header.
CSV_AWK='
function csvsplit(line, f,    n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur c; i++ } else q = 0 }
      else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}
function isnum(s) { return s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
'

# gp_both NAME BODYFILE: draws BODYFILE into plots/NAME.png and .pdf
gp_both() {
  {
    echo "set terminal pngcairo size 960,640 font ',11' noenhanced"
    echo "set output '$out/$1.png'"
    cat "$2"
    echo "set terminal pdfcairo size 6in,4in font ',9' noenhanced"
    echo "set output '$out/$1.pdf'"
    cat "$2"
  } | gnuplot
  echo "plot.sh: wrote $out/$1.png, $1.pdf"
}

# gnuplot string literal
q() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

# aggregate SWEEP.CSV: one gnuplot data block per grid point (in order of
# first appearance), rows: time_s, then mean/min/max of train_loss,
# test_loss, test_accuracy, consensus_distance over replicates.  Labels go
# to LABELS, one per line.
aggregate() {
  awk -v labels="$2" "$CSV_AWK"'
  NR == 1 {
    n = csvsplit($0, h)
    for (i = 1; i <= n; i++) col[h[i]] = i
    rep = col["replicate"]
    ncol = split("train_loss test_loss test_accuracy consensus_distance", want, " ")
    next
  }
  {
    csvsplit($0, f)
    key = ""; lab = ""
    for (i = 2; i < rep; i++) {
      key = key SUBSEP f[i]
      name = h[i]; sub(/.*[.\/]/, "", name)
      lab = lab (lab == "" ? "" : ", ") name "=" f[i]
    }
    if (rep == 2) lab = "run"
    if (!(key in gid)) { gid[key] = ng++; glab[ng - 1] = lab }
    g = gid[key]; t = f[col["time_s"]] + 0
    k = g SUBSEP t
    if (!(k in cnt)) { times[g, ++nt[g]] = t }
    cnt[k]++
    for (c = 1; c <= ncol; c++) {
      v = f[col[want[c]]]
      if (!isnum(v)) continue
      v += 0
      s[k, c] += v
      if (!((k, c) in lo) || v < lo[k, c]) lo[k, c] = v
      if (!((k, c) in hi) || v > hi[k, c]) hi[k, c] = v
      m[k, c]++
    }
  }
  END {
    for (g = 0; g < ng; g++) {
      print glab[g] > labels
      if (g) printf "\n\n"
      for (j = 1; j <= nt[g]; j++) {
        t = times[g, j]; k = g SUBSEP t
        printf "%.10g", t
        for (c = 1; c <= ncol; c++) {
          if (m[k, c]) printf " %.10g %.10g %.10g", s[k, c] / m[k, c], lo[k, c], hi[k, c]
          else printf " NaN NaN NaN"
        }
        printf "\n"
      }
    }
  }' "$1"
}

# convergence and consensus figures from an aggregated file
draw_curves() {
  data=$1 labels=$2 title=$3
  ng=$(wc -l < "$labels")
  body=$tmp/conv.gp
  {
    echo "set multiplot layout 1,2 title $(q "$title")"
    echo "set grid; set key top right font ',9'; set xlabel 'simulated time (s)'"
    echo "set logscale y; set ylabel 'loss (train solid, test dashed)'"
    printf 'plot '
    i=0
    while IFS= read -r lab; do
      [ $i -gt 0 ] && printf ', '
      printf "'%s' index %d using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc %d notitle, " "$data" $i $((i + 1))
      printf "'' index %d using 1:2 with lines lw 2 lc %d title %s, " $i $((i + 1)) "$(q "$lab")"
      printf "'' index %d using 1:5 with lines lw 1 dt 2 lc %d notitle" $i $((i + 1))
      i=$((i + 1))
    done < "$labels"
    echo
    echo "unset logscale y; set ylabel 'test accuracy'; set yrange [*:*]; set key bottom right"
    printf 'plot '
    i=0
    while IFS= read -r lab; do
      [ $i -gt 0 ] && printf ', '
      printf "'%s' index %d using 1:9:10 with filledcurves fs transparent solid 0.2 noborder lc %d notitle, " "$data" $i $((i + 1))
      printf "'' index %d using 1:8 with lines lw 2 lc %d title %s" $i $((i + 1)) "$(q "$lab")"
      i=$((i + 1))
    done < "$labels"
    echo
    echo "unset multiplot"
  } > "$body"
  gp_both convergence "$body"

  body=$tmp/cons.gp
  {
    echo "set title $(q "$title: consensus distance")"
    echo "set grid; set key top right font ',9'; set xlabel 'simulated time (s)'"
    echo "set ylabel 'consensus distance sqrt(mean_i ||x_i - mean||^2)'"
    echo "set logscale y"
    printf 'plot '
    i=0
    while IFS= read -r lab; do
      [ $i -gt 0 ] && printf ', '
      # zero (identical models) has no place on a log scale
      printf "'%s' index %d using 1:(\$12 > 0 ? \$12 : NaN):(\$13 > 0 ? \$13 : NaN) with filledcurves fs transparent solid 0.2 noborder lc %d notitle, " "$data" $i $((i + 1))
      printf "'' index %d using 1:(\$11 > 0 ? \$11 : NaN) with lines lw 2 lc %d title %s" $i $((i + 1)) "$(q "$lab")"
      i=$((i + 1))
    done < "$labels"
    echo
  } > "$body"
  if awk '!/^$/ && $11 > 0 { found = 1 } END { exit !found }' "$data"; then
    gp_both consensus "$body"
  else
    echo "plot.sh: $dir: consensus distance is 0 throughout (all nodes hold one model): no consensus figure"
  fi
}

# time-to-target bars from summary.csv
draw_targets() {
  sum=$1 title=$2
  for what in accuracy loss; do
    awk -v what="$what" -v out="$tmp/ttt-$what.dat" "$CSV_AWK"'
    NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; rep = col["replicate"]; next }
    {
      csvsplit($0, f)
      if (!isnum(f[col["target_" what]])) next
      key = ""; lab = ""
      for (i = 2; i < rep; i++) {
        key = key SUBSEP f[i]; name = h[i]; sub(/.*[.\/]/, "", name)
        lab = lab (lab == "" ? "" : ", ") name "=" f[i]
      }
      if (rep == 2) lab = "run"
      if (!(key in gid)) { gid[key] = ng++; glab[ng - 1] = lab }
      g = gid[key]; v = f[col["time_to_target_" what "_s"]]
      runs[g]++
      if (!isnum(v)) { miss[g]++; next }
      v += 0; s[g] += v; m[g]++
      if (!(g in lo) || v < lo[g]) lo[g] = v
      if (!(g in hi) || v > hi[g]) hi[g] = v
    }
    END {
      for (g = 0; g < ng; g++) {
        lab = glab[g]
        if (miss[g]) lab = lab sprintf(" (%d/%d never)", miss[g], runs[g])
        gsub(/"/, "\\\"", lab)
        if (m[g]) printf "%d %.10g %.10g %.10g \"%s\"\n", g, s[g] / m[g], lo[g], hi[g], lab > out
        else printf "%d NaN NaN NaN \"%s\"\n", g, lab > out
      }
      exit !ng
    }' "$sum" || {
      echo "plot.sh: $dir: no stop.target_$what set: no time_to_target_$what figure"
      continue
    }
    awk '$2 != "NaN" { found = 1 } END { exit !found }' "$tmp/ttt-$what.dat" || {
      echo "plot.sh: $dir: no run reached the target $what: no time_to_target_$what figure"
      continue
    }
    body=$tmp/ttt.gp
    {
      echo "set title $(q "$title: simulated time to the target $what")"
      echo "set grid y; set ylabel 'simulated time (s)'; set yrange [0:*]"
      echo "set style fill solid 0.5 border -1; set boxwidth 0.6; set offsets 0.5,0.5,graph 0.1,0"
      echo "set xtics rotate by -30 left noenhanced font ',9'; set bmargin 8; set key off"
      echo "plot '$tmp/ttt-$what.dat' using 1:2:xtic(5) with boxes lc 1, '' using 1:2:3:4 with yerrorbars lc black pt -1"
    } > "$body"
    gp_both "time_to_target_$what" "$body"
  done
}

# per-node timeline from trace.csv (node, kind, start_s, end_s, ...)
draw_timeline() {
  trace=$1 title=$2
  kinds=$(awk "$CSV_AWK"'NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    { csvsplit($0, f); k = f[col["kind"]]; if (!(k in seen)) { seen[k] = 1; print k } }' "$trace")
  [ -n "$kinds" ] || { echo "plot.sh: $dir: trace.csv is empty: no timeline figure"; return 0; }
  awk "$CSV_AWK"'NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    { csvsplit($0, f); print f[col["node"]], f[col["start_s"]], f[col["end_s"]], f[col["kind"]] }' \
    "$trace" > "$tmp/trace.dat"
  body=$tmp/tl.gp
  {
    echo "set title $(q "$title: per-node timeline (blank: idle)")"
    echo "set xlabel 'simulated time (s)'; set ylabel 'node'; set yrange [*:*] reverse"
    echo "set offsets 0,0,0.5,0.5"
    awk '$1 > m { m = $1 } END { if (m < 32) print "set ytics 1" }' "$tmp/trace.dat"
    echo "set key outside right noenhanced"
    printf 'plot '
    i=0
    echo "$kinds" | while IFS= read -r k; do
      [ $i -gt 0 ] && printf ', '
      printf "'%s' using 2:(strcol(4) eq %s ? \$1 : NaN):(\$3-\$2):(0) with vectors nohead lw 6 lc %d title %s" \
        "$tmp/trace.dat" "$(q "$k")" $((i + 1)) "$(q "$k")"
      i=$((i + 1))
    done
    echo
  } > "$body"
  gp_both timeline "$body"
}

status=0
for dir in "$@"; do
  dir=${dir%/}
  out=$dir/plots
  tmp=$(mktemp -d)
  name=$(basename "$dir")
  if [ -f "$dir/sweep.csv" ]; then
    mkdir -p "$out"
    aggregate "$dir/sweep.csv" "$tmp/labels" > "$tmp/agg.dat"
    draw_curves "$tmp/agg.dat" "$tmp/labels" "$name"
    draw_targets "$dir/summary.csv" "$name"
  elif [ -f "$dir/metrics.csv" ]; then
    mkdir -p "$out"
    # a run is a sweep of one, its line named after its algorithm
    alg=$(sed -n 's/.*"algorithm":{[^}]*"name":"\([^"]*\)".*/\1/p' "$dir/run.json" 2>/dev/null | head -n 1)
    awk -v alg="${alg:-run}" 'NR == 1 { print "run,algorithm,replicate,seed," $0; next }
      { print "0," alg ",0,0," $0 }' "$dir/metrics.csv" > "$tmp/one.csv"
    aggregate "$tmp/one.csv" "$tmp/labels" > "$tmp/agg.dat"
    draw_curves "$tmp/agg.dat" "$tmp/labels" "$name"
    if [ -f "$dir/trace.csv" ]; then
      draw_timeline "$dir/trace.csv" "$name"
    else
      echo "plot.sh: $dir: no trace.csv: no timeline figure"
    fi
  else
    echo "plot.sh: error: $dir: neither sweep.csv nor metrics.csv" >&2
    status=1
  fi
  rm -rf "$tmp"
done
exit $status
