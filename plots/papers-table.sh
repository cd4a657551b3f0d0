#!/bin/sh
# papers-table.sh -- the tables of dtsim's literature replications: reads a
# sweep's summary.csv and writes, per grid point, the mean, standard
# deviation, minimum and maximum over replicates of chosen columns, and
# optionally paired ratios against a baseline grid point.
#
#   plots/papers-table.sh SWEEP_DIR [--ratio|--speedup PATH=VALUE] [--best PATH] [--tag T] METRIC...
#
# Writes SWEEP_DIR/table.tsv (numbers, for gnuplot: one line per grid point,
# the parameter columns first, then per metric `mean sd min max reached`,
# then per metric `ratio_mean ratio_min ratio_max`) and SWEEP_DIR/table.md
# (the same as a markdown table: "mean ± sd (min–max)"); with --tag T,
# table-T.tsv and table-T.md.
#
# - A metric value that is not a finite number (`inf`: a target never
#   reached) is left out of that metric's statistics and counted: the
#   markdown cell then says "k/n reached".
# - --ratio PATH=VALUE: for every run, each metric divided by the same
#   metric of the run of the same replicate at the grid point that differs
#   only in PATH=VALUE (paired: replicate r has the same seed at every grid
#   point).  E.g. --ratio compute.groups.0.slowdown=1 gives each protocol's
#   slowdown against its own homogeneous run.  --speedup is the inverse
#   ratio (the baseline's value divided by the run's): the speedup over the
#   baseline when the metric is a time.
# - --best PATH: of the grid points that differ only in PATH (e.g. the
#   learning rate), keep the one that reached the target most often, then
#   the one with the smallest mean of the first METRIC.
# - Parameter values that are JSON objects are shown without braces and
#   quotes, and without their "name" key: {"name":"prague","groups":"static"}
#   becomes `prague groups:static`.
# Only means, deviations, ranges and ratios of dtsim's numbers: no fitting.
set -eu

usage() {
  echo "usage: plots/papers-table.sh SWEEP_DIR [--ratio|--speedup PATH=VALUE] [--best PATH] [--tag T] METRIC..." >&2
  exit 2
}
[ $# -ge 2 ] || usage
dir=${1%/}; shift
ratio="" inv=0 best="" tag=table
while [ $# -gt 0 ]; do
  case $1 in
    --ratio) [ $# -ge 2 ] || usage; ratio=$2; shift 2 ;;
    --speedup) [ $# -ge 2 ] || usage; ratio=$2; inv=1; shift 2 ;;
    --best) [ $# -ge 2 ] || usage; best=$2; shift 2 ;;
    --tag) [ $# -ge 2 ] || usage; tag=table-$2; shift 2 ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
[ -f "$dir/summary.csv" ] || { echo "papers-table.sh: error: $dir/summary.csv: no such file" >&2; exit 1; }

awk -v metrics="$*" -v ratio="$ratio" -v inv="$inv" -v best="$best" \
    -v tsv="$dir/$tag.tsv" -v md="$dir/$tag.md" '
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
function finite(s) { return s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
function shortval(v) {
  if (v !~ /^\{/) return v
  gsub(/[{}" ]/, "", v); gsub(/(^|,)name:/, ",", v); sub(/^,/, "", v); gsub(/,/, " ", v)
  return v
}
function num(x) { return sprintf("%.4g", x) }
BEGIN {
  nm = split(metrics, met, " ")
  if (ratio != "") { rpath = ratio; sub(/=.*/, "", rpath); rval = substr(ratio, length(rpath) + 2) }
}
NR == 1 {
  n = csvsplit($0, h)
  for (i = 1; i <= n; i++) col[h[i]] = i
  rep = col["replicate"]
  np = rep - 2
  for (j = 1; j <= nm; j++)
    if (!(met[j] in col)) { print "papers-table.sh: error: no column " met[j] > "/dev/stderr"; bad = 1; exit 1 }
  rc = 0; bc = 0
  for (i = 2; i < rep; i++) { if (h[i] == rpath) rc = i; if (h[i] == best) bc = i }
  if (ratio != "" && !rc) { print "papers-table.sh: error: no swept parameter " rpath > "/dev/stderr"; bad = 1; exit 1 }
  if (best != "" && !bc) { print "papers-table.sh: error: no swept parameter " best > "/dev/stderr"; bad = 1; exit 1 }
  next
}
{
  csvsplit($0, f)
  key = ""; rkey = ""; bkey = ""
  for (i = 2; i < rep; i++) {
    key = key SUBSEP f[i]
    rkey = rkey SUBSEP (i == rc ? rval : f[i])
    bkey = bkey SUBSEP (i == bc ? "" : f[i])
  }
  if (!(key in gid)) {
    gid[key] = ng++
    for (i = 2; i < rep; i++) par[ng - 1, i] = f[i]
    gbk[ng - 1] = bkey
  }
  g = gid[key]; r = f[rep]
  runs[g]++; rrk[g, runs[g]] = rkey; rr[g, runs[g]] = r
  for (j = 1; j <= nm; j++) val[g, r, j] = f[col[met[j]]]
}
END {
  if (bad) exit 1
  for (g = 0; g < ng; g++) {
    for (j = 1; j <= nm; j++) {
      s = 0; ss = 0; m = 0; lo = ""; hi = ""
      rs = 0; rm = 0; rlo = ""; rhi = ""
      for (k = 1; k <= runs[g]; k++) {
        r = rr[g, k]; v = val[g, r, j]
        if (!finite(v)) continue
        v += 0; s += v; ss += v * v; m++
        if (lo == "" || v < lo) lo = v
        if (hi == "" || v > hi) hi = v
        if (ratio != "") {
          b = gid[rrk[g, k]]
          if (rrk[g, k] in gid && finite(val[b, r, j]) && val[b, r, j] + 0 != 0 && v != 0) {
            q = inv ? val[b, r, j] / v : v / val[b, r, j]; rs += q; rm++
            if (rlo == "" || q < rlo) rlo = q
            if (rhi == "" || q > rhi) rhi = q
          }
        }
      }
      M[g, j] = m
      mean[g, j] = m ? s / m : "nan"
      sd[g, j] = m > 1 ? sqrt((ss - s * s / m) / (m - 1) > 0 ? (ss - s * s / m) / (m - 1) : 0) : (m ? 0 : "nan")
      LO[g, j] = m ? lo : "nan"; HI[g, j] = m ? hi : "nan"
      RM[g, j] = rm ? rs / rm : "nan"; RLO[g, j] = rm ? rlo : "nan"; RHI[g, j] = rm ? rhi : "nan"
    }
    keep[g] = 1
  }
  if (best != "") {
    for (g = 0; g < ng; g++) {
      b = gbk[g]
      if (!(b in win)) { win[b] = g; continue }
      w = win[b]
      if (M[g, 1] > M[w, 1] || (M[g, 1] == M[w, 1] && M[g, 1] > 0 && mean[g, 1] < mean[w, 1])) win[b] = g
    }
    for (g = 0; g < ng; g++) keep[g] = (win[gbk[g]] == g)
  }
  # headers
  line = ""; mline = "|"; sep = "|"
  for (i = 2; i < rep; i++) {
    name = h[i]; sub(/.*[.\/]/, "", name)
    line = line (line == "" ? "" : "\t") name
    mline = mline " " name " |"; sep = sep "---|"
  }
  for (j = 1; j <= nm; j++) {
    line = line "\t" met[j] "_mean\t" met[j] "_sd\t" met[j] "_min\t" met[j] "_max\t" met[j] "_reached"
    mline = mline " " met[j] " |"; sep = sep "---:|"
  }
  if (ratio != "")
    for (j = 1; j <= nm; j++) {
      line = line "\t" met[j] "_ratio_mean\t" met[j] "_ratio_min\t" met[j] "_ratio_max"
      rname = rpath; sub(/.*[.\/]/, "", rname)
      mline = mline (inv ? " speedup in " met[j] " over " : " " met[j] " ÷ ") rname "=" shortval(rval) " |"; sep = sep "---:|"
    }
  print line > tsv
  print mline > md
  print sep > md
  for (g = 0; g < ng; g++) {
    if (!keep[g]) continue
    line = ""; mline = "|"
    for (i = 2; i < rep; i++) {
      v = shortval(par[g, i])
      line = line (line == "" ? "" : "\t") v
      mline = mline " " v " |"
    }
    for (j = 1; j <= nm; j++) {
      line = line "\t" mean[g, j] "\t" sd[g, j] "\t" LO[g, j] "\t" HI[g, j] "\t" M[g, j]
      if (M[g, j] == 0) cell = sprintf("never (0/%d)", runs[g])
      else {
        cell = num(mean[g, j]) " ± " sprintf("%.3g", sd[g, j]) " (" num(LO[g, j]) "–" num(HI[g, j]) ")"
        if (M[g, j] < runs[g]) cell = cell sprintf(", %d/%d reached", M[g, j], runs[g])
      }
      mline = mline " " cell " |"
    }
    if (ratio != "")
      for (j = 1; j <= nm; j++) {
        line = line "\t" RM[g, j] "\t" RLO[g, j] "\t" RHI[g, j]
        cell = RM[g, j] == "nan" ? "–" : num(RM[g, j]) " (" num(RLO[g, j]) "–" num(RHI[g, j]) ")"
        mline = mline " " cell " |"
      }
    print line > tsv
    print mline > md
  }
}' "$dir/summary.csv"
echo "papers-table.sh: wrote $dir/$tag.tsv, $dir/$tag.md"
