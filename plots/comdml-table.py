#!/usr/bin/env python3
"""comdml-table.py -- the table of the ComDML replication (docs/validation.md):
reads a sweep folder of scenarios/papers/comdml.json (grid: algorithm.offload,
the speed spread S as compute.groups.7.slowdown, replicates) and writes, per
spread and offloading mode, the mean ± sd (min-max) over seeds of the round's
work makespan (run.json algorithm_stats mean_work_s), of the round period
(simulated time / rounds) and of the time to the target accuracy, with the
paired ratio of the makespan and the speedup to target against no offloading.

    plots/comdml-table.py SWEEP_DIR      -> SWEEP_DIR/table-comdml.md (and stdout)

Only means, deviations, ranges and ratios of dtsim's numbers.
"""
import csv
import json
import math
import os
import statistics
import sys


def cell(xs):
    xs = [x for x in xs if math.isfinite(x)]
    if not xs:
        return "n/a"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.4g} ± {sd:.2g} ({min(xs):.4g}–{max(xs):.4g})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plots/comdml-table.py SWEEP_DIR")
    d = sys.argv[1].rstrip("/")
    summ = {r["run"]: r for r in csv.DictReader(open(os.path.join(d, "summary.csv")))}
    rows = {}
    for r in csv.DictReader(open(os.path.join(d, "runs.csv"))):
        rj = json.load(open(os.path.join(d, "runs", r["name"], "run.json")))
        st = rj.get("algorithm_stats", {})
        s = summ[r["run"]]
        key = (float(r["compute.groups.7.slowdown"]), r["algorithm.offload"])
        rows.setdefault(key, {})[r["replicate"]] = {
            "work": float(st.get("mean_work_s", "nan")),
            "period": float(s["sim_time_s"]) / max(float(st.get("rounds", 0)), 1.0),
            "ttt": float(s["time_to_target_accuracy_s"]),
            "pairs": float(st.get("pairs", 0)) / max(float(st.get("rounds", 0)), 1.0),
        }
    out = ["| spread | offload | pairs/round | round work makespan (s) | makespan ÷ off | "
           "round period (s) | time to accuracy (s) | speedup over off |",
           "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for (S, off) in sorted(rows):
        reps = rows[(S, off)]
        base = rows.get((S, "off"), {})
        ratio = [reps[k]["work"] / base[k]["work"] for k in reps if k in base]
        speed = [base[k]["ttt"] / reps[k]["ttt"] for k in reps if k in base]
        v = lambda f: [reps[k][f] for k in sorted(reps)]
        out.append(f"| {S:g} | {off} | {statistics.mean(v('pairs')):.3g} | {cell(v('work'))} | "
                   f"{cell(ratio)} | {cell(v('period'))} | {cell(v('ttt'))} | {cell(speed)} |")
    text = "\n".join(out) + "\n"
    open(os.path.join(d, "table-comdml.md"), "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
