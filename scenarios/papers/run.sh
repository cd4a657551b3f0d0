#!/bin/sh
# run.sh -- reruns one of dtsim's literature replications: the sweep over
# seeds (and protocols, slowdowns, learning rates... as the replication
# needs), then its tables (plots/papers-table.sh) and its figure
# (plots/papers.sh).  The results and the reasoning are in
# docs/validation.md, "Replications".
#
#   scenarios/papers/run.sh NAME... [-j N] [-o DIR]
#
#   NAME  adpsgd-straggler | prague | hop | ringmaster | local-sgd | divshare | easgd |
#         hogwild | lsgd | stl-fw | fednova | lbbsp | sdfeel | comdml | freeze | freeze-fedavg | pipeline | pipeline-dp | all
#   -j N  worker processes for dtsim sweep (default: the number of cores)
#   -o    parent folder of the sweeps (default: results/papers); NAME's
#         sweep goes to DIR/NAME, its tables to DIR/NAME/table*.md and
#         .tsv, its figure to DIR/NAME/plots/NAME.png
#
# Uses build/dtsim of this source tree, or $DTSIM when set.  Re-running
# resumes an interrupted sweep and only redraws a complete one (dtsim
# sweep skips complete runs); delete DIR/NAME to start afresh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dtsim=${DTSIM:-$root/build/dtsim}
out=results/papers
jobs=""
names=""

usage() {
  echo "usage: scenarios/papers/run.sh NAME... [-j N] [-o DIR]" >&2
  echo "  NAME: adpsgd-straggler, prague, hop, ringmaster, local-sgd, divshare, easgd, hogwild, lsgd, stl-fw, fednova, lbbsp, sdfeel, comdml, freeze, freeze-fedavg, pipeline, pipeline-dp, all" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    -j) [ $# -ge 2 ] || usage; jobs="-j $2"; shift 2 ;;
    -o) [ $# -ge 2 ] || usage; out=${2%/}; shift 2 ;;
    all) names="$names adpsgd-straggler prague hop ringmaster local-sgd divshare easgd hogwild lsgd stl-fw fednova lbbsp sdfeel comdml freeze freeze-fedavg pipeline pipeline-dp"; shift ;;
    adpsgd-straggler|prague|hop|ringmaster|local-sgd|divshare|easgd|hogwild|lsgd|stl-fw|fednova|lbbsp|sdfeel|comdml|freeze|freeze-fedavg|pipeline|pipeline-dp) names="$names $1"; shift ;;
    *) usage ;;
  esac
done
[ -n "$names" ] || usage
[ -x "$dtsim" ] || { echo "run.sh: error: $dtsim not found (make build, or set DTSIM)" >&2; exit 1; }

table=$root/plots/papers-table.sh
# one BLAS thread per run: the runs are the parallelism (bench/RESULTS.md)
OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OPENBLAS_NUM_THREADS
# shellcheck disable=SC2086  # $jobs is empty or two words
sweep() { "$dtsim" sweep "$@" $jobs --quiet; }

for name in $names; do
  dir=$out/$name
  start=$(date +%s)
  case $name in
    adpsgd-straggler)
      # Lian et al. 2018: one of 16 workers slowed 1x (none), 2x, 10x, 100x
      sweep "$here/adpsgd-straggler.json" -o "$dir" --replicates 5 \
        --grid algorithm.name=adpsgd,dpsgd,allreduce \
        --grid compute.groups.0.slowdown=1,2,10,100
      "$table" "$dir" --ratio compute.groups.0.slowdown=1 time_to_target_loss_s steps_per_s
      "$table" "$dir" --ratio algorithm.name=adpsgd --tag vs-adpsgd time_to_target_loss_s steps_per_s
      ;;
    prague)
      # Luo et al. 2020: homogeneous, one worker 4x slower, random
      # (Markov) 5x slowdowns on every worker 10% of the time
      sweep "$here/prague.json" -o "$dir" --replicates 5 \
        --grid 'algorithm={"name":"allreduce","lr":0.05},{"name":"adpsgd","lr":0.05},{"name":"prague","lr":0.05,"group_size":4,"groups":"static"},{"name":"prague","lr":0.05,"group_size":4,"groups":"random"}' \
        --zip compute.groups.0.slowdown=1,4,1 --zip compute.slowdowns.0.factor=1,1,5
      "$table" "$dir" --speedup 'algorithm={"name":"allreduce","lr":0.05}' time_to_target_loss_s
      "$table" "$dir" --ratio 'algorithm={"name":"allreduce","lr":0.05}' --tag throughput steps_per_s
      # the same three conditions, bandwidth-bound: a 4 MB model (timing
      # only) at 10 Gbit/s, 10 ms steps: throughput against all-reduce
      sweep "$here/prague-bw.json" -o "$dir-bandwidth" --replicates 2 \
        --grid 'algorithm={"name":"allreduce","lr":0.05},{"name":"adpsgd","lr":0.05},{"name":"prague","lr":0.05,"group_size":4,"groups":"static"},{"name":"prague","lr":0.05,"group_size":4,"groups":"random"}' \
        --zip compute.groups.0.slowdown=1,4,1 --zip compute.slowdowns.0.factor=1,1,5
      "$table" "$dir-bandwidth" --ratio 'algorithm={"name":"allreduce","lr":0.05}' --tag throughput steps_per_s
      ;;
    hop)
      # Luo et al. 2019: D-PSGD (waits for every neighbour) against Hop
      # without backup workers, with one backup worker, with iteration
      # skipping, and with a looser staleness bound; homogeneous, one worker
      # 4x slower, random 5x slowdowns 10% of the time
      sweep "$here/hop.json" -o "$dir" --replicates 5 \
        --grid 'algorithm={"name":"dpsgd","lr":0.05},{"name":"hop","lr":0.05,"backup":0,"staleness":2},{"name":"hop","lr":0.05,"backup":1,"staleness":2},{"name":"hop","lr":0.05,"backup":1,"staleness":2,"skip":"on"},{"name":"hop","lr":0.05,"backup":1,"staleness":8,"skip":"on"}' \
        --zip compute.groups.0.slowdown=1,4,1 --zip compute.slowdowns.0.factor=1,1,5
      "$table" "$dir" --speedup 'algorithm={"name":"dpsgd","lr":0.05}' time_to_target_loss_s
      "$table" "$dir" --ratio 'algorithm={"name":"dpsgd","lr":0.05}' --tag throughput steps_per_s
      ;;
    ringmaster)
      # Tyurin & Richtarik 2023, Maranjyan et al. 2025: tau_i = 1 + sqrt(i),
      # every method at its best learning rate of the grid
      sweep "$here/ringmaster-sqrt.json" -o "$dir" --replicates 3 \
        --grid 'algorithm={"name":"ps-sync"},{"name":"ps-async"},{"name":"rennala","gradients":2},{"name":"rennala","gradients":4},{"name":"rennala","gradients":8},{"name":"rennala","gradients":16},{"name":"ringmaster","max_delay":2},{"name":"ringmaster","max_delay":4},{"name":"ringmaster","max_delay":8},{"name":"ringmaster","max_delay":4,"stops":"on"},{"name":"delay-adaptive"}' \
        --grid algorithm.lr=0.02,0.03,0.05,0.07,0.1,0.15,0.2,0.3,0.5,0.7,1
      "$table" "$dir" --best algorithm.lr time_to_target_loss_s
      "$table" "$dir" --tag all time_to_target_loss_s
      ;;
    local-sgd)
      # Lin et al. 2020: H local steps, fast (10 Gbit/s, 50 us) and slow
      # (100 Mbit/s, 5 ms) links; evaluations every 0.05 s and 0.25 s
      # (1% to 7% of the times to target)
      sweep "$here/local-sgd.json" -o "$dir" --replicates 3 \
        --zip network.latency_s=5e-05,0.005 --zip network.bandwidth_Bps=1.25e9,1.25e7 \
        --zip metrics.every_s=0.05,0.25 \
        --grid algorithm.local_steps=1,2,4,8,16,32,64
      "$table" "$dir" --speedup algorithm.local_steps=1 time_to_target_accuracy_s
      "$table" "$dir" --ratio algorithm.local_steps=1 --tag throughput steps_per_s
      ;;
    divshare)
      # Biswas et al. 2025: 0%, 10%, 20%, 30% of 20 workers on 10x slower
      # uplinks, DivShare against AD-PSGD and Epidemic Learning; links
      # where a model takes 0.3x a step (divshare) and 1x (divshare-bw)
      for v in divshare divshare-bw; do
        d=$out/$v
        sweep "$here/$v.json" -o "$d" --replicates 3 \
          --grid 'algorithm={"name":"divshare","lr":0.05,"batch":32,"fragments":4,"fanout":2},{"name":"adpsgd","lr":0.05,"batch":32},{"name":"epidemic","lr":0.05,"batch":32,"fanout":2}' \
          --zip network.nics.0.fraction=0.1,0.1,0.2,0.3 --zip network.nics.0.up_Bps=$([ $v = divshare ] && echo 3.5e5,3.5e4,3.5e4,3.5e4 || echo 1e5,1e4,1e4,1e4)
        "$table" "$d" --ratio 'algorithm={"name":"divshare","lr":0.05,"batch":32,"fragments":4,"fanout":2}' time_to_target_loss_s steps_per_s
      done
      ;;
    easgd)
      # Zhang, Choromanska, LeCun 2015: asynchronous EASGD with tau = 1,
      # 4, 16 against DOWNPOUR (asynchronous SGD through a server), lr 0.1;
      # fast (10 Gbit/s, 50 us) and slow (100 Mbit/s, 5 ms) links
      sweep "$here/easgd.json" -o "$dir" --replicates 1 \
        --zip network.latency_s=5e-05,0.005 --zip network.bandwidth_Bps=1.25e9,1.25e7 \
        --grid 'algorithm={"name":"ps-async","lr":0.1},{"name":"easgd","lr":0.1,"period":1},{"name":"easgd","lr":0.1,"period":4},{"name":"easgd","lr":0.1,"period":16}'
      "$table" "$dir" --speedup 'algorithm={"name":"ps-async","lr":0.1}' time_to_target_accuracy_s steps_per_s
      ;;
    hogwild)
      # Niu et al. 2011: 1 to 16 cores on a sparse problem (generated: 10 of
      # 1000 features a row, skewed popularity), lock-free writes added or
      # stored over; then a dense one (100 features) where SymSGD (Maleki
      # et al. 2017) with its combiner free and at its FLOP cost joins
      mkdir -p "$dir"
      [ -f "$dir/sparse.svm.gz" ] || python3 "$here/gen-sparse-libsvm.py" "$dir/sparse.svm.gz"
      sweep "$here/hogwild.json" -o "$dir/sparse" --replicates 3 \
        --set "data={\"kind\":\"libsvm\",\"train_file\":\"$dir/sparse.svm.gz\",\"test_fraction\":0.2,\"scale\":\"none\"}" \
        --set algorithm.lr=0.5 --set 'metrics.targets=[{"metric":"train_loss","value":0.36}]' \
        --grid nodes=1,2,4,8,16 --grid algorithm.write=add,overwrite
      "$dtsim" table "$dir/sparse" time_to_target_1_s steps_per_s --baseline nodes=1 \
        -o "$dir/table-sparse.md"
      sweep "$here/hogwild.json" -o "$dir/dense" --replicates 3 \
        --grid nodes=1,2,4,8,16 \
        --grid 'algorithm={"name":"hogwild","lr":0.003,"batch":1,"write":"add"},{"name":"hogwild","lr":0.003,"batch":1,"write":"overwrite"},{"name":"symsgd","lr":0.003,"batch":1,"round_steps":32,"combiner_cost":0},{"name":"symsgd","lr":0.003,"batch":1,"round_steps":32,"combiner_cost":1}'
      "$dtsim" table "$dir/dense" time_to_target_1_s steps_per_s --baseline nodes=1 \
        -o "$dir/table-dense.md"
      ;;
    lsgd)
      # Teng et al. 2019: LSGD (2 groups of 4, a global round every 2
      # local ones, lambda 0.1 both) against asynchronous EASGD, local SGD
      # (periodic all-reduce averaging) and all-reduce, communication
      # period 4 and 16, lr 0.1; fast and slow links as for easgd; 3 seeds
      sweep "$here/lsgd.json" -o "$dir" --replicates 3 \
        --zip network.latency_s=5e-05,0.005 --zip network.bandwidth_Bps=1.25e9,1.25e7 \
        --grid 'algorithm={"name":"lsgd","lr":0.1,"groups":2,"period":4,"global_rounds":2},{"name":"lsgd","lr":0.1,"groups":2,"period":16,"global_rounds":2},{"name":"easgd","lr":0.1,"period":4},{"name":"easgd","lr":0.1,"period":16},{"name":"local-sgd","lr":0.1,"local_steps":4},{"name":"local-sgd","lr":0.1,"local_steps":16},{"name":"allreduce","lr":0.1}'
      "$table" "$dir" --speedup 'algorithm={"name":"easgd","lr":0.1,"period":4}' time_to_target_accuracy_s steps_per_s bytes_sent
      # the same on a non-convex model (MLP 784-100-10), fast links, target 0.84
      sweep "$here/lsgd.json" -o "$dir-mlp" --replicates 3 \
        --set 'model={"kind":"mlp","hidden":[100],"activation":"relu","l2":0.0001}' \
        --set stop.target_accuracy=0.84 --set stop.time_s=20 \
        --grid 'algorithm={"name":"lsgd","lr":0.1,"groups":2,"period":4,"global_rounds":2},{"name":"easgd","lr":0.1,"period":4},{"name":"local-sgd","lr":0.1,"local_steps":4},{"name":"allreduce","lr":0.1}'
      "$table" "$dir-mlp" --speedup 'algorithm={"name":"easgd","lr":0.1,"period":4}' time_to_target_accuracy_s steps_per_s
      ;;
    stl-fw)
      # Le Bars et al. 2023: D-PSGD on 32 nodes, 2-shard and Dirichlet(0.1)
      # partitions of Fashion-MNIST, on the STL-FW graph of budget 4 and 9
      # against random regular graphs of the same degree, the exponential
      # graph (degree 9) and the complete graph
      sweep "$here/stl-fw.json" -o "$dir" --replicates 3 \
        --grid 'data={"kind":"fashion-mnist","scale":"minmax","partition":"shards","shards_per_node":2},{"kind":"fashion-mnist","scale":"minmax","partition":"dirichlet","alpha":0.1}' \
        --grid 'topology={"kind":"learned","degree":4},{"kind":"random_regular","degree":4},{"kind":"learned","degree":9},{"kind":"random_regular","degree":9},{"kind":"exponential"},{"kind":"complete"}'
      "$table" "$dir" --ratio 'topology={"kind":"complete"}' test_accuracy consensus_distance
      # the nodes' own models at the end (node_metrics.csv): mean and worst
      # test accuracy of the 32 local models, paired against the complete graph
      python3 "$root/plots/papers-nodes.py" "$dir" --baseline 'topology={"kind":"complete"}'
      ;;
    fednova)
      # Wang et al. 2020: 16 clients of four speeds (1, 2, 4, 8 x 10 ms
      # steps) with a 0.2 s compute budget per round (tau 20, 10, 5, 2),
      # Dirichlet(0.1) data (non-IID) and Dirichlet(100) (near IID);
      # FedNova's normalized averaging against FedAvg's plain averaging at
      # lr 0.02 and 0.05, equal wall-clock (30 s)
      sweep "$here/fednova.json" -o "$dir" --replicates 5 \
        --grid data.alpha=0.1,100 --grid algorithm.lr=0.02,0.05 \
        --grid algorithm.aggregation=plain,fednova
      "$table" "$dir" --ratio algorithm.aggregation=plain train_loss test_accuracy
      ;;
    lbbsp)
      # Chen et al. 2020 (LB-BSP): synchronous SGD through a server on 8
      # workers, two 4x and two 2x slower, total batch 256 (32 x 8):
      # uniform batches against speed-proportional ones, configured and
      # measured; 400 iterations each
      sweep "$here/lbbsp.json" -o "$dir" --replicates 3 \
        --grid 'algorithm={"name":"ps-sync","lr":0.1,"batching":"uniform"},{"name":"ps-sync","lr":0.1,"batching":"speed"},{"name":"ps-sync","lr":0.1,"batching":"speed","batch_source":"measured"}'
      "$table" "$dir" --speedup 'algorithm={"name":"ps-sync","lr":0.1,"batching":"uniform"}' sim_time_s time_to_target_1_s
      "$table" "$dir" --ratio 'algorithm={"name":"ps-sync","lr":0.1,"batching":"uniform"}' --tag accuracy test_accuracy train_loss
      ;;
    sdfeel)
      # Sun et al. 2022/2023: 16 clients, Fashion-MNIST split by
      # Dirichlet(0.5); FedAvg through one cloud server (a 50 ms, 10 Mbit/s
      # link, and a fast one for contrast) against SD-FEEL with 4 edge
      # servers on a ring (1 ms, 100 Mbit/s to their clients, 5 ms between
      # them), alpha 1 and alpha 4 with data weights
      sweep "$here/sdfeel.json" -o "$dir" --replicates 3 \
        --zip 'algorithm={"name":"fedavg","lr":0.05,"batch":32,"fraction":1,"local_epochs":1},{"name":"fedavg","lr":0.05,"batch":32,"fraction":1,"local_epochs":1},{"name":"sdfeel","lr":0.05,"batch":32,"clusters":4,"local_steps":10},{"name":"sdfeel","lr":0.05,"batch":32,"clusters":4,"local_steps":10,"gossip_rounds":4,"server_weights":"data"}' \
        --zip 'network.links=[{"from":["servers"],"latency_s":0.05,"bandwidth_Bps":1.25e6}],[],[{"from":["servers"],"to":["servers"],"latency_s":0.005,"bandwidth_Bps":1.25e7}],[{"from":["servers"],"to":["servers"],"latency_s":0.005,"bandwidth_Bps":1.25e7}]'
      "$table" "$dir" --speedup 'algorithm={"name":"fedavg","lr":0.05,"batch":32,"fraction":1,"local_epochs":1}' time_to_target_accuracy_s
      # device heterogeneity: one client per cluster 5x slower (and none),
      # synchronous SD-FEEL against the asynchronous one (deadline 0.12 s)
      sweep "$here/sdfeel.json" -o "$dir-async" --replicates 3 \
        --set 'network.links=[{"from":["servers"],"to":["servers"],"latency_s":0.005,"bandwidth_Bps":1.25e7}]' \
        --grid 'compute.groups=[{"nodes":[3,7,11,15],"slowdown":5}],[]' \
        --grid 'algorithm={"name":"sdfeel","lr":0.05,"batch":32,"clusters":4,"local_steps":10},{"name":"sdfeel-async","lr":0.05,"batch":32,"clusters":4,"local_steps":10,"deadline_s":0.12}'
      "$table" "$dir-async" --speedup 'algorithm={"name":"sdfeel","lr":0.05,"batch":32,"clusters":4,"local_steps":10}' time_to_target_accuracy_s steps_per_s
      # how much the asynchronous result rests on the staleness discount
      # (FedAsync's (1 + s)^-a; the papers' rule was not found): a = 0 (none) to 2
      sweep "$here/sdfeel.json" -o "$dir-staleness" --replicates 3 \
        --set 'network.links=[{"from":["servers"],"to":["servers"],"latency_s":0.005,"bandwidth_Bps":1.25e7}]' \
        --set 'compute.groups=[{"nodes":[3,7,11,15],"slowdown":5}]' \
        --set 'algorithm={"name":"sdfeel-async","lr":0.05,"batch":32,"clusters":4,"local_steps":10,"deadline_s":0.12}' \
        --grid algorithm.staleness_exponent=0,0.5,1,2
      "$table" "$dir-staleness" --speedup algorithm.staleness_exponent=0 time_to_target_accuracy_s
      ;;
    comdml)
      # Mohammadabadi et al. 2024: 8 agents whose speeds spread
      # geometrically over S (agent i S^(i/7) times slower), S = 1, 2, 4, 8;
      # ComDML's offloading against none, 3 seeds
      zip=""
      for i in 0 1 2 3 4 5 6 7; do
        v=$(awk -v i="$i" 'BEGIN { printf "%.6g,%.6g,%.6g,%.6g", 1, 2^(i/7), 4^(i/7), 8^(i/7) }')
        zip="$zip --zip compute.groups.$i.slowdown=$v"
      done
      # shellcheck disable=SC2086  # $zip is a list of options
      sweep "$here/comdml.json" -o "$dir" --replicates 3 --grid algorithm.offload=auto,off $zip
      python3 "$root/plots/comdml-table.py" "$dir"
      ;;
    freeze)
      # progressive freezing (SmartFreeze 2024, Egeria 2023, AutoFreeze
      # 2021): full training (a count beyond the run never freezes), layers
      # frozen at rounds 100 and 200, at 50 and 100, layer 1 frozen from
      # the start, and the criterion (threshold 0.1, window 50); block by
      # block with output heads (mode grow) by the schedule and the
      # criterion; 2 seeds
      sweep "$here/freeze.json" -o "$dir" --replicates 2 \
        --grid 'freeze={"after_steps":[100000000]},{"after_steps":[100,200]},{"after_steps":[50,100]},{"after_steps":[0]},{"threshold":0.1,"window":50},{"mode":"grow","after_steps":[100,200]},{"mode":"grow","threshold":0.1,"window":50}'
      "$table" "$dir" --ratio 'freeze={"after_steps":[100000000]}' time_to_target_accuracy_s test_accuracy bytes_sent
      # the memory wall: the slow group's 1 MB devices refuse full
      # training (2277352 bytes at the first step) and fit layer 1 frozen
      # from the start (921000 bytes)
      if "$dtsim" validate "$here/freeze.json" --quiet --set compute.groups.0.memory_bytes=1e6 \
           --set 'freeze.after_steps=[100000000]' 2> "$dir/memory-refused.txt"; then
        echo "run.sh: freeze: full training fitted 1 MB" >&2; exit 1
      fi
      "$dtsim" validate "$here/freeze.json" --quiet --set compute.groups.0.memory_bytes=1e6 \
        --set 'freeze.after_steps=[0]'
      cat "$dir/memory-refused.txt"
      ;;
    freeze-fedavg)
      # SmartFreeze (Wu et al. 2024): FedAvg whose clients 5-9 have 1 MB of
      # device memory (full training needs 2277352 bytes, layer 1 frozen
      # 921000): unlimited memory without freezing, the small clients left
      # out (no freezing: a count beyond the run), layers frozen at rounds
      # 10 and 20, at 5 and 10, layer 1 from round 0, and the effective-
      # movement criterion; memory-aware selection draws a client once its
      # memory holds the round's stage; 2 seeds
      sweep "$here/freeze-fedavg.json" -o "$dir" --replicates 2 \
        --zip compute.groups.0.memory_bytes=1e12,1e6,1e6,1e6,1e6,1e6 \
        --zip 'freeze={"after_steps":[100000000]},{"after_steps":[100000000]},{"after_steps":[10,20]},{"after_steps":[5,10]},{"after_steps":[0]},{"criterion":"effective_movement","threshold":0.5,"window":5}'
      python3 "$here/freeze-fedavg-table.py" "$dir"
      # without a freeze section (no selection) a 1 MB client refuses the run
      grep -v '"freeze"' "$here/freeze-fedavg.json" > "$dir/no-freeze.json"
      if "$dtsim" validate "$dir/no-freeze.json" --quiet 2> "$dir/memory-refused.txt"; then
        echo "run.sh: freeze-fedavg: full training fitted 1 MB" >&2; exit 1
      fi
      cat "$dir/memory-refused.txt"
      ;;
    pipeline)
      # Huang et al. 2019 (GPipe), Narayanan et al. 2019, 2021 (PipeDream,
      # PipeDream-2BW), Fan et al. 2021 (1F1B): 8 stages of 4 equal layers,
      # timing only: the bubble against m; one stage 2x slower, balanced
      # against equal partition; then an MLP on 4 stages: staleness in the
      # loss at equal updates (PipeDream against 1F1B at m = 1, 2BW
      # against 1F1B at m = 4), two learning rates, 3 seeds
      sweep "$here/pipeline.json" -o "$dir-bubble" \
        --grid algorithm.schedule=gpipe,1f1b,pipedream \
        --grid algorithm.micro_batches=1,2,4,8,16,32,64
      sweep "$here/pipeline.json" -o "$dir-hetero" --set compute.groups.0.slowdown=2 \
        --grid algorithm.schedule=1f1b,pipedream --grid algorithm.partition=balanced,equal
      sweep "$here/pipeline-mlp.json" -o "$dir-staleness" --replicates 3 \
        --zip algorithm.schedule=1f1b,pipedream,1f1b,2bw --zip algorithm.micro_batches=1,1,4,4 \
        --grid algorithm.lr=0.05,0.2
      python3 "$root/plots/pipeline-table.py" "$dir"
      ;;
    pipeline-dp)
      # PipeDream (Narayanan et al. 2019), DAPPLE (Fan et al. 2021): 8 nodes
      # as p stages x r replicas (8 x 1 .. 1 x 8, pure data parallel), a
      # model of 32 equal layers whose gradient is 0.1, 1 or 4 GB, GPipe
      # with 32 micro-batches and the stages' ring all-reduce, timing only;
      # homogeneous and with node 3 twice as slow
      sweep "$here/pipeline-dp.json" -o "$dir" \
        --zip algorithm.stages=8,4,2,1 --zip algorithm.replicas=1,2,4,8 \
        --grid model.message_bytes=1e8,1e9,4e9 --grid compute.groups.0.slowdown=1,2
      python3 "$root/plots/pipeline-dp-table.py" "$dir"
      ;;
  esac
  case $name in divshare|easgd|hogwild|lsgd|stl-fw|fednova|lbbsp|sdfeel|comdml|freeze|freeze-fedavg|pipeline|pipeline-dp)
    echo "run.sh: $name done in $(( $(date +%s) - start )) s wall"; continue ;;
  esac
  "$root/plots/papers.sh" "$name" "$dir"
  echo "run.sh: $name done in $(( $(date +%s) - start )) s wall"
done
