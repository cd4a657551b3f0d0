#!/bin/sh
# exact_set.sh DTSIM OUTDIR -- the set of fair and FIFO runs whose outputs a
# change to the event path must keep bit for bit (bench/RESULTS.md, "The
# fair network at 64 nodes" and "..., again"): every scenarios/*.json and
# scenarios/papers/*.json but the Fashion-MNIST and pipeline ones, each as
# given (FIFO or its own discipline) and forced to the fair discipline,
# with traces; plus fair and FIFO rings of 64 nodes with lognormal speeds,
# slow NIC groups, a capped link class with latency, exponential jitter,
# loss, faults, a torus, and ps-sync / ps-async with lognormal speeds and
# slow downlinks.  Compare two OUTDIRs with
#   for f in A/*/*.csv; do cmp "$f" "B/${f#A/}"; done
# Run from the source tree.  Takes a few minutes.
set -eu
D=$1
O=$2
mkdir -p "$O"
run() {   # name scenario args...
    name=$1; shift
    sc=$1; shift
    rm -rf "$O/$name"
    "$D" run "$sc" -o "$O/$name" --quiet --force --set output.trace=true "$@" >/dev/null 2>&1 \
        || echo "$name: exit $?" > "$O/$name.rc"
}
for f in scenarios/*.json scenarios/papers/*.json; do
    case $f in *fashion-mnist*|*pipeline*) continue ;; esac
    b=$(basename "$f" .json)
    run "$b" "$f"
    run "$b-fair" "$f" --set network.discipline=fair
done
R=bench/scenarios/ring-none-dpsgd.json
for disc in fair fifo; do
    for alg in dpsgd adpsgd; do
        run "ring64-$alg-$disc-logn" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc --set compute.noise.dist=lognormal --set compute.noise.sigma=0.5
        run "ring64-$alg-$disc-nics" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc --set compute.noise.dist=lognormal --set compute.noise.sigma=0.3 \
            --set 'network.nics=[{"nodes":["0-15"],"up_Bps":3e8},{"nodes":["8-23"],"down_Bps":2e8}]'
        run "ring64-$alg-$disc-cap" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc --set compute.noise.dist=lognormal --set compute.noise.sigma=0.2 \
            --set 'network.links=[{"from":["0-31"],"to":["32-63"],"bandwidth_Bps":4e8,"latency_s":0.002}]'
        run "ring64-$alg-$disc-jitter" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc --set 'network.jitter={"dist":"exponential","mean_s":0.001}'
        run "ring64-$alg-$disc-loss" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc --set network.loss=0.02
        run "ring64-$alg-$disc-faults" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc \
            --set 'faults.events=[{"kind":"exponential","fraction":0.25,"mtbf_s":0.3,"mttr_s":0.05}]'
        run "torus64-$alg-$disc" $R --set nodes=64 --set stop.steps=50 --set algorithm.name=$alg \
            --set network.discipline=$disc --set topology.kind=torus2d --set topology.rows=8 --set topology.cols=8 --set compute.noise.dist=lognormal \
            --set compute.noise.sigma=0.4
    done
    for ps in ps-sync ps-async; do
        run "$ps-$disc" scenarios/ps16-$ps.json --set network.discipline=$disc \
            --set compute.noise.dist=lognormal --set compute.noise.sigma=0.5 \
            --set 'network.nics=[{"nodes":["0-7"],"down_Bps":2e7}]'
    done
done
ls "$O"/*.rc 2>/dev/null | sed 's/^/not run: /' || true
