#!/usr/bin/env python3
"""freeze-fedavg-table.py -- the table of the freeze-fedavg replication
(docs/validation.md): reads a sweep's runs (DIR/runs/*/run.json, nodes.csv,
metrics.csv) and writes DIR/table-memory.md, one line per grid point (the
device memory of the small clients and the freeze section), means over the
replicates and each replicate's value in brackets: time to 0.75 test
accuracy (run.json targets, the crossing), the first evaluation at or above
0.70, final and best test accuracy, bytes sent, rounds, the small clients'
participation (their local steps over the large clients'), and the peak
memory of a large client, a small one and the server (nodes.csv).  Only
dtsim's numbers, averaged; nothing fitted.

  scenarios/papers/freeze-fedavg-table.py DIR [--small 5-9]
"""
import csv
import glob
import json
import os
import sys


def first_at(metrics, value):
    with open(metrics) as f:
        for r in csv.DictReader(f):
            if float(r["test_accuracy"]) >= value:
                return float(r["time_s"])
    return float("inf")


def run_row(d, small):
    with open(os.path.join(d, "run.json")) as f:
        j = json.load(f)
    sc = j["scenario"]
    groups = sc["compute"].get("groups", [])
    cap = groups[0].get("memory_bytes", 0) if groups else 0
    fz = json.dumps(sc.get("freeze"), separators=(",", ":"))
    with open(os.path.join(d, "nodes.csv")) as f:
        nodes = list(csv.DictReader(f))
    n = sc["nodes"]
    large = [r for r in nodes[:n] if int(r["node"]) not in small]
    sm = [r for r in nodes[:n] if int(r["node"]) in small]
    mean_steps = lambda rows: sum(float(r["steps"]) for r in rows) / len(rows)
    with open(os.path.join(d, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    t = j["targets"][0]
    stats = j.get("algorithm_stats", {})
    return {
        "key": (cap, fz), "seed": j["seed"],
        "t75": t["time_s"] if t["reached"] else float("inf"),
        "t70": first_at(os.path.join(d, "metrics.csv"), 0.70),
        "acc": float(rows[-1]["test_accuracy"]),
        "best": max(float(r["test_accuracy"]) for r in rows),
        "bytes": float(rows[-1]["bytes_sent"]),
        "rounds": stats.get("rounds", float("nan")),
        "part": mean_steps(sm) / mean_steps(large),
        "peak_large": max(float(r["mem_peak_bytes"]) for r in large),
        "peak_small": max(float(r["mem_peak_bytes"]) for r in sm),
        "peak_server": float(nodes[n]["mem_peak_bytes"]),
    }


def cell(vals, fmt):
    fin = [v for v in vals if v != float("inf")]
    per = ", ".join("never" if v == float("inf") else fmt % v for v in vals)
    if len(fin) < len(vals):
        return f"{len(fin)}/{len(vals)} reached ({per})"
    return (fmt % (sum(fin) / len(fin))) + f" ({per})"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: freeze-fedavg-table.py DIR [--small A-B]")
    d = sys.argv[1].rstrip("/")
    a, b = 5, 9
    if len(sys.argv) == 4 and sys.argv[2] == "--small":
        a, b = (int(x) for x in sys.argv[3].split("-"))
    small = set(range(a, b + 1))
    runs = [run_row(r, small) for r in sorted(glob.glob(os.path.join(d, "runs", "*")))
            if os.path.exists(os.path.join(r, "nodes.csv"))]
    keys = list(dict.fromkeys(r["key"] for r in runs))
    out = ["| small clients' memory | freeze | time to 0.75 (s) | first eval >= 0.70 (s) | "
           "final accuracy | best accuracy | bytes sent (MB) | rounds | small/large steps | "
           "peak memory large / small / server (bytes) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for k in keys:
        rs = sorted((r for r in runs if r["key"] == k), key=lambda r: r["seed"])
        g = lambda name: [r[name] for r in rs]
        out.append(f"| {k[0]:.3g} | `{k[1]}` | {cell(g('t75'), '%.2f')} | "
                   f"{cell(g('t70'), '%.1f')} | {cell(g('acc'), '%.3f')} | "
                   f"{cell(g('best'), '%.3f')} | {cell([v / 1e6 for v in g('bytes')], '%.0f')} | "
                   f"{cell(g('rounds'), '%.0f')} | {cell(g('part'), '%.2f')} | "
                   f"{max(g('peak_large')):.0f} / {max(g('peak_small')):.0f} / "
                   f"{max(g('peak_server')):.0f} |")
    text = "\n".join(out) + "\n"
    with open(os.path.join(d, "table-memory.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
