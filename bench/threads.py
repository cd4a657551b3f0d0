#!/usr/bin/env python3
"""bench/threads.py -- speed-up of --threads on whole runs, A/B interleaved.

For each case, runs `dtsim run` with every thread count in turn, REPS times
(round r runs 1, 2, ... threads back to back, so load drifts hit all
alike), and reports per thread count the median whole-process wall time
(clock_gettime through time.monotonic), the median whole-process CPU time
(getrusage of the child: user + system), and the medians of run.json's
event-loop wall_s and cpu_s and of math_cpu_s (CPU inside the pool's jobs:
the part that runs in parallel; nan on one thread).  It also checks that metrics.csv and nodes.csv
are the same bytes for every thread count.  Timings only: no assertion.

usage: bench/threads.py [--reps R] [--threads 1,2] [--steps N] [--base DTSIM0] DTSIM CASE...
CASE is scenario.json[:--set PATH=VALUE,...]; --base adds a binary without
--threads (the one-thread build before threads existed) to each round, to
show that the one-thread path did not slow down.
"""
import json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

def run_once(dtsim, scn, sets, threads, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [dtsim, "run", scn, "-o", out, "--quiet"]
    if isinstance(threads, int):
        cmd += ["--threads", str(threads)]
    else:
        cmd[0] = threads[1]
    for s in sets:
        cmd += ["--set", s]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    files = {}
    for name in ("metrics.csv", "nodes.csv"):
        with open(os.path.join(out, name), "rb") as f:
            files[name] = f.read()
    return wall, cpu, rj["wall_s"], rj["cpu_s"], rj.get("math_cpu_s") or float("nan"), files

def main(argv):
    reps, threads, steps, base = 5, [1, 2], None, None
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--reps":
            reps = int(argv.pop(0))
        elif opt == "--threads":
            threads = [int(x) for x in argv.pop(0).split(",")]
        elif opt == "--steps":
            steps = int(argv.pop(0))
        elif opt == "--base":
            base = argv.pop(0)
    dtsim, cases = argv[0], argv[1:]
    if base:
        threads = [("base", base)] + threads
    tmp = tempfile.mkdtemp(prefix="dtsim-bench-threads-")
    print(f"machine: {os.cpu_count()} cores, load average at start {os.getloadavg()}")
    for case in cases:
        scn, _, rest = case.partition(":")
        sets = [s for s in rest.split(",") if s]
        if steps:
            sets.append(f"stop.steps={steps}")
        m = {t: [] for t in threads}
        ref = None
        for _ in range(reps):
            for t in threads:
                res = run_once(dtsim, scn, sets, t, os.path.join(tmp, "out"))
                if ref is None:
                    ref = res[5]
                elif res[5] != ref:
                    print(f"  OUTPUTS DIFFER with {t} threads")
                m[t].append(res[:5])
        print(f"{os.path.basename(scn)} {' '.join(sets)}  (reps {reps}, load {os.getloadavg()[0]:.1f})")
        base = [statistics.median(x[k] for x in m[threads[0]]) for k in range(4)]
        for t in threads:
            med = [statistics.median(x[k] for x in m[t]) for k in range(5)]
            name = t[0] if isinstance(t, tuple) else f"threads {t}"
            print(f"  {name:>9}: process wall {med[0]:7.2f} s cpu {med[1]:7.2f} s | "
                  f"loop wall {med[2]:7.2f} s cpu {med[3]:7.2f} s math cpu {med[4]:7.2f} s | "
                  f"speed-up wall {base[0] / med[0]:.2f}x loop {base[2] / med[2]:.2f}x")
    shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main(sys.argv[1:])
