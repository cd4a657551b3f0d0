#!/usr/bin/env python3
"""pipeline-dp-table.py -- the table of the pipeline x data parallel replication
(docs/validation.md): reads the sweep folder scenarios/papers/run.sh pipeline-dp
writes (zip: algorithm.stages x algorithm.replicas = 8 nodes; grid:
model.message_bytes, compute.groups.0.slowdown of node 3) and writes DIR/table.md
(and stdout): per model size and configuration, whole-model mini-batches per second
(replicas / mean iteration, run.json algorithm_stats) homogeneous beside the closed
form r / ((m + p - 1) / (p m) t + 2 (p - 1)(a + A / B) + 2 (r - 1) a + 2 (r - 1) / r
(M / p) / B), and with node 3 twice as slow, with the share kept.

    plots/pipeline-dp-table.py DIR

Only ratios and closed forms of dtsim's numbers and the scenario's settings.
"""
import csv
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plots/pipeline-dp-table.py DIR")
    d = sys.argv[1].rstrip("/")
    scn = json.load(open(os.path.join(d, "sweep.json"))).get("scenario", {})
    net = scn.get("network", {})
    alg = scn.get("algorithm", {})
    a, B = net.get("latency_s", 1e-5), net.get("bandwidth_Bps", 1e10)
    A, m, t = alg.get("act_bytes", 1e6), alg.get("micro_batches", 32), 1.0
    got = {}
    for r in csv.DictReader(open(os.path.join(d, "runs.csv"))):
        st = json.load(open(os.path.join(d, "runs", r["name"], "run.json")))["algorithm_stats"]
        p, q = int(float(r["algorithm.stages"])), int(float(r["algorithm.replicas"]))
        M, slow = float(r["model.message_bytes"]), float(r["compute.groups.0.slowdown"])
        got[(M, p, q, slow)] = q / float(st["mean_iteration_s"])
    out = ["| model gradient | stages x replicas | mini-batches/s | closed form | node 3 2x slower "
           "| kept |", "|---:|---|---:|---:|---:|---:|"]
    for M in sorted({k[0] for k in got}):
        best = max((v, k) for k, v in got.items() if k[0] == M and k[3] == 1)[1]
        for p, q in sorted({(k[1], k[2]) for k in got if k[0] == M}, reverse=True):
            T = (m + p - 1) / (p * m) * t + 2 * (p - 1) * (a + A / B)
            if q > 1:
                T += 2 * (q - 1) * a + 2 * (q - 1) / q * (M / p) / B
            h, s = got[(M, p, q, 1)], got.get((M, p, q, 2), float("nan"))
            mark = " **best**" if (M, p, q, 1) == best else ""
            out.append(f"| {M:.0e} B | {p} x {q}{mark} | {h:.3f} | {q / T:.3f} | {s:.3f} "
                       f"| {s / h:.0%} |")
    text = "\n".join(out) + "\n"
    open(os.path.join(d, "table.md"), "w").write(text)
    sys.stdout.write(text)


main()
