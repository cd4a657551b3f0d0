#!/usr/bin/env python3
"""bench/setup.py -- set-up against the run, by node count.

Runs the timing-only ring (bench/scenarios/ring-none-dpsgd.json) at each
node count REPS times and reports medians of the whole process's CPU time
(user + sys from os.wait4), of the event loop's CPU time (run.json's
cpu_s) and of their difference: set-up (scenario, topology and its
statistics, cluster) and teardown (outputs), i.e. everything that is not
the run.  With --base DTSIM0 each round also runs DTSIM0 right after DTSIM
(A/B interleaved, so load drifts hit both alike).  Timings only, no
assertion.

usage: bench/setup.py [--reps R] [--steps S] [--nodes N1,N2,...] [--base DTSIM0] DTSIM
"""
import json, os, shutil, statistics, subprocess, sys, tempfile

SCN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios/ring-none-dpsgd.json")

def once(dtsim, n, steps, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [dtsim, "run", SCN, "-o", out, "--quiet", "--set", "nodes=%d" % n,
           "--set", "stop.steps=%d" % steps]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("%s: %s" % (" ".join(cmd), p.stderr.read().decode().strip()))
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    proc = ru.ru_utime + ru.ru_stime
    return proc, rj["cpu_s"], rj["topology"]

def med(xs):
    return statistics.median(xs)

def main():
    a = sys.argv[1:]
    reps, steps, nodes, base = 3, 1000, [16, 64, 256, 1024, 4096, 16384], None
    while a and a[0].startswith("--"):
        k = a.pop(0)
        if k == "--reps": reps = int(a.pop(0))
        elif k == "--steps": steps = int(a.pop(0))
        elif k == "--nodes": nodes = [int(float(x)) for x in a.pop(0).split(",")]
        elif k == "--base": base = a.pop(0)
        else: sys.exit(__doc__)
    if len(a) != 1:
        sys.exit(__doc__)
    bins = [("new", a[0])] + ([("base", base)] if base else [])
    tmp = tempfile.mkdtemp(prefix="dtsim-setup-")
    print("%d steps per node, median of %d runs (CPU s: whole process from wait4; loop from "
          "run.json cpu_s; set-up = process - loop)\n" % (steps, reps))
    print("| binary | nodes | process CPU s | loop CPU s | set-up CPU s | set-up / loop | diameter | lambda2 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for n in nodes:
            res = {k: [] for k, _ in bins}
            topo = {}
            for r in range(reps):
                for k, b in bins:
                    proc, loop, t = once(b, n, steps, os.path.join(tmp, k))
                    res[k].append((proc, loop, proc - loop))
                    topo[k] = t
            for k, _ in bins:
                p = med([x[0] for x in res[k]])
                l = med([x[1] for x in res[k]])
                s = med([x[2] for x in res[k]])
                t = topo[k]
                lam = t.get("lambda2")
                print("| %s | %d | %.3f | %.3f | %.3f | %.1f%% | %s | %s |" % (
                    k, n, p, l, s, 100 * s / l if l > 0 else float("nan"),
                    t.get("diameter") if t.get("diameter") is not None else "null",
                    "%.6g" % lam if lam is not None else "null"))
                sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

main()
