#!/usr/bin/env python3
"""perf_shares.py -- where the simulation's time goes, from a call-graph
profile: reads `perf script` output of `perf record --call-graph dwarf
dtsim run ...` on stdin and sorts every sample taken inside run_execute
(the run itself: setup, data loading and output writing are outside it)
into

  gradient     the model's loss and gradient (mdl_loss_grad: batch gather,
               forward and backward passes)
  updates      parameter arithmetic of the protocols: optimizer steps,
               averaging (CBLAS), copies of model-sized buffers (snapshots,
               gradients kept for later)
  evaluation   metrics.csv evaluations (mdl_evaluate)
  engine       the event queue and run loop (sim_engine_*, the runner's
               routing)
  network      the cluster: step scheduling, NICs, message slots, delivery
               (cl_*)
  bookkeeping  the protocols' own logic (alg_*, ad_*, dp_*, ...) outside
               parameter arithmetic

by walking each sample's call chain from the leaf to the root: the first
frame that names a category decides (library frames such as memcpy or
dgemm go to the dtsim function that called them).  Prints a markdown
table of shares of the run's samples.

usage: perf script -i perf.data | perf_shares.py
"""
import sys

ORDER = ["gradient", "updates", "evaluation", "engine", "network", "bookkeeping"]
PROTOCOL_PREFIXES = ("ad_", "dp_", "ar_", "alg_", "gs_", "ep_", "ls_", "ps_", "fa_", "pr_",
                     "ea_", "co_")


def classify(frames):
    """frames: symbols from leaf to root. Returns a category or None when
    the sample is outside run_execute."""
    if "run_execute" not in frames:
        return None
    for f in frames:
        if f.startswith("mdl_evaluate"):
            return "evaluation"
        if f.startswith("mdl_loss_grad"):
            return "gradient"
    libc_leaf = frames and (frames[0].startswith("__mem") or frames[0].startswith("mem"))
    for f in frames:
        if f.startswith("cblas_") or f.startswith("mdl_optim") or f == "alg_sgd_apply":
            return "updates"
        if f == "cl_snapshot":
            return "updates"
        if f.startswith(PROTOCOL_PREFIXES):
            return "updates" if libc_leaf else "bookkeeping"
        if f.startswith("cl_"):
            return "network"
        if f.startswith("sim_engine") or f in ("handle", "handle_event", "run_execute"):
            return "engine"
    return "engine"


def main():
    counts = {k: 0 for k in ORDER}
    total = outside = 0
    frames = []

    def flush():
        nonlocal total, outside
        if not frames:
            return
        total += 1
        c = classify(frames)
        if c is None:
            outside += 1
        else:
            counts[c] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            frames = []
            continue
        if line.startswith((" ", "\t")):
            parts = line.split()
            if len(parts) >= 2:
                sym = parts[1].split("+")[0]
                frames.append(sym)
        else:
            flush()
            frames = []
    flush()
    inside = sum(counts.values())
    if inside == 0:
        sys.exit("perf_shares.py: error: no sample inside run_execute")
    print("| part | share of the run |")
    print("|---|---:|")
    for k in ORDER:
        print("| %s | %.1f%% |" % (k, 100.0 * counts[k] / inside))
    print("| (engine + network + bookkeeping) | %.1f%% |"
          % (100.0 * (counts["engine"] + counts["network"] + counts["bookkeeping"]) / inside))
    print("\n%d samples in the run, %d outside it (start-up, data loading, output)"
          % (inside, outside))


if __name__ == "__main__":
    main()
