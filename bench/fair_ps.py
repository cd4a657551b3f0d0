#!/usr/bin/env python3
"""fair_ps.py -- a parameter server's events per CPU second under fair NICs.

Runs the timing-only scenario (bench/scenarios/ring-none-dpsgd.json) as a
parameter server (ps-sync or ps-async) with 10 MB messages, fair NICs, at
each worker count; workers equal ("equal": a broadcast's and a gather's n
flows start together) or with lognormal step noise, sigma 0.5 ("lognormal":
gradients reach the server one at a time, which is what made every event
cost O(n) before the server's NICs were kept in virtual time).  Reports the
median over REPS of the loop's CPU time (run.json cpu_s), the events and
events per loop CPU second; with --base DTSIM0 each repetition also runs
DTSIM0 right after DTSIM (A/B interleaved) and the last column compares
their metrics.csv.  Timings only, no assertion.

usage: bench/fair_ps.py [--reps R] [--algos ps-sync,ps-async] [--noise equal,lognormal]
                        [--workers N:STEPS,...] [--base DTSIM0] DTSIM
"""
import json, os, shutil, statistics, subprocess, sys, tempfile

SCN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios/ring-none-dpsgd.json")
NOISE = {"equal": None, "lognormal": '{"dist": "lognormal", "sigma": 0.5}'}


def once(dtsim, n, steps, algo, noise, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [dtsim, "run", SCN, "-o", out, "--quiet", "--set", "nodes=%d" % n,
           "--set", "algorithm.name=" + algo, "--set", "stop.steps=%d" % steps,
           "--set", "network.discipline=fair", "--set", "model.message_bytes=1e7"]
    if NOISE[noise]:
        cmd += ["--set", "compute.noise=" + NOISE[noise]]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("%s: %s" % (" ".join(cmd), p.stderr.decode().strip()))
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    with open(os.path.join(out, "metrics.csv")) as f:
        metrics = f.read()
    return rj["cpu_s"], rj["events"], metrics


def main():
    a = sys.argv[1:]
    reps, base = 3, None
    algos, noises = ["ps-sync", "ps-async"], ["equal", "lognormal"]
    workers = [(64, 200), (256, 50), (1024, 20), (4096, 5)]
    while a and a[0].startswith("--"):
        k = a.pop(0)
        if k == "--reps": reps = int(a.pop(0))
        elif k == "--algos": algos = a.pop(0).split(",")
        elif k == "--noise": noises = a.pop(0).split(",")
        elif k == "--workers":
            workers = [tuple(int(v) for v in w.split(":")) for w in a.pop(0).split(",")]
        elif k == "--base": base = a.pop(0)
        else: sys.exit(__doc__)
    if len(a) != 1:
        sys.exit(__doc__)
    bins = [("new", a[0])] + ([("base", base)] if base else [])
    tmp = tempfile.mkdtemp(prefix="dtsim-fairps-")
    print("median of %d runs; loop CPU s from run.json cpu_s\n" % reps)
    hdr = "| protocol | workers | steps | noise |"
    for k, _ in bins:
        hdr += " %s events | %s loop CPU s | %s M events/s |" % (k, k, k)
    if base:
        hdr += " CPU base / new | metrics.csv |"
    print(hdr)
    print("|" + "---|" * 4 + "---:|" * (3 * len(bins)) + ("---:|---|" if base else ""))
    try:
        for algo in algos:
            for noise in noises:
                for n, steps in workers:
                    res = {k: [] for k, _ in bins}
                    for _ in range(reps):
                        for k, b in bins:
                            res[k].append(once(b, n, steps, algo, noise, os.path.join(tmp, k)))
                    row = "| %s | %d | %d | %s |" % (algo, n, steps, noise)
                    cpu = {}
                    for k, _ in bins:
                        cpu[k] = statistics.median(r[0] for r in res[k])
                        ev = res[k][0][1]
                        row += " %d | %.4f | %.2f |" % (ev, cpu[k], ev / cpu[k] / 1e6)
                    if base:
                        same = res["new"][0][2] == res["base"][0][2]
                        row += " %.1f | %s |" % (cpu["base"] / cpu["new"],
                                                 "identical" if same else "differs")
                    print(row)
                    sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
