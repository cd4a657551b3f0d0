#!/usr/bin/env python3
"""bench/round.py -- the D-PSGD round against the raw CBLAS step, A/B interleaved.

Runs the case of bench/RESULTS.md ("The D-PSGD round"): the 16-node
Fashion-MNIST MLP with D-PSGD on one thread, 300 steps per node (4,800
rounds), evaluations cut to two instants of 1,000 + 1,000 samples, with
each binary in turn, then (with --bench) `bench_models mlp 32` for B+ (the
raw CBLAS step + inline update, us per step), REPS times; reports per
binary the median loop CPU per round (run.json cpu_s / rounds), its range,
and the ratio to the median B+, with the load average seen.  It also
checks that every binary wrote the same metrics.csv.  Timings only: no
assertion.  OPENBLAS_NUM_THREADS=1 is set for every child.

usage: bench/round.py [--reps R] [--bench BENCH_MODELS] NAME=DTSIM...
"""
import json, os, shutil, statistics, subprocess, sys, tempfile

SCN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios",
                   "fashion-mnist-mlp.json")
SETS = ["stop.steps=300", "metrics.every_s=1000", "metrics.eval_samples=1000",
        "metrics.test_samples=1000"]
ROUNDS = 16 * 300

def main(argv):
    reps, bench, bins = 5, None, []
    i = 0
    while i < len(argv):
        if argv[i] == "--reps":
            reps = int(argv[i + 1]); i += 2
        elif argv[i] == "--bench":
            bench = argv[i + 1]; i += 2
        else:
            name, _, path = argv[i].partition("=")
            if not path:
                sys.exit(__doc__)
            bins.append((name, path)); i += 1
    if not bins:
        sys.exit(__doc__)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    tmp = tempfile.mkdtemp(prefix="dtsim-round.")
    cpu = {n: [] for n, _ in bins}
    bplus, loads = [], []
    try:
        for r in range(reps):
            csv = None
            for name, path in bins:
                out = os.path.join(tmp, name)
                shutil.rmtree(out, ignore_errors=True)
                cmd = [path, "run", SCN, "-o", out, "--quiet", "--threads", "1"]
                for s in SETS:
                    cmd += ["--set", s]
                subprocess.run(cmd, env=env, check=True)
                cpu[name].append(json.load(open(os.path.join(out, "run.json")))["cpu_s"])
                m = open(os.path.join(out, "metrics.csv"), "rb").read()
                if csv is not None and m != csv:
                    print("round.py: metrics.csv differs for", name, file=sys.stderr)
                csv = m
            if bench:
                o = subprocess.run([bench, "mlp", "32"], env=env, capture_output=True,
                                   text=True, check=True).stdout
                bplus.append(float(o.strip().split("\n")[-1].split("|")[11]))
            loads.append(os.getloadavg()[0])
            print(r, " ".join("%s %.3f" % (n, cpu[n][-1]) for n, _ in bins),
                  "B+ %.1f" % bplus[-1] if bplus else "", "load %.1f" % loads[-1], flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, _ in bins:
        v = [1e6 * c / ROUNDS for c in cpu[name]]
        line = "%s: %.0f us per round [%.0f, %.0f]" % (name, statistics.median(v), min(v), max(v))
        if bplus:
            line += ", B+ %.1f us, ratio %.2f" % (statistics.median(bplus),
                                                 statistics.median(v) / statistics.median(bplus))
        print(line)
    print("load average %.1f-%.1f" % (min(loads), max(loads)))

if __name__ == "__main__":
    main(sys.argv[1:])
