#!/bin/sh
# test_cli3.sh -- the rest of issue 16's command line: progress where there
# is no terminal (--progress each: a line per evaluation or finished run,
# pinned by pattern, never on stdout or in a file; no wall time decides
# anything here), --quiet taken by every subcommand, a run folder holding a
# previous run refused without --force, sweeps that skip bad grid points
# (--keep-going), grow without rerunning what they have (tables the same
# bytes as a sweep of the larger grid from scratch) and refuse a folder of
# another binary without --force, and the timing-only model profiles.
#
#   tests/test_cli3.sh DTSIM SOURCE_DIR
set -u
dtsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "test_cli3: FAIL: $*" >&2; fails=$((fails + 1)); }
Q=$src/scenarios/quickstart.json

# expect RC CMD...: runs CMD with stdout in $tmp/out, stderr in $tmp/err
expect() {
  want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" = "$want" ] || fail "$* exited $got, expected $want: $(head -c 300 "$tmp/err")"
}
same() {  # same FILE WANT-FILE what
  cmp -s "$1" "$2" || { fail "$3 differs:"; diff "$2" "$1" | head -20 >&2; }
}
empty() { [ ! -s "$1" ] || fail "$2: not empty: $(head -c 300 "$1")"; }

# ---- progress: a line per evaluation, on stderr only -------------------------
expect 0 "$dtsim" run "$Q" --set stop.time_s=1 -o "$tmp/p" --quiet --progress each
empty "$tmp/out" "run --quiet --progress each stdout"
# five evaluations (0, 0.25, ..., 1 s): five lines, in order, with the share
# of stop.time_s, the evaluation's accuracy and loss, elapsed and left
grep -c '' "$tmp/err" | grep -qx 5 || fail "progress each: $(grep -c '' "$tmp/err") lines, not 5"
n=0
for t in 0 0.25 0.5 0.75 1; do
  n=$((n + 1))
  pct=$(awk -v t="$t" 'BEGIN { printf "%.0f", 100 * t }')
  acc=$(awk -F, -v t="$t" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["time_s"] == t { printf "%.4f", $c["test_accuracy"] }' "$tmp/p/metrics.csv")
  sed -n "${n}p" "$tmp/err" | grep -Eqx "run: t=$t s simulated \\($pct%\\), test accuracy $acc, train loss [0-9.e+-]+(, [0-9.e+-]+ M events/s)?, [0-9hms]+ elapsed, ~([0-9hms]+|\\?) left" \
    || fail "progress line $n: $(sed -n "${n}p" "$tmp/err") (want t=$t, $pct%, accuracy $acc)"
done
# stop.steps: the share is of the steps
# (stop.time_s 10 s stays: the steps are the further along)
expect 0 "$dtsim" run "$Q" --set stop.steps=20 --set metrics.every_s=1000 -o "$tmp/p2" \
  --quiet --progress each
tail -n 1 "$tmp/err" | grep -Eq '^run: t=[0-9.e+-]+ s simulated \(100%\), test accuracy ' \
  || fail "progress of stop.steps: $(cat "$tmp/err")"
# the progress goes into no file
grep -rl "simulated" "$tmp/p" "$tmp/p2" && fail "a progress line in an output file"
# --progress 0 and --quiet: nothing; progress never replaces the summary on stdout
expect 0 "$dtsim" run "$Q" --set stop.time_s=0.5 -o "$tmp/p3" --progress 0
empty "$tmp/err" "--progress 0 stderr"
grep -q "^  stopped by time at t=0.5 s simulated" "$tmp/out" || fail "summary: $(cat "$tmp/out")"
grep -q "simulated (" "$tmp/out" && fail "a progress line on stdout"
for bad in -1 x 1e999 ""; do
  expect 2 "$dtsim" run "$Q" --progress "$bad"
  head -n 1 "$tmp/err" | grep -qx "dtsim run: error: --progress needs SECONDS >= 0 or \"each\"" \
    || fail "--progress '$bad': $(cat "$tmp/err")"
done
# a sweep: a line at the start and one per finished run, done/total and left
expect 0 "$dtsim" sweep "$Q" --grid algorithm.lr=0.1,0.2,0.3 --set stop.time_s=0.25 -j 1 \
  -o "$tmp/ps" --quiet --progress each
empty "$tmp/out" "sweep --progress each stdout"
for k in 0 1 2 3; do
  sed -n "$((k + 1))p" "$tmp/err" | grep -Eqx "sweep: $k/3 runs done, 0 running, [0-9hms]+ elapsed, ~([0-9hms]+|\\?) left" \
    || fail "sweep progress line $((k + 1)): $(sed -n "$((k + 1))p" "$tmp/err")"
done
grep -c '' "$tmp/err" | grep -qx 4 || fail "sweep progress: $(cat "$tmp/err")"
grep -rl "runs done" "$tmp/ps" && fail "a sweep progress line in an output file"
expect 2 "$dtsim" sweep "$Q" --progress -3 -o "$tmp/never"

# ---- --quiet by every subcommand ----------------------------------------------
"$dtsim" run "$Q" --set stop.time_s=0.3 -o "$tmp/q1" --quiet || fail "run --quiet"
"$dtsim" sweep "$Q" --grid algorithm.lr=0.1 --set stop.time_s=0.3 -o "$tmp/qs" --quiet \
  || fail "sweep --quiet"
for c in $("$dtsim" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
  # taken everywhere: never an unknown option, and listed by --help
  "$dtsim" "$c" --quiet >"$tmp/out" 2>"$tmp/err"
  grep -q "unknown option '--quiet'" "$tmp/err" && fail "$c refuses --quiet"
  "$dtsim" help "$c" | grep -q '^  --quiet ' || fail "dtsim help $c does not describe --quiet"
  # a use of each: what the command is for still comes, the chatter does not
  case $c in
    run) expect 0 "$dtsim" run "$Q" --set stop.time_s=0.3 -o "$tmp/q2" --quiet
         empty "$tmp/out" "run --quiet"; empty "$tmp/err" "run --quiet stderr" ;;
    validate) expect 0 "$dtsim" validate "$Q" --quiet; empty "$tmp/out" "validate --quiet" ;;
    resolve) "$dtsim" resolve "$Q" >"$tmp/want"
             expect 0 "$dtsim" resolve --quiet "$Q"; same "$tmp/out" "$tmp/want" "resolve --quiet" ;;
    topo) expect 0 "$dtsim" topo "$Q" -o "$tmp/g.csv" --quiet; empty "$tmp/out" "topo -o --quiet"
          [ -s "$tmp/g.csv" ] || fail "topo -o --quiet wrote no graph" ;;
    sweep) expect 0 "$dtsim" sweep "$Q" --grid algorithm.lr=0.1 --set stop.time_s=0.3 \
             -o "$tmp/qs" --quiet
           empty "$tmp/out" "sweep --quiet"; empty "$tmp/err" "sweep --quiet stderr" ;;
    merge) expect 0 "$dtsim" merge "$tmp/qs" --quiet; empty "$tmp/out" "merge --quiet" ;;
    plot) if command -v gnuplot >/dev/null 2>&1; then
            DTSIM_PLOTS=$src/plots expect 0 "$dtsim" plot --quiet "$tmp/q1"
            empty "$tmp/out" "plot --quiet"
            [ -s "$tmp/q1/plots/loss.png" ] || ls "$tmp/q1/plots" | grep -q png \
              || fail "plot --quiet drew nothing"
          fi ;;
    list|keys|explain|help)
      case $c in list) a=protocols ;; keys) a=network.retransmit ;;
                 explain) a=algorithm.hop ;; help) a=run ;; esac
      "$dtsim" "$c" "$a" >"$tmp/want"
      expect 0 "$dtsim" "$c" --quiet "$a"; same "$tmp/out" "$tmp/want" "$c --quiet"
      expect 0 "$dtsim" "$c" "$a" --quiet; same "$tmp/out" "$tmp/want" "$c $a --quiet" ;;
  esac
done

# ---- a run folder holding a previous run ----------------------------------------
expect 2 "$dtsim" run "$Q" --set stop.time_s=0.3 -o "$tmp/q1"
printf '%s\n' "$tmp/q1: error: holds a previous run (metrics.csv, nodes.csv, plots/, run.json); rerun with --force to replace it as a whole (no file of the old run is kept), or choose another -o" >"$tmp/want"
command -v gnuplot >/dev/null 2>&1 || sed -i 's|plots/, ||' "$tmp/want"
same "$tmp/err" "$tmp/want" "run into a previous run"
empty "$tmp/out" "refused run stdout"
expect 0 "$dtsim" run "$Q" --set stop.time_s=0.3 -o "$tmp/q1" --force --quiet
[ "$(ls -A "$tmp/q1" | tr '\n' ' ')" = "metrics.csv nodes.csv run.json " ] \
  || fail "after --force: $(ls -A "$tmp/q1")"

# ---- sweeps: --keep-going -------------------------------------------------------
expect 2 "$dtsim" sweep "$Q" --grid algorithm.lr=0.1,-1,0.2 --set stop.time_s=0.25 -o "$tmp/k0"
[ -e "$tmp/k0" ] && fail "a refused sweep wrote its folder"
expect 0 "$dtsim" sweep "$Q" --grid algorithm.lr=0.1,-1,0.2 --grid algorithm.batch=16,0 \
  --set stop.time_s=0.25 -o "$tmp/k" --keep-going -j 1 --progress 0
printf '%s\n' "$Q: /algorithm/batch: error: must be >= 1, got 0" \
  "dtsim sweep: note: at grid point --grid algorithm.lr=0.1, --grid algorithm.batch=0" \
  "dtsim sweep: note: --keep-going: this grid point is skipped" \
  "$Q: /algorithm/lr: error: must be >= 0, got -1" \
  "dtsim sweep: note: at grid point --grid algorithm.lr=-1, --grid algorithm.batch=16" \
  "dtsim sweep: note: --keep-going: this grid point is skipped" \
  "$Q: /algorithm/lr: error: must be >= 0, got -1" \
  "dtsim sweep: note: at grid point --grid algorithm.lr=-1, --grid algorithm.batch=0" \
  "dtsim sweep: note: --keep-going: this grid point is skipped" \
  "$Q: /algorithm/batch: error: must be >= 1, got 0" \
  "dtsim sweep: note: at grid point --grid algorithm.lr=0.2, --grid algorithm.batch=0" \
  "dtsim sweep: note: --keep-going: this grid point is skipped" \
  "dtsim sweep: note: --keep-going: 4 of 6 grid points skipped (listed in $tmp/k/sweep.json); 2 runs planned" \
  >"$tmp/want"
same "$tmp/err" "$tmp/want" "--keep-going stderr"
cut -d, -f1-3 "$tmp/k/summary.csv" >"$tmp/got"
printf '%s\n' "run,algorithm.lr,algorithm.batch" "0,0.1,16" "1,0.2,16" >"$tmp/want"
same "$tmp/got" "$tmp/want" "--keep-going summary.csv"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["skipped"]
assert [p["point"] for p in s] == [{"algorithm.lr":"0.1","algorithm.batch":"0"},
  {"algorithm.lr":"-1","algorithm.batch":"16"},{"algorithm.lr":"-1","algorithm.batch":"0"},
  {"algorithm.lr":"0.2","algorithm.batch":"0"}], s
assert s[1]["error"].endswith("/algorithm/lr: error: must be >= 0, got -1"), s
assert d["runs"] == 2' "$tmp/k/sweep.json" 2>"$tmp/py" || fail "sweep.json skipped: $(cat "$tmp/py")"
# every point bad: refused, nothing written
expect 2 "$dtsim" sweep "$Q" --grid algorithm.lr=-1,-2 -o "$tmp/k1" --keep-going
tail -n 1 "$tmp/err" | grep -qx "dtsim sweep: error: every grid point failed validation (2 of 2)" \
  || fail "--keep-going, every point bad: $(cat "$tmp/err")"
[ -e "$tmp/k1" ] && fail "a sweep of bad points only wrote its folder"

# ---- sweeps: extended without rerunning what they have --------------------------
S="$Q --set stop.time_s=0.5 -j 2"
# shellcheck disable=SC2086
"$dtsim" sweep $S --grid algorithm.name=dpsgd,allreduce -o "$tmp/x" --quiet || fail "sweep x"
cp -r "$tmp/x/runs" "$tmp/x-runs"
# more grid values (one before the others: every index moves) and more replicates
# shellcheck disable=SC2086
expect 0 "$dtsim" sweep $S --grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 2 -o "$tmp/x"
grep -qx "dtsim sweep: 6 runs (4 ran now, 2 were complete), wrote $tmp/x/sweep.csv and summary.csv" \
  "$tmp/out" || fail "extension: $(cat "$tmp/out" "$tmp/err")"
# the runs it had were not run again: the same files under their new names
same "$tmp/x/runs/002_name=dpsgd_r0/run.json" "$tmp/x-runs/000_name=dpsgd/run.json" "kept dpsgd run"
same "$tmp/x/runs/004_name=allreduce_r0/metrics.csv" "$tmp/x-runs/001_name=allreduce/metrics.csv" \
  "kept allreduce run"
ls -A "$tmp/x/runs" | tr '\n' ' ' >"$tmp/got"
printf '000_name=adpsgd_r0 001_name=adpsgd_r1 002_name=dpsgd_r0 003_name=dpsgd_r1 004_name=allreduce_r0 005_name=allreduce_r1 ' >"$tmp/want"
same "$tmp/got" "$tmp/want" "extended runs/"
# the tables are those of the larger sweep from scratch (summary.csv but its wall_s)
# shellcheck disable=SC2086
"$dtsim" sweep $S --grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 2 -o "$tmp/y" --quiet \
  || fail "sweep y"
for f in sweep.csv runs.csv sweep.json; do same "$tmp/x/$f" "$tmp/y/$f" "extended $f"; done
w=$(head -n 1 "$tmp/y/summary.csv" | tr , '\n' | grep -nx wall_s | cut -d: -f1)
cut -d, -f"1-$((w - 1)),$((w + 1))-" "$tmp/x/summary.csv" >"$tmp/sx"
cut -d, -f"1-$((w - 1)),$((w + 1))-" "$tmp/y/summary.csv" >"$tmp/sy"
same "$tmp/sx" "$tmp/sy" "extended summary.csv (wall_s aside)"
# the same command again: a resume, nothing to run
# shellcheck disable=SC2086
expect 0 "$dtsim" sweep $S --grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 2 -o "$tmp/x"
grep -q "(0 ran now, 6 were complete)" "$tmp/out" || fail "resume after extension: $(cat "$tmp/out")"
# a folder that would lose runs, or whose runs are other runs, is refused
for args in "--grid algorithm.name=dpsgd,allreduce --replicates 2" \
            "--grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 2 --set algorithm.lr=0.2"; do
  # shellcheck disable=SC2086
  expect 2 "$dtsim" sweep $S $args -o "$tmp/x"
  grep -Eqx "$tmp/x/sweep.json: error: $tmp/x holds a different sweep: its run runs/[0-9]{3}_name=[a-z]+_r[01] is not a run of this one \(a sweep folder grows by more --replicates or grid values, everything else the same\); choose another -o or remove it" \
    "$tmp/err" || fail "shrunk or changed sweep ($args): $(cat "$tmp/err")"
done
for f in sweep.csv runs.csv sweep.json; do same "$tmp/x/$f" "$tmp/y/$f" "refused sweeps left $f"; done

# ---- sweeps: another binary -----------------------------------------------------
commit=$(sed -n 's/^  "git_commit": "\(.*\)",$/\1/p' "$tmp/x/sweep.json")
sed -i 's/^  "git_commit": ".*",$/  "git_commit": "0123abc",/' "$tmp/x/sweep.json"
sed -i '0,/^  "git_commit": ".*",$/s//  "git_commit": "0123abc",/' "$tmp/x/runs/000_name=adpsgd_r0/run.json"
# shellcheck disable=SC2086
expect 2 "$dtsim" sweep $S --grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 2 -o "$tmp/x"
printf '%s
' "$tmp/x/sweep.json: error: $tmp/x was made by another dtsim binary (git_commit 0123abc, this one $commit): its runs may differ from what this binary computes; rerun with --force to go on with this one (each run's commit is kept in runs.csv), or use the binary that made it" >"$tmp/want"
same "$tmp/err" "$tmp/want" "another binary refused"
# forced: kept, and the tables name each run's commit
# shellcheck disable=SC2086
expect 0 "$dtsim" sweep $S --grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 2 -o "$tmp/x" \
  --force
grep -q "(0 ran now, 6 were complete)" "$tmp/out" || fail "forced resume: $(cat "$tmp/out")"
cut -d, -f1,5 "$tmp/x/summary.csv" | head -n 3 >"$tmp/got"
printf '%s
' "run,git_commit" "0,0123abc" "1,$commit" >"$tmp/want"
same "$tmp/got" "$tmp/want" "forced resume: each run's commit"
grep -q "^  \"git_commit\": \"$commit\",$" "$tmp/x/sweep.json" || fail "forced: sweep.json's commit"
# and without --force again: a run of another binary is named
# shellcheck disable=SC2086
expect 2 "$dtsim" sweep $S --grid algorithm.name=adpsgd,dpsgd,allreduce --replicates 3 -o "$tmp/x"
grep -qx "$tmp/x/runs/000_name=adpsgd_r0/run.json: error: made by another dtsim binary (git 0123abc, this one $commit); rerun with --force to keep it beside this binary's runs (runs.csv names each run's commit)" \
  "$tmp/err" || fail "a run of another binary: $(cat "$tmp/err")"

# ---- timing-only profiles --------------------------------------------------------
printf '%s\n' '{"nodes": 4, "topology": {"kind": "ring"}, "model": {"kind": "none", "profile": "resnet50"},' \
  ' "compute": {"flops_per_s": 1e13}, "algorithm": {"name": "dpsgd", "batch": 32}, "stop": {"steps": 3}}' \
  >"$tmp/prof.json"
expect 0 "$dtsim" run "$tmp/prof.json" -o "$tmp/prof"
# messages of 25557032 x 4 bytes; steps of 32 x 2.454e10 / 1e13 s
grep -q "timing only: messages of 1.02228e+08 bytes$" "$tmp/out" || fail "profile: $(cat "$tmp/out")"
awk -F, 'NR > 1 && $4 != 3 * 32 * 2.454e10 / 1e13 { exit 1 }' "$tmp/prof/nodes.csv" \
  || fail "profile step time: $(cat "$tmp/prof/nodes.csv")"
expect 2 "$dtsim" validate "$tmp/prof.json" --set model.profile=resnet101
printf '%s\n' "$tmp/prof.json: /model/profile: error: unknown profile \"resnet101\" (expected one of: resnet18, resnet50, vgg16, bert-base, gpt2-small)" \
  "dtsim validate: note: the value at /model/profile comes from --set model.profile=resnet101" >"$tmp/want"
same "$tmp/err" "$tmp/want" "unknown profile"
expect 2 "$dtsim" validate "$tmp/prof.json" --set model.params=1000
grep -qx "$tmp/prof.json: /model/profile: error: excludes \"params\": give one of message_bytes, params or profile" \
  "$tmp/err" || fail "profile with params: $(cat "$tmp/err")"
"$dtsim" list profiles | grep -q '^  gpt2-small ' || fail "list profiles: no gpt2-small"

[ $fails -eq 0 ] || { echo "test_cli3: $fails failures" >&2; exit 1; }
echo "test_cli3: ok"
