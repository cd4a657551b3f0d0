#!/usr/bin/env python3
"""bench/memory.py -- the memory estimate against the measured peak.

For each case, runs `dtsim run` in a child process of its own and compares
run.json's "memory_estimate_bytes" (what the limits check counts, the
same formula that refuses a run above limits.memory_bytes) with the
child's peak resident set (getrusage through os.wait4: ru_maxrss, KiB).
Runs are made with --force so that a case the estimate would refuse is
still measured.  Prints a markdown table; no assertion (tests pin the
formula, bench/RESULTS.md records the table).

usage: bench/memory.py [--quick] [--only WORD] DTSIM
--quick leaves out the 10^6-node cases (minutes of CPU); --only WORD runs
the cases whose name holds WORD (e.g. pipeline).
"""
import json, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RING = os.path.join(ROOT, "bench/scenarios/ring-none-dpsgd.json")
PIPE = os.path.join(ROOT, "bench/scenarios/pipeline-none-64.json")
QUICK = os.path.join(ROOT, "scenarios/quickstart.json")
FM_SOFT = os.path.join(ROOT, "scenarios/fashion-mnist-softmax.json")
FM_MLP = os.path.join(ROOT, "scenarios/fashion-mnist-mlp.json")
SVM = os.path.join(ROOT, "tests/data/text/two-class.svm")
CSV = os.path.join(ROOT, "tests/data/text/blobs.csv.gz")
TOPO = 'topology={"kind": "ring"}'

def cases(quick):
    out = []
    for alg in ("dpsgd", "adpsgd"):
        for n in (1000, 10000, 100000) + (() if quick else (1000000,)):
            out.append(("none, ring, %s" % alg, RING,
                        ["nodes=%d" % n, "algorithm.name=" + alg, "stop.steps=20"]))
    for kind, data in (("linear", "synthetic-regression"), ("logistic", "synthetic-logistic"),
                       ("softmax", "synthetic"), ("mlp", "synthetic")):
        for n in (16, 1024):
            out.append(("%s, %s" % (kind, data), QUICK,
                        ["model.kind=" + kind, "nodes=%d" % n, TOPO,
                         'data={"kind": "%s", "train": %d, "features": 64}' % (data, 64 * n),
                         "stop.time_s=0.5"]))
    out.append(("softmax, fashion-mnist", FM_SOFT, ["stop.steps=50"]))
    out.append(("mlp, fashion-mnist", FM_MLP, ["stop.steps=50"]))
    out.append(("mlp, fashion-mnist", FM_MLP, ["stop.steps=20", "nodes=64"]))
    # the pipeline's stage buffers (docs/pipelines.md, "Memory"): an MLP of 8 layers of
    # 128 on 8 stages x 2 replicas, 32 micro-batches of 8 samples; timing-only 64 x 4
    mlp = ['model={"kind": "mlp", "hidden": [128, 128, 128, 128, 128, 128, 128]}',
           "nodes=16", TOPO, 'data={"kind": "synthetic", "train": 8192, "features": 128}']
    for sched in ("gpipe", "pipedream", "2bw"):
        out.append(("pipeline mlp, %s" % sched, QUICK, mlp + [
            'algorithm={"name": "pipeline", "stages": 8, "replicas": 2, "micro_batches": 32,'
            ' "batch": 256, "lr": 0.01, "schedule": "%s"}' % sched, "stop.time_s=0.3"]))
    out.append(("pipeline mlp, pipedream, 8 x 1", QUICK, mlp[:1] + ["nodes=8", TOPO, mlp[3],
                'algorithm={"name": "pipeline", "micro_batches": 256, "batch": 1024,'
                ' "lr": 0.01, "schedule": "pipedream"}', "stop.time_s=0.3"]))
    out.append(("pipeline none, 64 x 4", PIPE, ["nodes=256", "algorithm.replicas=4",
                                                "stop.time_s=0.5"]))
    out.append(("logistic, libsvm file", QUICK,
                ["model.kind=logistic", 'data={"kind": "libsvm", "train_file": "%s"}' % SVM,
                 "nodes=4", TOPO, "stop.time_s=0.5"]))
    out.append(("softmax, csv file", QUICK,
                ['data={"kind": "csv", "train_file": "%s", "header": true, "label_column": 4}'
                 % CSV, "nodes=4", TOPO, "stop.time_s=0.5",
                 "algorithm.batch=16"]))   # 150 rows: 30 training rows a node
    return out

def run(dtsim, scn, sets, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [dtsim, "run", scn, "-o", out, "--quiet", "--force", "--threads", "1"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    if status != 0:
        return None, None, err.strip().splitlines()[0] if err.strip() else "exit %d" % status
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    return rj.get("memory_estimate_bytes"), ru.ru_maxrss * 1024, None

def main():
    args = sys.argv[1:]
    quick = "--quick" in args
    args = [a for a in args if a != "--quick"]
    only = None
    if "--only" in args:
        k = args.index("--only")
        only = args[k + 1]
        del args[k:k + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    dtsim = args[0]
    tmp = tempfile.mkdtemp(prefix="dtsim-memory-")
    print("| case | settings | estimate MiB | peak RSS MiB | estimate / peak |")
    print("|---|---|---:|---:|---:|")
    worst = 1.0
    try:
        for name, scn, sets in cases(quick):
            if only and only not in name:
                continue
            est, peak, err = run(dtsim, scn, sets, os.path.join(tmp, "run"))
            shown = ", ".join(s.replace(ROOT + "/", "") for s in sets)
            if err:
                print("| %s | %s | | | failed: %s |" % (name, shown, err))
                continue
            ratio = est / peak if est else float("nan")
            if est:
                worst = max(worst, ratio, 1 / ratio)
            print("| %s | %s | %.1f | %.1f | %.2f |" % (name, shown, (est or 0) / 2**20,
                                                       peak / 2**20, ratio))
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\nworst factor either way: %.2f" % worst)

main()
