#!/usr/bin/env python3
"""pipeline-table.py -- the tables of the pipeline replication (docs/validation.md):
reads the three sweep folders scenarios/papers/run.sh pipeline writes, DIR-bubble
(grid: algorithm.schedule, algorithm.micro_batches), DIR-hetero (grid: schedule,
algorithm.partition, one stage 2x slower) and DIR-staleness (zip: schedule and
micro_batches, grid: algorithm.lr, replicates), and writes DIR-bubble/table-pipeline.md
(and stdout):

- per schedule and m, the measured bubble fraction (run.json algorithm_stats) beside
  the closed form (p - 1)/(m + p - 1), and mini-batches per second (1 / mean
  iteration time; the asynchronous schedule's mini-batch is m micro-batches of its
  throughput);
- per schedule and partition, the predicted slowest stage, the measured throughput
  and the throughput ratio balanced / equal;
- per pair (schedule, m) and lr, the final train loss and test accuracy, mean ± sd
  (min-max) over seeds, at the same number of updates, and the simulated time.

    plots/pipeline-table.py DIR      (DIR-bubble, DIR-hetero, DIR-staleness must exist)

Only means, deviations, ranges and ratios of dtsim's numbers.
"""
import csv
import json
import math
import os
import statistics
import sys


def runs(d):
    summ = {r["run"]: r for r in csv.DictReader(open(os.path.join(d, "summary.csv")))}
    for r in csv.DictReader(open(os.path.join(d, "runs.csv"))):
        rj = json.load(open(os.path.join(d, "runs", r["name"], "run.json")))
        yield r, rj.get("algorithm_stats", {}), summ[r["run"]]


def cell(xs):
    xs = [x for x in xs if math.isfinite(x)]
    if not xs:
        return "n/a"
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.mean(xs):.4g} ± {sd:.2g} ({min(xs):.4g}–{max(xs):.4g})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plots/pipeline-table.py DIR")
    d = sys.argv[1].rstrip("/")
    out = []
    p = 8
    out += ["| schedule | m | bubble fraction | (p-1)/(m+p-1) | mini-batches per s |",
            "|---|---:|---:|---:|---:|"]
    rows = []
    for r, st, _ in runs(d + "-bubble"):
        m = int(float(r["algorithm.micro_batches"]))
        sched = r["algorithm.schedule"]
        if sched == "pipedream":
            bub, rate = "n/a (no flush)", float(st["throughput_mb_per_s"]) / m
        else:
            bub, rate = f"{float(st['bubble_fraction']):.4f}", 1 / float(st["mean_iteration_s"])
        rows.append((sched, m, bub, (p - 1) / (m + p - 1), rate))
    for sched, m, bub, cf, rate in sorted(rows):
        out.append(f"| {sched} | {m} | {bub} | {cf:.4f} | {rate:.4g} |")
    out += ["", "| schedule | partition | predicted slowest stage (s) | micro-batches per s | "
            "balanced ÷ equal |", "|---|---|---:|---:|---:|"]
    het = {}
    for r, st, _ in runs(d + "-hetero"):
        het[(r["algorithm.schedule"], r["algorithm.partition"])] = (
            float(st["slowest_stage_s"]), float(st["throughput_mb_per_s"]))
    for (sched, part) in sorted(het):
        slow, thr = het[(sched, part)]
        ratio = thr / het[(sched, "equal")][1]
        out.append(f"| {sched} | {part} | {slow:.6g} | {thr:.5g} | {ratio:.4f} |")
    out += ["", "| schedule | m | lr | train loss | test accuracy | simulated s |",
            "|---|---:|---:|---:|---:|---:|"]
    st_rows = {}
    for r, st, s in runs(d + "-staleness"):
        key = (int(float(r["algorithm.micro_batches"])), r["algorithm.schedule"],
               float(r["algorithm.lr"]))
        v = st_rows.setdefault(key, {"loss": [], "acc": [], "t": []})
        v["loss"].append(float(s["train_loss"]))
        v["acc"].append(float(s["test_accuracy"]))
        v["t"].append(float(s["sim_time_s"]))
    for key in sorted(st_rows):
        m, sched, lr = key
        v = st_rows[key]
        out.append(f"| {sched} | {m} | {lr:g} | {cell(v['loss'])} | {cell(v['acc'])} | "
                   f"{statistics.mean(v['t']):.4g} |")
    text = "\n".join(out) + "\n"
    open(os.path.join(d + "-bubble", "table-pipeline.md"), "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
