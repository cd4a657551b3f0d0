#!/bin/sh
# test_plots.sh DTSIM SOURCE_DIR -- plots/plot.sh on a small run and sweep:
# every standard figure appears as a real PNG and PDF, the figures that
# cannot be drawn are named as skipped, and a folder with no CSV is an
# error.  Exits 77 (skipped) when gnuplot is not installed: `make test`
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
rm "$tmp/run/trace.csv"
"$dtsim" plot "$tmp/run" | grep -qx "plot.sh: $tmp/run: no trace.csv: no timeline figure" \
  || fail "no note for the missing trace.csv"
mkdir "$tmp/empty"
if "$dtsim" plot "$tmp/empty" 2>/dev/null; then fail "an empty folder was accepted"; fi
echo "test_plots: ok"
