#!/usr/bin/env python3
"""cg_diff_lines.py -- the difference of two cachegrind output files (B - A),
per function and, for the files named, per source line, divided by a count of
steps: what `cg_diff` gives, with the line numbers valgrind 3.19's cg_diff
drops.  Prints instructions, D1 and LL misses (reads and writes) per step,
the totals also per event (--events-per-step).  It reads the two files only;
it does not run valgrind (bench/RESULTS.md, "Event rate at large N: the
protocol's lines", has the command lines).

  python3 bench/cg_diff_lines.py cg.1 cg.3 [--steps 2e5] [--events-per-step 3] [FILE-SUBSTRING ...]
"""
import argparse
import collections

# cachegrind --cache-sim=yes event order
EVENTS = ["Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"]


def load(path):
    counts = collections.defaultdict(lambda: [0] * len(EVENTS))
    fl = fn = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                assert line.split()[1:] == EVENTS, "run cachegrind with --cache-sim=yes"
            elif line.startswith("fl="):
                fl = line[3:].strip()
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line[:1].isdigit():
                f_ = line.split()
                row = counts[(fl, fn, int(f_[0]))]
                for i, v in enumerate(f_[1:]):
                    row[i] += int(v)
    return counts


def fmt(v, steps):
    g = lambda name: v[EVENTS.index(name)] / steps
    return "Ir %7.1f  D1 r %5.2f w %5.2f  LL r %5.2f w %5.2f" % (
        g("Ir"), g("D1mr"), g("D1mw"), g("DLmr"), g("DLmw"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("files", nargs="*", help="source files (substrings) to show per line")
    ap.add_argument("--steps", type=float, default=2e5)
    ap.add_argument("--events-per-step", type=float, default=3)
    o = ap.parse_args()
    a, b = load(o.a), load(o.b)
    zero = [0] * len(EVENTS)
    diff = {k: [y - x for x, y in zip(a.get(k, zero), b.get(k, zero))] for k in set(a) | set(b)}
    tot = [sum(v[i] for v in diff.values()) for i in range(len(EVENTS))]
    print("total per step   ", fmt(tot, o.steps))
    print("total per event  ", fmt(tot, o.steps * o.events_per_step))
    per_fn = collections.defaultdict(lambda: [0] * len(EVENTS))
    for (fl, fn, _), v in diff.items():
        row = per_fn[(fl.rsplit("/", 1)[-1], fn)]
        for i in range(len(EVENTS)):
            row[i] += v[i]
    ll = lambda v: v[EVENTS.index("DLmr")] + v[EVENTS.index("DLmw")]
    for (fl, fn), v in sorted(per_fn.items(), key=lambda kv: (-ll(kv[1]), -kv[1][0])):
        if abs(v[0]) / o.steps >= 5 or ll(v) / o.steps >= 0.05:
            print("%-22s %-30s %s" % (fl[:22], fn[:30], fmt(v, o.steps)))
    for sub in o.files:
        for (fl, fn, ln), v in sorted(diff.items()):
            if sub in fl and (abs(v[0]) / o.steps >= 2 or
                              (v[EVENTS.index("D1mr")] + v[EVENTS.index("D1mw")]) / o.steps >= 0.02):
                print("%s:%d %-24s %s" % (fl.rsplit("/", 1)[-1], ln, fn[:24], fmt(v, o.steps)))


if __name__ == "__main__":
    main()
