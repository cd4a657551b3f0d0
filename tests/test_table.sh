#!/bin/sh
# test_table.sh DTSIM SOURCE_DIR -- `dtsim table` on hand-made summary.csv
# files whose statistics are computed by hand: the exact Markdown, CSV and
# LaTeX tables (means, sample standard deviations, standard errors, t-based
# 95% half-widths t(0.975; n-1) * sd / sqrt(n) with t = 4.302653 for 3
# replicates and 12.706205 for 2, min and max, the rounding of the mean to
# the spread's two significant digits, targets never reached left out and
# counted), speedups against a baseline (by protocol, and a grid cell
# named in two parameters), labels, the file written whole, and every
# refusal with exit status 2 and nothing written.  Also a real sweep: the
# table of the quickstart's steps_per_s equals steps / sim_time_s.
set -eu
dtsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_table: FAIL: $*" >&2; exit 1; }
same() {   # same WANT_FILE GOT_FILE WHAT
  cmp -s "$1" "$2" || { diff "$1" "$2" >&2 || true; fail "$3"; }
}

# dpsgd: time 1 2 3 (mean 2, sd 1, se 1/sqrt3 = 0.5773502692, ci95 4.302652730 *
# 0.5773502692 = 2.484137712), rate 100 110 120 (110, sd 10, ci95 24.84),
# accuracy 0.8 0.9 0.85 (0.85, sd 0.05).  allreduce: time 2 4 inf (2 of 3
# reached: mean 3, sd sqrt2 = 1.414213562, se 1, ci95 12.70620474), rate 50
# 50 50 (sd 0), accuracy 0.7 0.75 0.72 (0.7233, sd 0.02517).  Speedups over
# dpsgd: time 2/3 = 0.667, rate 50/110 = 0.455; accuracy ratio 0.7233/0.85 =
# 0.851.
mkdir "$tmp/s"
cat > "$tmp/s/summary.csv" <<'CSV'
run,algorithm.name,replicate,seed,git_commit,status,time_to_target_accuracy_s,steps_per_s,test_accuracy
0,dpsgd,0,7,abc,ok,1,100,0.8
1,dpsgd,1,8,abc,ok,2,110,0.9
2,dpsgd,2,9,abc,ok,3,120,0.85
3,allreduce,0,7,abc,ok,2,50,0.7
4,allreduce,1,8,abc,ok,4,50,0.75
5,allreduce,2,9,abc,ok,inf,50,0.72
CSV
m="time_to_target_accuracy_s steps_per_s test_accuracy"

"$dtsim" table "$tmp/s" $m --baseline protocol=dpsgd > "$tmp/got"
cat > "$tmp/want" <<'MD'
| algorithm.name | n | time_to_target_accuracy_s (mean ± sd) | steps_per_s (mean ± sd) | test_accuracy (mean ± sd) | speedup in time_to_target_accuracy_s vs algorithm.name=dpsgd | speedup in steps_per_s vs algorithm.name=dpsgd | ratio in test_accuracy vs algorithm.name=dpsgd |
|---|---:|---:|---:|---:|---:|---:|---:|
| dpsgd | 3 | 2.0 ± 1.0 | 110 ± 10 | 0.850 ± 0.050 | 1 | 1 | 1 |
| allreduce | 3 | 3.0 ± 1.4 (2/3) | 50 ± 0 | 0.723 ± 0.025 | 0.667 | 0.455 | 0.851 |
MD
same "$tmp/want" "$tmp/got" "markdown, sd, --baseline protocol=dpsgd"

"$dtsim" table "$tmp/s" $m --spread se --label algorithm.name=protocol > "$tmp/got"
cat > "$tmp/want" <<'MD'
| protocol | n | time_to_target_accuracy_s (mean ± se) | steps_per_s (mean ± se) | test_accuracy (mean ± se) |
|---|---:|---:|---:|---:|
| dpsgd | 3 | 2.00 ± 0.58 | 110.0 ± 5.8 | 0.850 ± 0.029 |
| allreduce | 3 | 3.0 ± 1.0 (2/3) | 50 ± 0 | 0.723 ± 0.015 |
MD
same "$tmp/want" "$tmp/got" "markdown, se, --label"

"$dtsim" table "$tmp/s" time_to_target_accuracy_s steps_per_s --spread ci95 --format latex > "$tmp/got"
cat > "$tmp/want" <<'TEX'
\begin{tabular}{lrrr}
\toprule
algorithm.name & $n$ & time\_to\_target\_accuracy\_s (mean $\pm$ 95\% CI) & steps\_per\_s (mean $\pm$ 95\% CI) \\
\midrule
dpsgd & 3 & $2.0 \pm 2.5$ & $110 \pm 25$ \\
allreduce & 3 & $3 \pm 13$ (2/3) & $50 \pm 0$ \\
\bottomrule
\end{tabular}
TEX
same "$tmp/want" "$tmp/got" "latex, ci95"

"$dtsim" table "$tmp/s" time_to_target_accuracy_s steps_per_s --baseline algorithm.name=dpsgd \
  -o "$tmp/t.csv"
cat > "$tmp/want" <<'CSV'
algorithm.name,runs,time_to_target_accuracy_s_mean,time_to_target_accuracy_s_sd,time_to_target_accuracy_s_se,time_to_target_accuracy_s_ci95,time_to_target_accuracy_s_min,time_to_target_accuracy_s_max,time_to_target_accuracy_s_n,steps_per_s_mean,steps_per_s_sd,steps_per_s_se,steps_per_s_ci95,steps_per_s_min,steps_per_s_max,steps_per_s_n,time_to_target_accuracy_s_speedup,steps_per_s_speedup
dpsgd,3,2,1,0.5773502692,2.484137712,1,3,3,110,10,5.773502692,24.84137712,100,120,3,1,1
allreduce,3,3,1.414213562,1,12.70620474,2,4,2,50,0,0,0,50,50,3,0.6666666667,0.4545454545
CSV
same "$tmp/want" "$tmp/t.csv" "csv (format from -o FILE.csv)"
! ls -A "$tmp" | grep -q '^\.' || fail "a temporary file was left: $(ls -A "$tmp")"

# Two parameters; a swept JSON object shown short; a baseline per learning
# rate (the other parameters as in the row) and a baseline grid cell.
mkdir "$tmp/s2"
cat > "$tmp/s2/summary.csv" <<'CSV'
run,algorithm,algorithm.lr,replicate,seed,git_commit,status,time_to_target_loss_s
0,"{""name"":""ps_async""}",0.1,0,1,a,ok,2
1,"{""name"":""ps_async""}",0.1,1,7,a,ok,4
2,"{""name"":""ps_async""}",0.2,0,1,a,ok,1
3,"{""name"":""ps_async""}",0.2,1,7,a,ok,inf
4,"{""name"":""prague"",""groups"":""static""}",0.1,0,1,a,ok,8
5,"{""name"":""prague"",""groups"":""static""}",0.1,1,7,a,ok,6
6,"{""name"":""prague"",""groups"":""static""}",0.2,0,1,a,ok,inf
7,"{""name"":""prague"",""groups"":""static""}",0.2,1,7,a,ok,inf
CSV
"$dtsim" table "$tmp/s2" time_to_target_loss_s --baseline algorithm=ps_async > "$tmp/got"
cat > "$tmp/want" <<'MD'
| algorithm | algorithm.lr | n | time_to_target_loss_s (mean ± sd) | speedup in time_to_target_loss_s vs algorithm=ps_async |
|---|---|---:|---:|---:|
| ps_async | 0.1 | 2 | 3.0 ± 1.4 | 1 |
| ps_async | 0.2 | 2 | 1 (1/2) | 1 |
| prague groups:static | 0.1 | 2 | 7.0 ± 1.4 | 0.429 |
| prague groups:static | 0.2 | 2 | never (0/2) | – |
MD
same "$tmp/want" "$tmp/got" "baseline per learning rate"
"$dtsim" table "$tmp/s2" time_to_target_loss_s --baseline algorithm=ps_async --baseline algorithm.lr=0.1 \
  --spread minmax --format latex > "$tmp/got"
cat > "$tmp/want" <<'TEX'
\begin{tabular}{llrrr}
\toprule
algorithm & algorithm.lr & $n$ & time\_to\_target\_loss\_s (mean [min, max]) & speedup in time\_to\_target\_loss\_s vs algorithm=ps\_async, algorithm.lr=0.1 \\
\midrule
ps\_async & 0.1 & 2 & $3\ [2, 4]$ & $1$ \\
ps\_async & 0.2 & 2 & $1\ [1, 1]$ (1/2) & $3$ \\
prague groups:static & 0.1 & 2 & $7\ [6, 8]$ & $0.429$ \\
prague groups:static & 0.2 & 2 & never (0/2) & -- \\
\bottomrule
\end{tabular}
TEX
same "$tmp/want" "$tmp/got" "baseline grid cell, minmax, latex"

# Refusals: exit 2, the place named, nothing written.
refuse() {   # refuse PATTERN ARGS...
  pat=$1; shift
  st=0; "$dtsim" table "$@" > "$tmp/out" 2> "$tmp/err" || st=$?
  [ "$st" = 2 ] || fail "table $*: exit $st, not 2"
  grep -q -- "$pat" "$tmp/err" || { cat "$tmp/err" >&2; fail "table $*: no '$pat' in the message"; }
  [ ! -s "$tmp/out" ] || fail "table $*: wrote to stdout"
}
refuse "s/summary.csv:1: no metric column \"nosuch\" (expected one of: time_to_target_accuracy_s, steps_per_s, test_accuracy)" \
  "$tmp/s" nosuch
refuse 's/summary.csv:2: status: "ok" is not a number' "$tmp/s" status
refuse "$tmp: not a sweep folder (no summary.csv)" "$tmp" steps_per_s
refuse "$tmp/none: No such file or directory" "$tmp/none" steps_per_s
refuse "no grid point of $tmp/s/summary.csv has that value (algorithm.name: dpsgd allreduce)" \
  "$tmp/s" steps_per_s --baseline protocol=ps-sync
refuse "foo is not a swept parameter of $tmp/s/summary.csv (algorithm.name)" \
  "$tmp/s" steps_per_s --baseline foo=1
refuse "expected one of: sd, se, ci95, minmax" "$tmp/s" steps_per_s --spread iqr
refuse "expected one of: md, csv, latex" "$tmp/s" steps_per_s --format html
refuse "no metric given" "$tmp/s"
refuse "nosuch is not a swept parameter" "$tmp/s" steps_per_s --label nosuch=x
st=0; "$dtsim" table "$tmp/s" nosuch -o "$tmp/bad.md" 2> /dev/null || st=$?
[ "$st" = 2 ] && [ ! -e "$tmp/bad.md" ] || fail "a refused table wrote its file"
mkdir "$tmp/cut"; printf 'run,x,replicate,seed,m\n0,1,0,1,2\n1,1,1,2' > "$tmp/cut/summary.csv"
refuse "cut/summary.csv: last line is not terminated" "$tmp/cut" m
printf 'run,x,replicate,seed,m\n0,1,0,1,2\n1,1,1\n' > "$tmp/cut/summary.csv"
refuse "cut/summary.csv:3: 3 fields, the header has 5" "$tmp/cut" m

# A real sweep: steps_per_s of each run is steps / sim_time_s, and one
# replicate has sd "nan" in CSV.
"$dtsim" sweep "$src/scenarios/quickstart.json" --grid algorithm.name=dpsgd,allreduce \
  --set stop.time_s=0.5 -o "$tmp/q" --quiet -j 1
"$dtsim" table "$tmp/q" steps_per_s --format csv > "$tmp/got"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { printf "%s,1,%.10g,nan,nan,nan,%.10g,%.10g,1\n", $2, $(c["steps"]) / $(c["sim_time_s"]),
           $(c["steps"]) / $(c["sim_time_s"]), $(c["steps"]) / $(c["sim_time_s"]) }' \
  "$tmp/q/summary.csv" > "$tmp/want.body"
tail -n +2 "$tmp/got" | cmp -s "$tmp/want.body" - || { cat "$tmp/got" "$tmp/want.body" >&2; fail "real sweep"; }
echo "test_table: ok"
