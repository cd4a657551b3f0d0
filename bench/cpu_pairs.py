#!/usr/bin/env python3
"""cpu_pairs.py N LABEL=CMD... -- runs each command N times, interleaved
(the order reversed every other round), and prints the median user, system
and total CPU seconds (wait4) and minor page faults of each.  OUT in CMD
becomes a fresh folder per label (removed before each run); leading K=V
words of CMD are environment variables.  Timings belong in bench/RESULTS.md
with the machine's load, never in tests."""
import os, subprocess, sys, shutil, shlex, tempfile
if len(sys.argv) < 3:
    sys.exit(__doc__)
TMP = tempfile.mkdtemp(prefix="dtsim-cpu-")
n = int(sys.argv[1]); cmds = [a.split("=",1) for a in sys.argv[2:]]
res = {l: [] for l, _ in cmds}
for k in range(n):
    for l, c in (cmds if k % 2 == 0 else cmds[::-1]):
        shutil.rmtree(os.path.join(TMP, "out-") + l, ignore_errors=True)
        w = shlex.split(c.replace("OUT", os.path.join(TMP, "out-") + l))
        env = dict(os.environ)
        while w and "=" in w[0] and not w[0].startswith("/") and not w[0].startswith("."):
            kk, vv = w.pop(0).split("=", 1); env[kk] = vv
        p = subprocess.Popen(w, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, st, ru = os.wait4(p.pid, 0)
        res[l].append((ru.ru_utime, ru.ru_stime, ru.ru_minflt))
def med(x): s = sorted(x); return s[len(s)//2]
for l, r in res.items():
    print("%-10s user %.4f sys %.4f total %.4f minflt %d" % (l, med([a for a,_,_ in r]), med([b for _,b,_ in r]), med([a+b for a,b,_ in r]), med([c for _,_,c in r])))
shutil.rmtree(TMP, ignore_errors=True)
