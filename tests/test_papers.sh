#!/bin/sh
# test_papers.sh DTSIM SOURCE_DIR -- the literature replications of
# scenarios/papers/: every scenario validates; plots/papers-table.sh gives
# the exact means, deviations, reach counts, paired ratios, speedups and
# best-learning-rate picks of a hand-made summary.csv; and a two-run sweep
# of the AD-PSGD straggler scenario pins a closed form through the whole
# pipeline: with constant step times of 0.01 s and a 1.005 s horizon, 16
# workers take 1600 steps, and with worker 0 100x slower 15 x 100 + 1 =
# 1501, a throughput ratio of exactly 0.938125 (AD-PSGD never waits for a
# slow neighbour: the passive side averages at once).
set -eu
dtsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_papers: FAIL: $*" >&2; exit 1; }
table=$src/plots/papers-table.sh

"$dtsim" validate "$src"/scenarios/papers/*.json > /dev/null || fail "a scenario of scenarios/papers/ does not validate"

mkdir "$tmp/t"
cat > "$tmp/t/summary.csv" <<'CSV'
run,algorithm,algorithm.lr,replicate,seed,status,time_to_target_loss_s,steps_per_s
0,"{""name"":""ps-async""}",0.1,0,1,ok,2,100
1,"{""name"":""ps-async""}",0.1,1,7,ok,4,100
2,"{""name"":""ps-async""}",0.2,0,1,ok,1,50
3,"{""name"":""ps-async""}",0.2,1,7,ok,inf,40
4,"{""name"":""ringmaster"",""max_delay"":4}",0.1,0,1,ok,8,200
5,"{""name"":""ringmaster"",""max_delay"":4}",0.1,1,7,ok,6,300
6,"{""name"":""ringmaster"",""max_delay"":4}",0.2,0,1,ok,5,100
7,"{""name"":""ringmaster"",""max_delay"":4}",0.2,1,7,ok,7,150
CSV
"$table" "$tmp/t" --ratio algorithm.lr=0.1 time_to_target_loss_s steps_per_s > /dev/null
cat > "$tmp/want" <<'MD'
| algorithm | lr | time_to_target_loss_s | steps_per_s | time_to_target_loss_s ÷ lr=0.1 | steps_per_s ÷ lr=0.1 |
|---|---|---:|---:|---:|---:|
| ps-async | 0.1 | 3 ± 1.41 (2–4) | 100 ± 0 (100–100) | 1 (1–1) | 1 (1–1) |
| ps-async | 0.2 | 1 ± 0 (1–1), 1/2 reached | 45 ± 7.07 (40–50) | 0.5 (0.5–0.5) | 0.45 (0.4–0.5) |
| ringmaster max_delay:4 | 0.1 | 7 ± 1.41 (6–8) | 250 ± 70.7 (200–300) | 1 (1–1) | 1 (1–1) |
| ringmaster max_delay:4 | 0.2 | 6 ± 1.41 (5–7) | 125 ± 35.4 (100–150) | 0.8958 (0.625–1.167) | 0.5 (0.5–0.5) |
MD
cmp -s "$tmp/want" "$tmp/t/table.md" || { diff "$tmp/want" "$tmp/t/table.md" >&2; fail "--ratio table"; }

"$table" "$tmp/t" --best algorithm.lr --tag best time_to_target_loss_s > /dev/null
cat > "$tmp/want" <<'MD'
| algorithm | lr | time_to_target_loss_s |
|---|---|---:|
| ps-async | 0.1 | 3 ± 1.41 (2–4) |
| ringmaster max_delay:4 | 0.2 | 6 ± 1.41 (5–7) |
MD
cmp -s "$tmp/want" "$tmp/t/table-best.md" || { diff "$tmp/want" "$tmp/t/table-best.md" >&2; fail "--best table"; }

"$table" "$tmp/t" --speedup 'algorithm={"name":"ps-async"}' --tag sp time_to_target_loss_s > /dev/null
printf 'ringmaster max_delay:4\t0.1\t7\t1.41421\t6\t8\t2\t0.458333\t0.25\t0.666667\n' > "$tmp/want"
grep -x 'ringmaster max_delay:4	0.1	.*' "$tmp/t/table-sp.tsv" | cmp -s "$tmp/want" - || fail "--speedup tsv"
if "$table" "$tmp/t" --ratio nosuch=1 steps_per_s 2> /dev/null; then fail "an unknown parameter was accepted"; fi

"$dtsim" sweep "$src/scenarios/papers/adpsgd-straggler.json" -o "$tmp/s" --quiet -j 1 \
  --grid compute.groups.0.slowdown=1,100 --set 'compute.noise={"dist":"constant"}' \
  --set 'stop={"time_s":1.005}' --set metrics.every_s=0.5
"$table" "$tmp/s" --ratio compute.groups.0.slowdown=1 steps_per_s > /dev/null
steps() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "steps") c = i; next }
                   { printf "%s ", $c }' "$tmp/s/summary.csv"; }
steps | grep -qx '1600 1501 ' || fail "steps $(steps)"
awk -F'\t' '$1 == 100 { print $7 }' "$tmp/s/table.tsv" | grep -qx 0.938125 || fail "throughput ratio"
echo "test_papers: ok"
