#!/usr/bin/env python3
"""papers-nodes.py -- the nodes' own models in a replication's sweep: for
each grid point, the mean and the worst test accuracy of the workers' local
models at the last evaluation instant (each run's node_metrics.csv, written
with metrics.per_node), as mean +- sd (min-max) over the replicates, and
the mean's paired difference against a baseline grid point (the run of the
same replicate that differs only in PATH=VALUE).

    plots/papers-nodes.py SWEEP_DIR --baseline PATH=VALUE

Writes SWEEP_DIR/table-nodes.md.  Only means, deviations, ranges and paired
differences of dtsim's numbers.
"""
import csv
import statistics
import sys


def stats(xs):
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return "%.4f ± %.4f (%.4f–%.4f)" % (statistics.mean(xs), sd, min(xs), max(xs))


def label(value):
    return value.replace('"', '').strip('{}').replace(',', ' ')


def main():
    if len(sys.argv) != 4 or sys.argv[2] != "--baseline" or "=" not in sys.argv[3]:
        sys.exit("usage: plots/papers-nodes.py SWEEP_DIR --baseline PATH=VALUE")
    d = sys.argv[1].rstrip("/")
    bpath, bvalue = sys.argv[3].split("=", 1)
    with open(d + "/runs.csv", newline="") as f:
        runs = list(csv.DictReader(f))
    params = [k for k in runs[0] if k not in ("run", "name", "replicate", "seed", "git_commit")]
    if bpath not in params:
        sys.exit("papers-nodes.py: error: %s is not a swept column (%s)" % (bpath, ", ".join(params)))
    cells = {}   # grid point -> replicate -> (mean, worst)
    order = []
    for r in runs:
        with open("%s/runs/%s/node_metrics.csv" % (d, r["name"]), newline="") as f:
            rows = list(csv.DictReader(f))
        last = max(float(x["time_s"]) for x in rows)
        acc = [float(x["test_accuracy"]) for x in rows if float(x["time_s"]) == last]
        key = tuple(r[p] for p in params)
        if key not in cells:
            cells[key] = {}
            order.append(key)
        cells[key][r["replicate"]] = (sum(acc) / len(acc), min(acc))
    bi = params.index(bpath)
    out = ["| %s | mean local accuracy | worst local accuracy | mean − baseline's |" % " | ".join(params),
           "|%s---:|---:|---:|" % ("---|" * len(params))]
    for key in order:
        reps = cells[key]
        base = cells.get(key[:bi] + (bvalue,) + key[bi + 1:])
        diff = "n/a"
        if base:
            ds = [reps[r][0] - base[r][0] for r in reps if r in base]
            diff = "%+.4f (%+.4f–%+.4f)" % (statistics.mean(ds), min(ds), max(ds))
        out.append("| %s | %s | %s | %s |" % (" | ".join(label(v) for v in key),
                                            stats([v[0] for v in reps.values()]),
                                            stats([v[1] for v in reps.values()]), diff))
    with open(d + "/table-nodes.md", "w") as f:
        f.write("\n".join(out) + "\n")
    print("papers-nodes.py: wrote %s/table-nodes.md" % d)


if __name__ == "__main__":
    main()
