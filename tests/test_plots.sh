#!/bin/sh
# test_plots.sh DTSIM SOURCE_DIR -- plots/plot.sh on a small run and sweep:
# every standard figure appears as a real PNG and PDF, the figures that
# cannot be drawn are named as skipped, stale figures are removed, and a
# folder with no CSV is an error.  On a hand-made sweep, the data and
# gnuplot scripts the figures are drawn from hold hand-computed numbers:
# means over replicates with a stopped replicate's last value carried
# (and one interpolated between its evaluations), the bands of every
# --spread (sd, se, t-based 95% CI, min..max), the stop markers, the
# time-to-target bars; full-path and --label legends; the target and n in
# the titles; the consensus figure without the protocol whose run.json
# says "consensus_meaningful": false.  Exits 77 (skipped) when gnuplot is not installed: `make test`
# does not need it (scripts/install-deps --plots installs it).
set -eu
dtsim=$1 src=$2
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_plots: FAIL: $*" >&2; exit 1; }

"$dtsim" run "$src/scenarios/quickstart.json" --set stop.time_s=2 -o "$tmp/run" --quiet
"$dtsim" sweep "$src/scenarios/quickstart.json" --grid algorithm.name=dpsgd,allreduce \
  --replicates 2 --set stop.time_s=2 --set stop.target_accuracy=0.7 -o "$tmp/sweep" --quiet
printf 'node,kind,start_s,end_s,peer,bytes\n0,step,0,0.01,,\n1,send,0.01,0.02,0,272\n' \
  > "$tmp/run/trace.csv"
"$dtsim" plot "$tmp/run" "$tmp/sweep" > "$tmp/log"

for f in run/plots/convergence run/plots/consensus run/plots/timeline \
         sweep/plots/convergence sweep/plots/consensus sweep/plots/time_to_target_accuracy; do
  [ "$(head -c 8 "$tmp/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    || fail "$f.png is not a PNG"
  [ "$(head -c 5 "$tmp/$f.pdf")" = "%PDF-" ] || fail "$f.pdf is not a PDF"
done
grep -qx "plot.sh: $tmp/sweep: no stop.target_loss set: no time_to_target_loss figure" "$tmp/log" \
  || fail "no note for the missing loss target"
# the protocol registry (alg_type.one_model) through run.json
grep -qx "plot.sh: $tmp/sweep: consensus figure: left out algorithm.name=allreduce (one model by construction, or the server model evaluated)" \
  "$tmp/log" || fail "allreduce's consensus distance was not left out"
rm "$tmp/run/trace.csv"
"$dtsim" plot "$tmp/run" | grep -qx "plot.sh: $tmp/run: no trace.csv: no timeline figure" \
  || fail "no note for the missing trace.csv"
[ ! -e "$tmp/run/plots/timeline.png" ] && [ ! -e "$tmp/run/plots/timeline.gp" ] \
  || fail "the stale timeline figure was left"
! ls -A "$tmp/run/plots" | grep -q '^\.' || fail "a hidden work folder was left in plots/"
(cd "$tmp/run/plots" && rm convergence.png && gnuplot convergence.gp) && [ -s "$tmp/run/plots/convergence.png" ] \
  || fail "convergence.gp does not draw the figure again"

# ---- a hand-made sweep: exact numbers ------------------------------------------
# dpsgd: replicate 1 stops at t = 1 (accuracy 0.7) and counts with 0.7 at
# t = 2: mean (0.9 + 0.7) / 2 = 0.8, sd 0.1414213562.  allreduce:
# replicate 0 ends at 1.5 (off the grid: replicate 1 is interpolated there,
# (0.6 + 0.8) / 2 = 0.7, mean 0.65) and counts with 0.6 at t = 2.
s=$tmp/hand
mkdir -p "$s/runs/000_a" "$s/runs/002_b"
cat > "$s/sweep.csv" <<'CSV'
run,algorithm.name,replicate,seed,git_commit,time_s,steps,epochs,train_loss,test_loss,test_accuracy,consensus_distance,bytes_sent
0,dpsgd,0,1,x,0,0,0,1,1,0.1,0.01,0
0,dpsgd,0,1,x,1,10,1,0.5,0.5,0.5,0.02,10
0,dpsgd,0,1,x,2,20,2,0.25,0.25,0.9,0.03,20
1,dpsgd,1,2,x,0,0,0,1,1,0.3,0.03,0
1,dpsgd,1,2,x,1,10,1,0.5,0.5,0.7,0.04,10
2,allreduce,0,1,x,0,0,0,1,1,0.2,0,0
2,allreduce,0,1,x,1,10,1,0.5,0.5,0.4,0,10
2,allreduce,0,1,x,1.5,15,1.5,0.4,0.4,0.6,0,15
3,allreduce,1,2,x,0,0,0,1,1,0.2,0,0
3,allreduce,1,2,x,1,10,1,0.5,0.5,0.6,0,10
3,allreduce,1,2,x,2,20,2,0.25,0.25,0.8,0,20
CSV
cat > "$s/summary.csv" <<'CSV'
run,algorithm.name,replicate,seed,git_commit,status,stop_reason,target_loss,time_to_target_loss_s,target_accuracy,time_to_target_accuracy_s
0,dpsgd,0,1,x,ok,time,nan,nan,0.7,1.5
1,dpsgd,1,2,x,ok,target_accuracy,nan,nan,0.7,1
2,allreduce,0,1,x,ok,target_accuracy,nan,nan,0.7,1.25
3,allreduce,1,2,x,ok,time,nan,nan,0.7,inf
CSV
printf 'run,name,algorithm.name,replicate,seed,git_commit\n0,000_a,dpsgd,0,1,x\n1,001_a,dpsgd,1,2,x\n2,002_b,allreduce,0,1,x\n3,003_b,allreduce,1,2,x\n' > "$s/runs.csv"
printf '{\n  "consensus_meaningful": true\n}\n' > "$s/runs/000_a/run.json"
printf '{\n  "consensus_meaningful": false\n}\n' > "$s/runs/002_b/run.json"
"$dtsim" plot "$s" > "$tmp/log"
grep -qx "plot.sh: $s: consensus figure: left out algorithm.name=allreduce (one model by construction, or the server model evaluated)" \
  "$tmp/log" || fail "no note for the consensus figure's left-out protocol"
p=$s/plots
# time, accuracy mean, band low and high (sd), replicates still running
cut -d' ' -f1,8-10,14 "$p/convergence.dat" > "$tmp/got"
cat > "$tmp/want" <<'DAT'
0 0.2 0.05857864376 0.3414213562 2
1 0.6 0.4585786438 0.7414213562 2
2 0.8 0.6585786438 0.9414213562 1


0 0.2 0.2 0.2 2
1 0.5 0.3585786438 0.6414213562 2
1.5 0.65 0.5792893219 0.7207106781 2
2 0.7 0.5585786438 0.8414213562 1
DAT
cmp -s "$tmp/want" "$tmp/got" || { diff "$tmp/want" "$tmp/got" >&2; fail "convergence.dat (sd, carried, interpolated)"; }
printf '1 0.5 0.5 0.6 0.03\n\n\n1.5 0.3875 0.3875 0.65 0\n' > "$tmp/want"
cmp -s "$tmp/want" "$p/convergence-stops.dat" || { diff "$tmp/want" "$p/convergence-stops.dat" >&2; fail "stop markers"; }
printf '0\t1.25\t0.8964466094\t1.603553391\t2\t2\talgorithm.name=dpsgd\n1\t1.25\tNaN\tNaN\t1\t2\talgorithm.name=allreduce (1/2 never)\n' > "$tmp/want"
cmp -s "$tmp/want" "$p/time_to_target_accuracy.dat" || { diff "$tmp/want" "$p/time_to_target_accuracy.dat" >&2; fail "time-to-target bars"; }
grep -qF 'title "hand: mean ± sd, n = 2 replicates; target test accuracy 0.7\no: a replicate stopped (its last value counts from then on)"' \
  "$p/convergence.gp" || fail "convergence title (spread, n, target, the stop marker)"
grep -qF 'title "algorithm.name=allreduce"' "$p/convergence.gp" || fail "full-path legend"
grep -qF 'label 1 "hand: simulated time to test accuracy 0.7, mean ± sd, n =\n2 replicates"' \
  "$p/time_to_target_accuracy.gp" || fail "time-to-target title"
if grep -qF 'title "algorithm.name=allreduce"' "$p/consensus.gp"; then fail "allreduce in the consensus figure"; fi
grep -qF 'left out: algorithm.name=allreduce' "$p/consensus.gp" || fail "the consensus title does not say what it left out"
grep -qF 'title "algorithm.name=dpsgd"' "$p/consensus.gp" || fail "dpsgd missing from the consensus figure"

# Every --spread on three replicates at t = 0: accuracy 0.1 0.2 0.6, mean
# 0.3, sd sqrt(0.07) = 0.2645751311, se 0.1527525232, 95% half-width
# t(0.975; 2) = 4.30265273 times se = 0.6572410608; range 0.1 .. 0.6.
s3=$tmp/three
mkdir "$s3"
{ echo "run,algorithm.name,replicate,seed,time_s,train_loss,test_loss,test_accuracy,consensus_distance"
  echo "0,dpsgd,0,1,0,1,1,0.1,0.1"; echo "1,dpsgd,1,2,0,1,1,0.2,0.1"; echo "2,dpsgd,2,3,0,1,1,0.6,0.1"
  echo "0,dpsgd,0,1,1,0.5,0.5,0.1,0.05"; echo "1,dpsgd,1,2,1,0.5,0.5,0.2,0.05"; echo "2,dpsgd,2,3,1,0.5,0.5,0.6,0.05"; } > "$s3/sweep.csv"
printf 'run,algorithm.name,replicate,seed,status\n0,dpsgd,0,1,ok\n1,dpsgd,1,2,ok\n2,dpsgd,2,3,ok\n' > "$s3/summary.csv"
for sp in "sd 0.03542486889 0.5645751311" "se 0.1472474768 0.4527525232" \
          "ci95 -0.3572410608 0.9572410608" "minmax 0.1 0.6"; do
  set -- $sp
  "$dtsim" plot "$s3" --spread "$1" --quiet
  got=$(head -n 1 "$s3/plots/convergence.dat" | cut -d' ' -f8-10)
  [ "$got" = "0.3 $2 $3" ] || fail "--spread $1: band $got, not 0.3 $2 $3"
done
grep -qF '"three: mean and min..max, n = 3 replicates"' "$s3/plots/convergence.gp" || fail "the title does not name the spread"
"$dtsim" plot "$s3" --label algorithm.name=protocol --quiet
grep -qF 'title "protocol=dpsgd"' "$s3/plots/convergence.gp" || fail "--label PATH=TEXT"
"$dtsim" plot "$s3" --label algorithm.name= --quiet
grep -qF 'title "dpsgd"' "$s3/plots/convergence.gp" || fail "--label PATH= (values alone)"
for bad in "--spread iqr" "--label nolabel" "--spread"; do
  st=0; "$dtsim" plot "$s3" $bad 2> "$tmp/err" || st=$?
  [ "$st" = 2 ] || fail "plot $bad: exit $st, not 2"
done
st=0; sh "$src/plots/plot.sh" --spread iqr "$s3" 2> /dev/null || st=$?
[ "$st" = 2 ] || fail "plot.sh --spread iqr: exit $st, not 2"
mkdir "$tmp/empty"
if "$dtsim" plot "$tmp/empty" 2>/dev/null; then fail "an empty folder was accepted"; fi
echo "test_plots: ok"
