#!/bin/sh
# plot.sh -- the standard figures of a dtsim run or sweep folder, drawn by
# gnuplot (Debian's gnuplot-nox) as PNG and PDF into DIR/plots/, each
# beside its gnuplot script NAME.gp and data NAME*.dat (`cd DIR/plots &&
# gnuplot NAME.gp` draws it again, e.g. after editing fonts or sizes).
#
#   plots/plot.sh [--spread sd|se|ci95|minmax] [--label PATH=TEXT]... [--quiet] DIR...
#   (or: dtsim plot DIR... [options])
#
# A run folder (metrics.csv):
#   convergence   train and test loss (log scale) and test accuracy against
#                 simulated time
#   consensus     consensus distance against simulated time (log scale)
#   timeline      per-node timeline from trace.csv, one colour per kind of
#                 interval (computing, sending, down, ...); blank is idle.
#                 Skipped when the run wrote no trace.csv.
# A sweep folder (sweep.csv, summary.csv):
#   convergence   as above, one line per grid point, labelled with the
#                 swept parameters' full paths and values
#                 (algorithm.name=dpsgd; --label renames a path, an empty
#                 TEXT leaves the values alone): the mean over the
#                 replicates and a band, --spread: mean +- sd (the
#                 default), +- se, the t-based 95% confidence interval of
#                 the mean, or min..max.  A replicate that stopped early (a
#                 target reached) counts with its last value from then on,
#                 so the mean does not jump; a circle marks where one
#                 stopped.  Between its own evaluations a replicate is
#                 interpolated linearly (evaluations fall at the same
#                 instants in every replicate but the last).
#   consensus     the same for the consensus distance, leaving out the
#                 protocols for which it means nothing (run.json's
#                 "consensus_meaningful": false: one model by construction,
#                 or a server's model evaluated)
#   time_to_target_accuracy, time_to_target_loss
#                 horizontal bars: mean simulated time to the stop target
#                 per grid point, whiskers the same --spread over the
#                 replicates that reached it; those that never did are
#                 counted in the label ("1/3 never"); skipped when the
#                 scenario set no target.
# Titles say the folder, the target, the spread and n, the replicates per
# grid point.  Columns are found by name in the CSV header, so added
# columns do not break the figures.  It computes nothing but means,
# deviations, quantiles of Student's t and ranges over replicates.
set -eu

err() { echo "plot.sh: error: $*" >&2; exit 2; }
usage() {
  echo "usage: plots/plot.sh [--spread sd|se|ci95|minmax] [--label PATH=TEXT]... [--quiet] RUN_OR_SWEEP_DIR..." >&2
  exit 2
}

spread=sd quiet=0 dirs="" labels=""
nl='
'
while [ $# -gt 0 ]; do
  case $1 in
    --spread) [ $# -ge 2 ] || usage
      case $2 in sd|se|ci95|minmax) spread=$2 ;; *) err "--spread '$2': expected one of: sd, se, ci95, minmax" ;; esac
      shift 2 ;;
    --label) [ $# -ge 2 ] || usage
      case $2 in ?*=*) labels="$labels$2$nl" ;; *) err "--label '$2': expected PATH=TEXT" ;; esac
      shift 2 ;;
    --quiet) quiet=1; shift ;;
    --) shift; for d in "$@"; do dirs="$dirs$d$nl"; done; break ;;
    -*) usage ;;
    *) dirs="$dirs$1$nl"; shift ;;
  esac
done
[ -n "$dirs" ] || usage
command -v gnuplot >/dev/null 2>&1 || {
  echo "plot.sh: error: gnuplot not found (Debian: apt-get install gnuplot-nox, or scripts/install-deps --plots)" >&2
  exit 1
}
say() { [ "$quiet" = 1 ] || echo "plot.sh: $*"; }

case $spread in
  sd) spread_text="mean ± sd" ;;
  se) spread_text="mean ± standard error" ;;
  ci95) spread_text="mean and 95% confidence interval (t)" ;;
  minmax) spread_text="mean and min..max" ;;
esac

# awk prelude: CSV fields (RFC 4180) into f[1..n]; the labels of grid
# points; Student's t quantile; the band of the chosen spread.
AWK_LIB='
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
function shortval(v) {
  if (v !~ /^\{/) return v
  gsub(/[{}" ]/, "", v); gsub(/(^|,)name:/, ",", v); sub(/^,/, "", v); gsub(/,/, " ", v)
  return v
}
function loadlabels(file,    line, p) {
  while ((getline line < file) > 0) {
    p = index(line, "="); if (!p) continue
    LABEL_OF[substr(line, 1, p - 1)] = substr(line, p + 1); LABEL_HAS[substr(line, 1, p - 1)] = 1
  }
  close(file)
}
# the label of a row f[] whose parameters are columns 2 .. rep-1 of header h[]
function rowlabel(f, h, rep,    i, s, nm) {
  if (rep == 2) return "run"
  s = ""
  for (i = 2; i < rep; i++) {
    nm = (h[i] in LABEL_HAS) ? LABEL_OF[h[i]] : h[i]
    s = s (s == "" ? "" : ", ") (nm == "" ? "" : nm "=") shortval(f[i])
  }
  return s
}
# P(|T| < t) for Student t with nu (whole) degrees of freedom, closed form
function tabs(t, nu,    th, c, s, sum, term, k) {
  th = atan2(t, sqrt(nu)); c = cos(th); s = sin(th); sum = 1; term = 1
  if (nu % 2 == 1) {
    for (k = 3; k <= nu - 2; k += 2) { term *= (k - 1) / k * c * c; sum += term }
    return 2 * (th + (nu > 1 ? s * c * sum : 0)) / atan2(0, -1)
  }
  for (k = 2; k <= nu - 2; k += 2) { term *= (k - 1) / k * c * c; sum += term }
  return s * sum
}
# t(0.975; nu): the half-width factor of a 95% interval, by bisection
function tq975(nu,    lo, hi, mid, i) {
  if (nu in tqcache) return tqcache[nu]
  lo = 0; hi = 1000
  for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    mid = (lo + hi) / 2
    if (tabs(mid, nu) < 0.95) lo = mid; else hi = mid
  }
  return tqcache[nu] = (lo + hi) / 2
}
# band(x[1..n]) -> B[1] low, B[2] high ("NaN" when it does not exist) and
# the mean in B[0]
function band(x, n, B,    i, s, ss, m, lo, hi, d, h) {
  if (n == 0) { B[0] = B[1] = B[2] = "NaN"; return }
  s = 0; lo = x[1]; hi = x[1]
  for (i = 1; i <= n; i++) { s += x[i]; if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i] }
  m = s / n; B[0] = m
  if (spread == "minmax") { B[1] = lo; B[2] = hi; return }
  if (n < 2) { B[1] = B[2] = "NaN"; return }
  ss = 0
  for (i = 1; i <= n; i++) { d = x[i] - m; ss += d * d }
  h = sqrt(ss / (n - 1))
  if (spread == "se") h /= sqrt(n)
  if (spread == "ci95") h = tq975(n - 1) * h / sqrt(n)
  B[1] = m - h; B[2] = m + h
}
function g10(v) { return v == "NaN" ? "NaN" : sprintf("%.10g", v) }
'

# aggregate SWEEP.CSV TMP: TMP/curves.dat (one block per grid point, in
# order of first appearance: time_s, then mean, band low, band high of
# train_loss, test_loss, test_accuracy, consensus_distance, then the
# replicates still running), TMP/stops.dat (per grid point: time_s and the
# four means where a replicate stopped) and TMP/groups.tsv (label,
# replicates, first run, last time).
aggregate() {
  awk -v spread="$spread" -v TMPD="$2" "$AWK_LIB"'
  BEGIN { loadlabels(TMPD "/labels.map") }
  NR == 1 {
    n = csvsplit($0, h)
    for (i = 1; i <= n; i++) col[h[i]] = i
    rep = col["replicate"]
    nc = split("train_loss test_loss test_accuracy consensus_distance", want, " ")
    next
  }
  {
    csvsplit($0, f)
    key = ""
    for (i = 2; i < rep; i++) key = key SUBSEP f[i]
    if (!(key in gid)) { gid[key] = ng++; glab[ng - 1] = rowlabel(f, h, rep); grun[ng - 1] = f[1] }
    g = gid[key]
    sk = g SUBSEP f[rep]
    if (!(sk in sid)) { sid[sk] = ns; sg[ns] = g; gs[g, ++gn[g]] = ns; ns++ }
    s = sid[sk]; k = ++N[s]
    T[s, k] = f[col["time_s"]] + 0
    for (c = 1; c <= nc; c++) { v = f[col[want[c]]]; V[s, k, c] = isnum(v) ? v + 0 : "" }
  }
  END {
    out = TMPD "/curves.dat"; stops = TMPD "/stops.dat"; gt = TMPD "/groups.tsv"
    for (g = 0; g < ng; g++) {
      # the union of the replicates evaluation instants, merged in order
      nu = 0
      for (a = 1; a <= gn[g]; a++) {
        s = gs[g, a]; i = 1; j = 1; m = 0
        while (i <= nu || j <= N[s]) {
          if (j > N[s] || (i <= nu && U[i] < T[s, j])) x = U[i++]
          else if (i > nu || T[s, j] < U[i]) x = T[s, j++]
          else { x = U[i++]; j++ }
          W[++m] = x
        }
        for (i = 1; i <= m; i++) U[i] = W[i]
        nu = m
      }
      gmax = U[nu]
      if (g) { printf "\n\n" > out; printf "\n\n" > stops }
      nstop = 0
      for (a = 1; a <= gn[g]; a++) pos[gs[g, a]] = 1
      for (u = 1; u <= nu; u++) {
        t = U[u]; alive = 0; stopped = 0
        for (c = 1; c <= nc; c++) cnt[c] = 0
        for (a = 1; a <= gn[g]; a++) {
          s = gs[g, a]; L = T[s, N[s]]
          if (t < T[s, 1]) continue
          if (t <= L) alive++
          if (t == L && L < gmax) stopped = 1
          while (pos[s] < N[s] && T[s, pos[s] + 1] <= t) pos[s]++
          p = pos[s]
          for (c = 1; c <= nc; c++) {
            if (t >= L) v = V[s, N[s], c]              # carried after its end
            else if (T[s, p] == t) v = V[s, p, c]
            else if (V[s, p, c] == "" || V[s, p + 1, c] == "") v = ""
            else v = V[s, p, c] + (V[s, p + 1, c] - V[s, p, c]) * (t - T[s, p]) / (T[s, p + 1] - T[s, p])
            if (v != "") X[c, ++cnt[c]] = v
          }
        }
        printf "%.10g", t > out
        for (c = 1; c <= nc; c++) {
          delete xs
          for (i = 1; i <= cnt[c]; i++) xs[i] = X[c, i]
          band(xs, cnt[c], B)
          M[c] = B[0]
          # the floor of a log axis: the smallest positive mean or band edge
          fc = c == 4 ? 2 : 1
          if (c != 3) for (i = 0; i <= 1; i++)
            if (B[i] != "NaN" && B[i] > 0 && (!(fc in fl) || B[i] < fl[fc])) fl[fc] = B[i]
          printf " %s %s %s", g10(B[0]), g10(B[1]), g10(B[2]) > out
        }
        printf " %d\n", alive > out
        if (stopped) {
          printf "%.10g %s %s %s %s\n", t, g10(M[1]), g10(M[2]), g10(M[3]), g10(M[4]) > stops
          nstop++; anystop = 1
        }
      }
      if (!nstop) print "NaN NaN NaN NaN NaN" > stops
      printf "%s\t%d\t%s\t%.10g\n", glab[g], gn[g], grun[g], gmax > gt
    }
    printf "%.10g %.10g\n", (1 in fl) ? fl[1] : 1, (2 in fl) ? fl[2] : 1 > (TMPD "/floors")
    if (!anystop) printf "" > (TMPD "/nostops")
  }' "$1"
}

# TEXT as a gnuplot string literal, its lines cut at spaces to at most 60
# characters (gnuplot does not wrap titles; 60 fit the PDF's 6 in at 9 pt)
gps() {
  printf '"'
  printf '%s\n' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | fold -s -w 60 | sed 's/ *$//' |
    awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }'
  printf '"'
}

# gnuplot string literal
q() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

# emit NAME BODYFILE: writes $out/NAME.gp (PNG and PDF from the same body)
# and the data it reads, draws it in a hidden folder of $out and moves the
# figures in place when both are complete.
emit() {
  fig=$1 body=$2
  {
    printf '%s\n' "# $fig of $dir, drawn by plots/plot.sh (--spread $spread); run in this folder: gnuplot $fig.gp"
    echo "do for [fmt in \"png pdf\"] {"
    printf '%s\n' "  if (fmt eq \"png\") { set terminal pngcairo size 960,640 font ',11' noenhanced; set output '$fig.png' }"
    printf '%s\n' "  if (fmt eq \"pdf\") { set terminal pdfcairo size 6in,4in font ',9' noenhanced; set output '$fig.pdf' }"
    echo "  reset; small = (fmt eq \"png\" ? \",9\" : \",7\")"
    sed 's/^/  /' "$body"
    echo "  unset output"
    echo "}"
  } > "$work/$fig.gp"
  (cd "$work" && gnuplot "$fig.gp") || { echo "plot.sh: error: $dir: gnuplot failed on $fig" >&2; exit 1; }
  rm -f "$out/$fig-stops.dat"
  for f in "$work/$fig".* "$work/$fig"-*; do if [ -e "$f" ]; then mv -f "$f" "$out/"; fi; done
  drawn="$drawn $fig"
  say "wrote $out/$fig.png, $fig.pdf"
}

# the title's second part: n and the targets
describe() {   # describe SUMMARY.CSV GROUPS.TSV
  n=$(awk -F'\t' 'NR == 1 || $2 < lo { lo = $2 } NR == 1 || $2 > hi { hi = $2 }
                  END { print (lo == hi ? "n = " lo : "n = " lo "-" hi) }' "$2")
  tg=""
  if [ -f "$1" ]; then
    tg=$(awk "$AWK_LIB"'
    NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    { csvsplit($0, f)
      for (w = 1; w <= 2; w++) {
        m = w == 1 ? "loss" : "accuracy"; c = col["target_" m]
        if (c && isnum(f[c]) && !((m, f[c]) in seen)) { seen[m, f[c]] = 1; s = s (s == "" ? "" : ", ") (m == "loss" ? "train loss " : "test accuracy ") f[c] }
      }
      for (k = 1; ("target_" k "_metric") in col; k++) {
        a = f[col["target_" k "_metric"]]; b = f[col["target_" k "_value"]]
        if (!((a, b) in seen)) { seen[a, b] = 1; s = s (s == "" ? "" : ", ") a " " b }
      } }
    END { if (s != "") print "target " s }' "$1")
  fi
  echo "$n replicates${tg:+; $tg}"
}

# convergence and consensus figures of the aggregated $tmp/*.dat
draw_curves() {
  title=$1 sumfile=$2
  ng=$(wc -l < "$tmp/groups.tsv")
  cp "$tmp/curves.dat" "$work/convergence.dat"
  [ -f "$tmp/nostops" ] || cp "$tmp/stops.dat" "$work/convergence-stops.dat"
  hasband=$(awk '!/^$/ && $3 != "NaN" { print 1; exit }' "$tmp/curves.dat")
  # a band reaching 0 or below on a log axis is drawn down to the axis
  # floor (the smallest positive mean or band edge), not cut out
  read -r lfloor cfloor < "$tmp/floors"
  # few evaluations (a run stopped early): points too, or a line of one
  # point would not show
  lw=$(awk '/^$/ { next } { n++ } END { print (n < 8 * grp ? "linespoints pt 7 ps 0.5" : "lines") }' \
    grp="$(wc -l < "$tmp/groups.tsv")" "$tmp/curves.dat")
  stops=1; [ -f "$tmp/nostops" ] && stops=0
  sub=$(describe "$sumfile" "$tmp/groups.tsv")
  [ "$ng" -eq 1 ] && [ ! -f "$sumfile" ] && sub="one run"
  note=""
  [ $stops = 1 ] && note="$nl""o: a replicate stopped (its last value counts from then on)"
  body=$tmp/conv.gp
  {
    if [ -f "$sumfile" ]; then
      printf '%s\n' "set multiplot layout 1,2 title $(gps "$title: $spread_text, $sub$note")"
    else
      printf '%s\n' "set multiplot layout 1,2 title $(gps "$title: $sub")"
    fi
    # the key below both panels, in one or two columns, with the room it needs
    entries=$((ng + stops))
    cols=$(awk -F'\t' 'length($1) > m { m = length($1) } END { print (m > 40 ? 1 : 2) }' "$tmp/groups.tsv")
    rows=$(( (entries + cols - 1) / cols ))
    echo "set grid; set xlabel 'simulated time (s)'; set key off; set bmargin $((rows + 4))"
    echo "set logscale y; set ylabel 'loss (train solid, test dashed)'"
    printf 'plot '
    i=0
    while IFS="	" read -r lab nrep first tmax; do
      [ $i -gt 0 ] && printf ', '
      [ -n "$hasband" ] && printf "'convergence.dat' index %d using 1:(\$3 > 0 ? \$3 : $lfloor):4 with filledcurves fs transparent solid 0.2 noborder lc %d notitle, " $i $((i + 1))
      printf "'convergence.dat' index %d using 1:2 with $lw lw 2 lc %d notitle, " $i $((i + 1))
      printf "'' index %d using 1:5 with $lw lw 1 dt 2 lc %d notitle" $i $((i + 1))
      [ $stops = 1 ] && printf ", 'convergence-stops.dat' index %d using 1:2 with points pt 6 ps 1 lc %d notitle" $i $((i + 1))
      i=$((i + 1))
    done < "$tmp/groups.tsv"
    echo
    echo "unset logscale y; set ylabel 'test accuracy'"
    echo "set key at screen 0.5, screen 0.01 center bottom horizontal maxcols $cols maxrows $rows font small"
    printf 'plot '
    i=0
    while IFS="	" read -r lab nrep first tmax; do
      [ $i -gt 0 ] && printf ', '
      [ -n "$hasband" ] && printf "'convergence.dat' index %d using 1:(\$9 < 0 ? 0 : \$9):(\$10 > 1 ? 1 : \$10) with filledcurves fs transparent solid 0.2 noborder lc %d notitle, " $i $((i + 1))
      printf "'convergence.dat' index %d using 1:8 with $lw lw 2 lc %d title %s" $i $((i + 1)) "$(q "$lab")"
      [ $stops = 1 ] && printf ", 'convergence-stops.dat' index %d using 1:4 with points pt 6 ps 1 lc %d notitle" $i $((i + 1))
      i=$((i + 1))
    done < "$tmp/groups.tsv"
    [ $stops = 1 ] && printf ", NaN with points pt 6 ps 1 lc black title 'a replicate stopped'"
    echo
    echo "unset multiplot"
  } > "$body"
  emit convergence "$body"

  # consensus: the grid points whose protocol has a meaningful one
  : > "$tmp/cons.ok"; left1="" left0=""
  i=0
  while IFS="	" read -r lab nrep first tmax; do
    rj=$dir/run.json
    if [ -f "$dir/runs.csv" ]; then
      rn=$(awk -F, -v r="$first" 'NR > 1 && $1 == r { print $2; exit }' "$dir/runs.csv")
      rj=$dir/runs/$rn/run.json
    fi
    if [ -f "$rj" ] && grep -q '"consensus_meaningful": *false' "$rj"; then
      left1="$left1${left1:+, }$lab"
    elif awk -v g=$i 'BEGIN { b = 0 } /^$/ { if (++e == 2) { b++; e = 0 }; next } { e = 0 }
                      b == g && $11 != "NaN" && $11 > 0 { found = 1; exit } END { exit !found }' "$tmp/curves.dat"; then
      echo $i >> "$tmp/cons.ok"
    else
      left0="$left0${left0:+, }$lab"
    fi
    i=$((i + 1))
  done < "$tmp/groups.tsv"
  left=""
  [ -n "$left1" ] && left="$left1 (one model by construction, or the server model evaluated)"
  [ -n "$left0" ] && left="$left${left:+; }$left0 (0 throughout)"
  if [ ! -s "$tmp/cons.ok" ]; then
    say "$dir: no consensus figure: left out $left"
    return 0
  fi
  [ -n "$left" ] && say "$dir: consensus figure: left out $left"
  cp "$tmp/curves.dat" "$work/consensus.dat"
  [ -f "$tmp/nostops" ] || cp "$tmp/stops.dat" "$work/consensus-stops.dat"
  body=$tmp/cons.gp
  {
    t2="$title: consensus distance"
    [ -f "$sumfile" ] && t2="$t2, $spread_text, $sub"
    [ -n "$left" ] && t2="$t2${nl}left out: $left"
    printf '%s\n' "set title $(gps "$t2")"
    echo "set grid; set key top right opaque box font small; set xlabel 'simulated time (s)'"
    echo "set ylabel 'consensus distance'"
    echo "set logscale y"
    printf 'plot '
    k=0
    while read -r i; do
      lab=$(sed -n "$((i + 1))p" "$tmp/groups.tsv" | cut -f1)
      [ $k -gt 0 ] && printf ', '
      # zero (identical models) has no place on a log scale
      [ -n "$hasband" ] && printf "'consensus.dat' index %d using 1:(\$12 > 0 ? \$12 : $cfloor):(\$13 > 0 ? \$13 : NaN) with filledcurves fs transparent solid 0.2 noborder lc %d notitle, " $i $((i + 1))
      printf "'consensus.dat' index %d using 1:(\$11 > 0 ? \$11 : NaN) with $lw lw 2 lc %d title %s" $i $((i + 1)) "$(q "$lab")"
      [ $stops = 1 ] && printf ", 'consensus-stops.dat' index %d using 1:(\$5 > 0 ? \$5 : NaN) with points pt 6 ps 1 lc %d notitle" $i $((i + 1))
      k=$((k + 1))
    done < "$tmp/cons.ok"
    echo
  } > "$body"
  emit consensus "$body"
}

# time-to-target bars from summary.csv
draw_targets() {
  sum=$1 title=$2
  for what in accuracy loss; do
    awk -v what="$what" -v spread="$spread" -v TMPD="$tmp" -v out="$tmp/ttt.dat" "$AWK_LIB"'
    BEGIN { loadlabels(TMPD "/labels.map") }
    NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; rep = col["replicate"]; next }
    {
      csvsplit($0, f)
      c = col["target_" what]
      if (!c || !isnum(f[c])) next
      if (!(("target " f[c]) in tv)) { tv["target " f[c]] = 1; tvs = tvs (tvs == "" ? "" : ", ") f[c] }
      key = ""
      for (i = 2; i < rep; i++) key = key SUBSEP f[i]
      if (!(key in gid)) { gid[key] = ng++; glab[ng - 1] = rowlabel(f, h, rep) }
      g = gid[key]; v = f[col["time_to_target_" what "_s"]]
      runs[g]++
      if (!isnum(v)) { miss[g]++; next }
      x[g, ++m[g]] = v + 0
    }
    END {
      for (g = 0; g < ng; g++) {
        lab = glab[g]
        if (miss[g]) lab = lab sprintf(" (%d/%d never)", miss[g], runs[g])
        delete xs
        for (i = 1; i <= m[g]; i++) xs[i] = x[g, i]
        band(xs, m[g] + 0, B)
        printf "%d\t%s\t%s\t%s\t%d\t%d\t%s\n", g, g10(B[0]), g10(B[1]), g10(B[2]), m[g], runs[g], lab > out
      }
      if (ng) print tvs > (TMPD "/ttt.values")
      exit !ng
    }' "$sum" || {
      say "$dir: no stop.target_$what set: no time_to_target_$what figure"
      continue
    }
    awk -F'\t' '$2 != "NaN" { found = 1 } END { exit !found }' "$tmp/ttt.dat" || {
      say "$dir: no run reached the target $what: no time_to_target_$what figure"
      continue
    }
    ng=$(wc -l < "$tmp/ttt.dat")
    metric="test accuracy"; [ $what = loss ] && metric="train loss"
    cp "$tmp/ttt.dat" "$work/time_to_target_$what.dat"
    sub=$(describe "$sum" "$tmp/groups.tsv" | sed 's/;.*//')
    body=$tmp/ttt.gp
    {
      # the title centred on the page, not on the plot the long labels push right
      tt=$(gps "$title: simulated time to $metric $(cat "$tmp/ttt.values"), $spread_text, $sub")
      printf '%s\n' "set label 1 $tt at screen 0.5, screen 1 offset 0, -1.2 center"
      printf '%s\n' "set tmargin $(( $(printf '%s' "$tt" | grep -o '\\n' | wc -l) + 3 ))"
      printf '%s\n' "set datafile separator \"\\t\""
      printf '%s\n' "set grid x; set xlabel 'simulated time to $metric $(cat "$tmp/ttt.values") (s)'; set xrange [0:*]"
      printf '%s\n' "set yrange [$ng - 0.5:-0.5]; set ytics scale 0; set key off; set offsets 0, graph 0.05, 0, 0"
      echo "set style fill solid 0.5 border -1"
      echo "plot 'time_to_target_$what.dat' using (\$2 / 2):1:(0):2:(\$1 - 0.3):(\$1 + 0.3):(\$1 + 1):ytic(7) with boxxyerror lc variable, \\"
      echo "     '' using 2:1:3:4 with xerrorbars lc black pt 7 ps 0.6"
    } > "$body"
    emit "time_to_target_$what" "$body"
  done
}

# per-node timeline from trace.csv (node, kind, start_s, end_s, ...)
draw_timeline() {
  trace=$1 title=$2
  kinds=$(awk "$AWK_LIB"'NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    { csvsplit($0, f); k = f[col["kind"]]; if (!(k in seen)) { seen[k] = 1; print k } }' "$trace")
  [ -n "$kinds" ] || { say "$dir: trace.csv is empty: no timeline figure"; return 0; }
  awk "$AWK_LIB"'NR == 1 { n = csvsplit($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    { csvsplit($0, f); print f[col["node"]], f[col["start_s"]], f[col["end_s"]], f[col["kind"]] }' \
    "$trace" > "$work/timeline.dat"
  body=$tmp/tl.gp
  {
    printf '%s\n' "set title $(gps "$title: per-node timeline (blank: idle)")"
    echo "set xlabel 'simulated time (s)'; set ylabel 'node'; set yrange [*:*] reverse"
    echo "set offsets 0,0,0.5,0.5"
    awk '$1 > m { m = $1 } END { if (m < 32) print "set ytics 1" }' "$work/timeline.dat"
    echo "set key outside right noenhanced font small"
    printf 'plot '
    i=0
    echo "$kinds" | while IFS= read -r k; do
      [ $i -gt 0 ] && printf ', '
      printf "'timeline.dat' using 2:(strcol(4) eq %s ? \$1 : NaN):(\$3-\$2):(0) with vectors nohead lw 6 lc %d title %s" \
        "$(q "$k")" $((i + 1)) "$(q "$k")"
      i=$((i + 1))
    done
    echo
  } > "$body"
  emit timeline "$body"
}

# figures of an earlier drawing that this one did not draw (another
# target, no trace.csv any more) would be stale: remove them
prune() {
  for f in convergence consensus time_to_target_accuracy time_to_target_loss timeline; do
    case " $drawn " in *" $f "*) continue ;; esac
    rm -f "$out/$f.png" "$out/$f.pdf" "$out/$f.gp" "$out/$f.dat" "$out/$f-stops.dat"
  done
}

status=0
IFS_SAVE=$IFS
IFS=$nl
for dir in $dirs; do
  IFS=$IFS_SAVE
  dir=${dir%/}
  out=$dir/plots
  name=$(basename "$dir")
  if [ ! -f "$dir/sweep.csv" ] && [ ! -f "$dir/metrics.csv" ]; then
    echo "plot.sh: error: $dir: neither sweep.csv nor metrics.csv" >&2
    status=1
    continue
  fi
  mkdir -p "$out"
  tmp=$(mktemp -d)
  work=$(mktemp -d "$out/.plot.XXXXXX")
  trap 'rm -rf "$tmp" "$work"' EXIT
  printf '%s' "$labels" > "$tmp/labels.map"
  drawn=""
  if [ -f "$dir/sweep.csv" ]; then
    aggregate "$dir/sweep.csv" "$tmp"
    draw_curves "$name" "$dir/summary.csv"
    draw_targets "$dir/summary.csv" "$name"
  else
    # a run is a sweep of one, its line named after its algorithm
    alg=$(sed -n 's/.*"algorithm":{[^}]*"name":"\([^"]*\)".*/\1/p' "$dir/run.json" 2>/dev/null | head -n 1)
    awk -v alg="${alg:-run}" 'NR == 1 { print "run,algorithm.name,replicate,seed," $0; next }
      { print "0," alg ",0,0," $0 }' "$dir/metrics.csv" > "$tmp/one.csv"
    aggregate "$tmp/one.csv" "$tmp"
    draw_curves "$name" "$tmp/no-summary"
    if [ -f "$dir/trace.csv" ]; then
      draw_timeline "$dir/trace.csv" "$name"
    else
      say "$dir: no trace.csv: no timeline figure"
    fi
  fi
  prune
  rm -rf "$tmp" "$work"
  IFS=$nl
done
IFS=$IFS_SAVE
exit $status
