#!/usr/bin/env python3
"""star.py -- dtsim's fair network against SimGrid on a star: a synchronous
parameter server (dtsim's ps-sync, bench/peers/simgrid_ring.cpp's `ps`)
with NODES workers in four speed groups (step 10 ms x 1, 1.25, 1.5, 1.75 by
quarter of the workers), 10 MB messages over 1.25 GB/s NICs (8 ms alone)
and 0.5 ms of latency, fair NICs in dtsim, CM02 in SimGrid.  The groups'
gradients reach the server's downlink at different instants and share it
with what is left of the earlier ones, so the comparison exercises
max-min sharing with flows starting and ending at different times.
Prints a markdown table: the instant the last worker ends its STEPS-th
step in each simulator (SimGrid at its default precision 1e-5 and at
PRECISION), their relative differences, and each simulator's whole-process
CPU time (median of RUNS, A/B alternating).

usage: star.py DTSIM SIMGRID_RING [RUNS] [STEPS] [NODES,...] [PRECISION]
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
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("star.py: error: %s failed" % " ".join(cmd))
    return out, ru.ru_utime + ru.ru_stime, time.monotonic() - t0


def groups(n):
    q = n // 4
    return json.dumps([{"nodes": ["%d-%d" % (g * q, (g + 1) * q - 1)], "slowdown": 1 + 0.25 * g}
                       for g in range(1, 4)])


def run_dtsim(dtsim, n, steps, outdir):
    shutil.rmtree(outdir, ignore_errors=True)   # a run folder is never reused (dtsim run refuses it)
    _, cpu, _ = timed([dtsim, "run", SCENARIO, "-o", outdir, "--quiet", "--set", "nodes=%d" % n,
                       "--set", "algorithm.name=ps-sync", "--set", "stop.steps=%d" % steps,
                       "--set", "network.discipline=fair",
                       "--set", "model.message_bytes=%g" % BYTES,
                       "--set", "compute.groups=" + groups(n)])
    with open(os.path.join(outdir, "run.json")) as f:
        rj = json.load(f)
    return cpu, rj["sim_time_s"], rj["events"], rj["cpu_s"]


def run_simgrid(sg, n, steps, precision=None):
    cmd = [sg, "ps", str(n), str(steps), str(STEP_S), str(LAT), str(BW), str(BYTES), "0", "1"]
    if precision:
        cmd.append(precision)
    out, cpu, _ = timed(cmd)
    fields = dict(kv.split("=") for kv in out.split()[2:])
    return cpu, float(fields["last_step_s"])


def med(xs):
    return sorted(xs)[len(xs) // 2]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    dtsim, sg = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    sizes = [int(x) for x in (sys.argv[5] if len(sys.argv) > 5 else "16,32,64,256").split(",")]
    prec = sys.argv[6] if len(sys.argv) > 6 else "1e-12"
    tmp = tempfile.mkdtemp(prefix="dtsim-star-")
    print("| workers | dtsim last step s | SimGrid (1e-5) s | rel. diff | SimGrid (%s) s "
          "| rel. diff | dtsim CPU s | SimGrid CPU s | dtsim events | dtsim loop M events/s |"
          % prec)
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for n in sizes:
            a_cpu, b_cpu = [], []
            for k in range(runs):
                for who in (("a", "b") if k % 2 == 0 else ("b", "a")):
                    if who == "a":
                        c, t_a, ev, loop = run_dtsim(dtsim, n, steps, tmp)
                        a_cpu.append(c)
                    else:
                        c, t_b = run_simgrid(sg, n, steps, prec)
                        b_cpu.append(c)
            _, t_d = run_simgrid(sg, n, steps)
            print("| %d | %.17g | %.17g | %.1e | %.17g | %.1e | %.3f | %.3f | %d | %.2f |" % (
                n, t_a, t_d, abs(t_a - t_d) / t_d, t_b, abs(t_a - t_b) / t_b, med(a_cpu),
                med(b_cpu), ev, ev / loop / 1e6), flush=True)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
