#!/usr/bin/env python3
"""compare.py -- dtsim against SimGrid (bench/peers/simgrid_ring.cpp) on the
same timing-only ring, A and B alternating run by run.  Prints a markdown
table: median [min, max] of each simulator's CPU time (user + sys of the
whole process, from wait4) and wall time, the ratios of the medians, the
ratio of the simulation loops' CPU times alone (each program reports its
own: dtsim's run.json cpu_s, SimGrid's Engine::run), and
for the homogeneous D-PSGD ring whether both end their last step at the
same simulated instant (to 1e-12 relative: each sums the rounds' lengths
in its own order, so the last bits may differ).  Run by `make bench`.

usage: compare.py DTSIM SIMGRID_RING [RUNS] [STEPS] [NODES,...] [PROTOCOLS,...] [SIGMAS,...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios",
                        "ring-none-dpsgd.json")
STEP_S, LAT, BW, BYTES = 0.01, 0.0005, 1.25e9, 1e7


def timed(cmd):
    """Runs cmd; returns (stdout, CPU seconds of the child, wall seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if status != 0:
        sys.exit("compare.py: error: %s failed" % " ".join(cmd))
    return out, ru.ru_utime + ru.ru_stime, wall


def run_dtsim(dtsim, alg, n, steps, sigma, outdir):
    shutil.rmtree(outdir, ignore_errors=True)   # a run folder is never reused (dtsim run refuses it)
    cmd = [dtsim, "run", SCENARIO, "-o", outdir, "--quiet",
           "--set", "nodes=%d" % n, "--set", "stop.steps=%d" % steps,
           "--set", "algorithm.name=%s" % alg, "--set", "model.message_bytes=%g" % BYTES,
           "--set", "network.discipline=fair"]
    if alg == "adpsgd":   # a horizon: stop.steps counts all nodes' steps together
        # (a step bound that never binds, within the scenario checker's 1e12 in all)
        cmd += ["--set", "stop.steps=%d" % (5 * 10**11 // n),
                "--set", "stop.time_s=%.17g" % (steps * STEP_S)]
    if sigma > 0:
        cmd += ["--set", "compute.noise.dist=lognormal", "--set", "compute.noise.sigma=%g" % sigma]
    _, cpu, wall = timed(cmd)
    with open(os.path.join(outdir, "run.json")) as f:
        rj = json.load(f)
    return cpu, wall, rj["sim_time_s"], rj["events"], rj["cpu_s"]


def run_simgrid(sg, alg, n, steps, sigma):
    out, cpu, wall = timed([sg, alg, str(n), str(steps), str(STEP_S), str(LAT), str(BW),
                            str(BYTES), str(sigma), "1"])
    fields = dict(kv.split("=") for kv in out.split()[2:])
    return cpu, wall, float(fields["last_step_s"]), float(fields["run_cpu_s"])


def med(xs):
    s = sorted(xs)
    return s[len(s) // 2]


def cell(xs):
    return "%.3f [%.3f, %.3f]" % (med(xs), min(xs), max(xs))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    dtsim, sg = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    sizes = [int(x) for x in (sys.argv[5] if len(sys.argv) > 5 else "16,64,256,1024").split(",")]
    protocols = (sys.argv[6] if len(sys.argv) > 6 else "dpsgd,adpsgd").split(",")
    sigmas = [float(x) for x in (sys.argv[7] if len(sys.argv) > 7 else "0,0.5").split(",")]
    tmp = tempfile.mkdtemp(prefix="dtsim-peer-")
    print("| protocol | speeds | nodes | dtsim CPU s | SimGrid CPU s | CPU ratio | dtsim wall s "
          "| SimGrid wall s | wall ratio | loop CPU ratio | dtsim events | same simulated time |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    try:
        for alg in protocols:
            for sigma in sigmas:
                for n in sizes:
                    a_cpu, a_wall, b_cpu, b_wall, a_loop, b_loop = [], [], [], [], [], []
                    for k in range(runs):
                        order = ("a", "b") if k % 2 == 0 else ("b", "a")
                        for who in order:
                            if who == "a":
                                c, w, t_a, ev, lp = run_dtsim(dtsim, alg, n, steps, sigma, tmp)
                                a_loop.append(lp)
                                a_cpu.append(c)
                                a_wall.append(w)
                            else:
                                c, w, t_b, lp = run_simgrid(sg, alg, n, steps, sigma)
                                b_loop.append(lp)
                                b_cpu.append(c)
                                b_wall.append(w)
                    if alg == "dpsgd" and sigma == 0:
                        # both sum 200 rounds of a + 2M/B in their own order:
                        # equal up to the rounding of those sums
                        same = ("yes (%.17g vs %.17g s)" % (t_a, t_b)
                                if abs(t_a - t_b) <= 1e-12 * t_a
                                else "no: %.17g vs %.17g s" % (t_a, t_b))
                    else:
                        same = "n/a (%.4g vs %.4g s)" % (t_a, t_b)
                    print("| %s | %s | %d | %s | %s | %.1f | %s | %s | %.1f | %.1f | %d | %s |" % (
                        alg, "homogeneous" if sigma == 0 else "lognormal %.1f" % sigma, n,
                        cell(a_cpu), cell(b_cpu), med(b_cpu) / med(a_cpu), cell(a_wall),
                        cell(b_wall), med(b_wall) / med(a_wall), med(b_loop) / med(a_loop), ev,
                        same), flush=True)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
