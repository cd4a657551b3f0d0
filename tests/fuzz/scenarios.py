#!/usr/bin/env python3
"""scenarios.py -- the random valid-scenario fuzzer (docs/reliability.md).

Draws scenarios over every protocol, topology kind, model, heterogeneity,
network and fault feature, with degenerate sizes (1-2 nodes, every node down,
every message lost, zero latency, huge and tiny times), runs each through
dtsim (built with or without sanitizers) under a time limit, and checks:

  - exit status 0, 1 or 2, with a message on stderr for 1 and 2 (every
    scenario sets limits.events to 2e5 or 2e6, so that every run ends
    well within the time limit under the sanitizers);
  - nothing written on 2;
  - no watchdog ("no_progress") and no sanitizer report on a scenario
    dtsim accepted;
  - metrics.csv: time_s, steps and bytes_sent never decrease;
  - nodes.csv: compute_s + network_s + idle_s + down_s is the run time, no
    column negative;
  - a rerun writes byte-identical CSV files;
  - the resolved scenario in run.json reruns to byte-identical CSV files.

A failing case is written to FINDINGS/NAME.json with FINDINGS/NAME.txt saying
what broke; the exit status is 1 when any case failed.  It does not judge
whether a protocol converges, and it generates no file inputs (traces, edge
lists: the libFuzzer harnesses cover those).

usage: scenarios.py DTSIM [--cases N] [--seed S] [--timeout SECONDS]
                          [--findings DIR] [--work DIR] [--quiet]
                          [--only K] [--print]

--only K runs case K of the seed alone (the scenario a campaign's
seedS-caseK was); --print writes the scenarios drawn to stdout as JSON
lines instead of running them.
"""
import argparse
import csv
import filecmp
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

PROTOCOLS = ["adpsgd", "allreduce", "backup", "delay-adaptive", "dpsgd", "eager",
             "epidemic", "fedavg", "gossip", "hop", "local-sgd", "prague", "ps-async",
             "ps-sync", "rennala", "ringmaster", "sdfeel", "sgp", "ssp"]
NOISES = ["constant", "uniform", "exponential", "lognormal", "normal",
          "shifted_exponential", "gamma", "pareto"]
CSV_FILES = ["metrics.csv", "nodes.csv", "node_metrics.csv", "trace.csv"]


def pick_time(rng, typical):
    """A time around `typical`, now and then tiny, zero-ish or huge."""
    r = rng.random()
    if r < 0.05:
        return 1e-9
    if r < 0.10:
        return 1e6
    return typical * 10 ** rng.uniform(-1, 1)


def nodes_of(rng, n):
    k = rng.randint(1, n)
    return sorted(rng.sample(range(n), k))


def topology(rng, n):
    kinds = ["ring", "complete", "star", "binary_tree", "exponential"]
    if n >= 3:
        kinds += ["erdos_renyi", "ring_lattice", "watts_strogatz", "barabasi_albert"]
    if n >= 1 and (n & (n - 1)) == 0:
        kinds.append("hypercube")
    kinds += ["torus2d", "torus3d"]
    kind = rng.choice(kinds)
    t = {"kind": kind}
    if kind == "erdos_renyi":
        t["p"] = rng.choice([0.01, 0.3, 1.0])   # 0.01: often disconnected
    elif kind in ("ring_lattice", "watts_strogatz"):
        t["k"] = rng.randint(1, max(1, (n - 1) // 2))
        if kind == "watts_strogatz":
            t["beta"] = rng.choice([0, 0.1, 1])
    elif kind == "barabasi_albert":
        t["m"] = rng.randint(1, min(3, n - 1))
    elif kind == "torus2d":
        t["rows"] = next(r for r in range(1, n + 1) if n % r == 0 and r * r >= n)
        t["cols"] = n // t["rows"]
    elif kind == "torus3d":
        t["rows"], t["cols"], t["layers"] = n, 1, 1
    if rng.random() < 0.2:
        t["mixing"] = rng.choice(["metropolis_hastings", "max_degree", "uniform"])
    return t


def model_and_data(rng, n, s):
    kind = rng.choice(["softmax", "logistic", "mlp", "linear", "none", "softmax"])
    if kind == "none":
        s["model"] = {"kind": "none", "message_bytes": rng.choice([0.5, 1e3, 1e6])}
        return
    s["model"] = {"kind": kind}
    if kind == "mlp":
        s["model"]["hidden"] = [rng.choice([2, 8])]
    data = {"train": max(n * 8, rng.choice([64, 512])), "test": rng.choice([16, 128]),
            "features": rng.choice([1, 4, 12])}
    if kind == "softmax" or kind == "mlp":
        data["classes"] = rng.choice([2, 3, 5])
    elif kind == "logistic":
        data["kind"] = "synthetic-logistic"
    elif kind == "linear":
        data["kind"] = "synthetic-regression"
    data["partition"] = rng.choice(["iid", "iid", "dirichlet", "shards", "quantity"]
                                   if kind != "linear" else ["iid"])
    if data["partition"] == "dirichlet":
        data["alpha"] = rng.choice([0.1, 1.0])
    s["data"] = data
    s["algorithm"]["lr"] = rng.choice([0.0, 0.01, 0.1, 0.5])
    s["algorithm"]["batch"] = rng.choice([1, 4, 8])


def compute(rng, n, step):
    c = {"step_time_s": step}
    if rng.random() < 0.5:
        d = rng.choice(NOISES)
        noise = {"dist": d}
        if d == "uniform":
            noise["low"], noise["high"] = 0.5, rng.choice([0.5, 2.0])
        elif d in ("lognormal", "normal"):
            noise["sigma"] = rng.choice([0, 0.3, 2])
        elif d == "shifted_exponential":
            noise["shift"] = rng.choice([0, 0.5])
        elif d == "gamma":
            noise["shape"] = rng.choice([0.5, 4])
        elif d == "pareto":
            noise["alpha"] = rng.choice([1.5, 3])
        c["noise"] = noise
    if rng.random() < 0.4:
        c["groups"] = [{"nodes": nodes_of(rng, n), "slowdown": rng.choice([0.5, 3, 100])}]
    if rng.random() < 0.4:
        sl = []
        for _ in range(rng.randint(1, 2)):
            k = rng.choice(["window", "markov", "periodic"])
            d = {"kind": k, "factor": rng.choice([0.5, 2, 10])}
            if k == "window":
                d["start_s"] = step * rng.choice([0, 5])
                if rng.random() < 0.7:
                    d["end_s"] = d["start_s"] + step * rng.choice([1, 50])
            elif k == "markov":
                d["mean_slow_s"] = step * rng.choice([0.1, 10])
                d["mean_normal_s"] = step * rng.choice([1, 30])
            else:
                d["period_s"] = step * rng.choice([2, 40])
                d["duration_s"] = d["period_s"] / 2
            if rng.random() < 0.5:
                d["nodes"] = nodes_of(rng, n)
            sl.append(d)
        c["slowdowns"] = sl
    return c


def network(rng, n, step):
    net = {}
    r = rng.random()
    net["latency_s"] = 0 if r < 0.15 else pick_time(rng, step / 10)
    net["bandwidth_Bps"] = rng.choice([1e3, 1e6, 1.25e9])
    if rng.random() < 0.3:
        net["loss"] = rng.choice([0.01, 0.3, 0.999999])
    if rng.random() < 0.2:
        net["jitter"] = rng.choice([{"dist": "uniform", "low_s": 0, "high_s": step},
                                    {"dist": "exponential", "mean_s": step / 10}])
        net["reorder"] = rng.random() < 0.5
    if rng.random() < 0.2:
        net["discipline"] = "fair"
    if rng.random() < 0.15:
        net["outages"] = [{"start_s": step * 3, "end_s": step * 20}]
    if rng.random() < 0.2 and n >= 2:
        net["links"] = [{"from": [0], "to": [n - 1], "latency_s": step,
                         "bandwidth_Bps": 1e5}]
    if rng.random() < 0.2:
        net["compression_ratio"] = rng.choice([1, 4])
    return net


def faults(rng, n, step):
    ev = []
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.6:
            d = {"kind": "schedule", "down_s": step * rng.choice([0, 3, 30])}
            if rng.random() < 0.7:
                d["up_s"] = d["down_s"] + step * rng.choice([1, 20, 1e9])
        else:
            d = {"kind": "exponential", "mtbf_s": step * rng.choice([5, 100]),
                 "mttr_s": step * rng.choice([1, 10])}
        if rng.random() < 0.6:   # absent: every node (all down)
            d["nodes"] = nodes_of(rng, n)
        ev.append(d)
    f = {"events": ev}
    for key, vals in (("step", ["restart", "resume"]), ("messages", ["drop", "keep_sent"]),
                      ("rejoin", ["keep", "neighbour"])):
        if rng.random() < 0.4:
            f[key] = rng.choice(vals)
    return f


def scenario(rng, seed):
    n = rng.choice([1, 2, 3, 4, 5, 8, 16])
    step = pick_time(rng, 0.01)
    s = {"seed": seed, "nodes": n, "algorithm": {"name": rng.choice(PROTOCOLS)}}
    s["compute"] = compute(rng, n, step)
    s["topology"] = topology(rng, n)
    model_and_data(rng, n, s)
    s["network"] = network(rng, n, step)
    if rng.random() < 0.35:
        s["faults"] = faults(rng, n, step)
    stop = {}
    r = rng.random()
    if r < 0.6:
        stop["time_s"] = step * rng.choice([10, 100, 500])
    elif r < 0.8:
        stop["steps"] = rng.choice([1, 20, 200])
    else:
        stop["time_s"] = step * 200
        stop["steps"] = rng.choice([5, 50])
    s["stop"] = stop
    if rng.random() < 0.4:
        s["metrics"] = {"every_s": step * rng.choice([0.5, 3, 1000])}
        if rng.random() < 0.3:
            s["metrics"]["per_node"] = True
    if rng.random() < 0.2:
        s["output"] = {"trace": True}
    # a budget every run ends within under the sanitizers: the default
    # (10^9 events) would let a valid run go on for an hour; with it the
    # fuzzer checks the estimate (exit 2) and the stop at the limit (exit 1).
    # Drawn from the scenario's seed, not rng, so that the cases of the
    # campaigns before it (seedS-caseK) are drawn as they were.
    s["limits"] = {"events": 2e5 if seed % 2 else 2e6}
    return s


def run(dtsim, path, out, timeout):
    try:
        p = subprocess.run([dtsim, "run", path, "-o", out, "--quiet"], capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return None, "timeout after %g s" % timeout


def column(rows, name):
    return [float(r[name]) for r in rows]


def check_outputs(out, problems):
    with open(os.path.join(out, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    for name in ("time_s", "steps", "bytes_sent"):
        v = column(rows, name)
        if any(b < a for a, b in zip(v, v[1:])):
            problems.append("metrics.csv: %s decreases" % name)
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    end = float(rj.get("sim_time_s", rj.get("simulated_time_s", 0)))
    with open(os.path.join(out, "nodes.csv")) as f:
        for r in csv.DictReader(f):
            parts = [float(r[k]) for k in ("compute_s", "network_s", "idle_s", "down_s")]
            if any(p < -1e-9 * max(1.0, end) for p in parts):
                problems.append("nodes.csv: node %s has a negative time" % r["node"])
            if abs(sum(parts) - end) > 1e-6 * max(1.0, end):
                problems.append("nodes.csv: node %s times sum to %.12g, run time %.12g"
                                % (r["node"], sum(parts), end))
    return rj


def same_csv(a, b, problems, what):
    for name in CSV_FILES:
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if os.path.exists(pa) != os.path.exists(pb):
            problems.append("%s: %s present in one run only" % (what, name))
        elif os.path.exists(pa) and not filecmp.cmp(pa, pb, shallow=False):
            problems.append("%s: %s differs" % (what, name))


def one_case(dtsim, s, work, timeout):
    """The problems found with scenario s (empty: it passed), and its exit."""
    problems = []
    path = os.path.join(work, "s.json")
    with open(path, "w") as f:
        json.dump(s, f)
    out = os.path.join(work, "a")
    rc, err = run(dtsim, path, out, timeout)
    if rc is None:
        return [err], rc
    if "Sanitizer" in err or "runtime error" in err:
        problems.append("sanitizer: " + err.strip()[:2000])
    if rc not in (0, 1, 2):
        problems.append("exit status %d: %s" % (rc, err.strip()[:500]))
        return problems, rc
    if rc != 0 and not err.strip():
        problems.append("exit %d without a message" % rc)
    if rc == 2:
        if os.path.exists(out) and os.listdir(out):
            problems.append("exit 2 but wrote " + ", ".join(sorted(os.listdir(out))))
        return problems, rc
    if "no progress" in err:
        problems.append("watchdog on a valid scenario: " + err.strip()[:500])
    if not os.path.exists(os.path.join(out, "run.json")):
        if "out of memory" not in err:
            problems.append("exit %d without run.json: %s" % (rc, err.strip()[:300]))
        return problems, rc
    rj = check_outputs(out, problems)
    out_b = os.path.join(work, "b")
    rc_b, err_b = run(dtsim, path, out_b, timeout)
    if rc_b != rc:
        problems.append("rerun exits %s, first run %d" % (rc_b, rc))
    else:
        same_csv(out, out_b, problems, "rerun")
    resolved = rj.get("scenario")
    if isinstance(resolved, dict):
        path_r = os.path.join(work, "resolved.json")
        with open(path_r, "w") as f:
            json.dump(resolved, f)
        out_r = os.path.join(work, "r")
        rc_r, err_r = run(dtsim, path_r, out_r, timeout)
        if rc_r != rc:
            problems.append("resolved scenario exits %s, original %d: %s"
                            % (rc_r, rc, err_r.strip()[:300]))
        else:
            same_csv(out, out_r, problems, "resolved rerun")
    return problems, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dtsim")
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--findings", default=None)
    ap.add_argument("--work", default=None)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    exits = {}
    failed = 0
    base = a.work or tempfile.mkdtemp(prefix="dtsim-fuzz-")
    cases = a.cases if a.only is None else a.only + 1
    for k in range(cases):
        s = scenario(rng, rng.randrange(1 << 31))
        if a.only is not None and k != a.only:
            continue
        if a.print:
            print(json.dumps(s))
            continue
        work = os.path.join(base, "case")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        problems, rc = one_case(a.dtsim, s, work, a.timeout)
        exits[rc] = exits.get(rc, 0) + 1
        if problems:
            failed += 1
            name = "seed%d-case%d" % (a.seed, k)
            print("FAIL %s: %s" % (name, "; ".join(problems)[:1500]), flush=True)
            if a.findings:
                os.makedirs(a.findings, exist_ok=True)
                with open(os.path.join(a.findings, name + ".json"), "w") as f:
                    json.dump(s, f, indent=1)
                with open(os.path.join(a.findings, name + ".txt"), "w") as f:
                    f.write("\n".join(problems) + "\n")
        elif not a.quiet:
            print("ok   case %d (exit %s)" % (k, rc), flush=True)
    if not a.work:
        shutil.rmtree(base, ignore_errors=True)
    if a.print:
        return 0
    print("%d cases, %d failed; exits: %s" % (sum(exits.values()), failed, ", ".join(
        "%s: %d" % (k, v) for k, v in sorted(exits.items(), key=lambda x: str(x[0])))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
