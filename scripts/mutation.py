#!/usr/bin/env python3
"""Mutation testing of dtsim: plant one bug at a time, rebuild, run the suite.

Reads the catalogue tests/mutants.tsv (one mutant a line, tab-separated:
id, file, exact text, replacement, what it breaks; `#` starts a comment
line; in the two text columns `\\t`, `\\n` and `\\\\` are escapes).  For each
mutant: replace the exact text (it must occur exactly once in the file)
in the source tree, rebuild the mutation build tree (RelWithAsserts:
optimised, assertions on), run ctest on it without the slow tests, restore
the file.  A mutant is

  killed          a test failed (a wrong result, a crash, an abort)
  timeout         no test failed but one ran out of --timeout, or the whole
                  suite did: reported apart, not counted (on a loaded machine
                  a slow suite is no proof of a bug; rerun it with --only)
  survived        every test passed: either a test is missing or the
                  mutant is equivalent (docs/testing.md says which)
  stillborn       it does not compile (not counted)
  not applicable  its text no longer occurs exactly once (the code moved
                  on: update the catalogue; not counted)

The kill rate is killed / (killed + survived); timeouts are listed apart.  The source is restored on
every exit (normal, exception, SIGINT, SIGTERM, SIGHUP); a journal under the
build tree restores it at the next start if the process was killed
outright.  No Debian 12 package offers a maintained C mutation tool (mull
and dextool are not packaged), hence this script.

Usage: scripts/mutation.py [--build DIR] [--timeout S] [--split S] [--only ID,ID]
                           [--list] [--results FILE]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # --source replaces it
SLOW = "test_valgrind|test_papers|test_plots|test_mpi"


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            c = s[i + 1]
            out.append({"t": "\t", "n": "\n", "\\": "\\"}.get(c, "\\" + c))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def load_catalogue(path):
    muts, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 5:
                sys.exit(f"{path}:{lineno}: error: expected 5 tab-separated columns, got {len(cols)}")
            mid, file, find, repl, what = cols
            if mid in seen:
                sys.exit(f"{path}:{lineno}: error: duplicate mutant id {mid}")
            seen.add(mid)
            muts.append({"id": mid, "file": file, "find": unescape(find),
                         "repl": unescape(repl), "what": what})
    return muts


class Restorer:
    """Keeps the original text of the one mutated file and puts it back."""

    def __init__(self, journal):
        self.journal = journal
        self.path = None
        self.text = None

    def recover(self):
        if os.path.exists(self.journal):
            with open(self.journal, encoding="utf-8") as f:
                j = json.load(f)
            with open(j["path"], "w", encoding="utf-8") as f:
                f.write(j["text"])
            os.remove(self.journal)
            print(f"mutation: restored {j['path']} left mutated by an interrupted run")

    def save(self, path, text):
        with open(self.journal + ".tmp", "w", encoding="utf-8") as f:
            json.dump({"path": path, "text": text}, f)
        os.replace(self.journal + ".tmp", self.journal)
        self.path, self.text = path, text

    def restore(self):
        if self.path is not None:
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(self.text)
            self.path = self.text = None
        if os.path.exists(self.journal):
            os.remove(self.journal)


def run(cmd, timeout, log, env=None):
    """Runs cmd in its own process group; returns (rc, seconds); rc None on timeout."""
    t0 = time.time()
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True, env=env)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
    return rc, time.time() - t0


def failed_tests(log):
    """(tests that failed, tests that timed out) in a ctest log."""
    failed, timed = set(), set()
    with open(log, errors="replace") as f:
        for line in f:
            t = "***Timeout" in line or "(Timeout)" in line
            if t or "***Failed" in line or "***Exception" in line or "(Failed)" in line \
                    or "(Subprocess aborted)" in line or "(SEGFAULT)" in line:
                for w in line.split():
                    if w.startswith("test_") or w.startswith("valgrind_"):
                        (timed if t else failed).add(w)
                        break
    return sorted(failed), sorted(timed - failed)


def test_times(log):
    """{test: seconds} of the tests that passed in a ctest log."""
    times = {}
    with open(log, errors="replace") as f:
        for line in f:
            w = line.split()
            if "Passed" in w and "Test" in w and w[-1] == "sec":
                name = next((x for x in w if x.startswith("test_") or x.startswith("valgrind_")), None)
                if name:
                    times[name] = float(w[-2])
    return times


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=ROOT,
                    help="the tree to mutate (default this checkout; e.g. a `git archive` copy "
                    "so that editing goes on meanwhile)")
    ap.add_argument("--build", default=None, help="build tree (default SOURCE/build-mut)")
    ap.add_argument("--catalogue", default=None, help="default SOURCE/tests/mutants.tsv")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds for the whole suite on one mutant (default 300)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--split", type=float, default=20,
                    help="tests that took this many seconds or more in the baseline run go in "
                         "a second phase, run only when the others pass (0: one phase)")
    ap.add_argument("--only", default="", help="comma-separated mutant ids, run in that order")
    ap.add_argument("--list", action="store_true", help="list the catalogue and check it applies")
    ap.add_argument("--results", default=None, help="TSV of outcomes (default BUILD/mutation.tsv)")
    a = ap.parse_args()
    ROOT = os.path.abspath(a.source)
    a.build = os.path.abspath(a.build or os.path.join(ROOT, "build-mut"))
    a.catalogue = a.catalogue or os.path.join(ROOT, "tests", "mutants.tsv")

    muts = load_catalogue(a.catalogue)
    if a.only:
        by_id = {m["id"]: m for m in muts}
        want = a.only.split(",")
        unknown = [i for i in want if i not in by_id]
        if unknown:
            sys.exit("mutation: error: no mutant " + ", ".join(unknown) + " in " + a.catalogue)
        muts = [by_id[i] for i in dict.fromkeys(want)]   # in the order given
    os.makedirs(a.build, exist_ok=True)
    rest = Restorer(os.path.join(a.build, "mutation-journal.json"))
    rest.recover()

    def applicable(m):
        path = os.path.join(ROOT, m["file"])
        if not os.path.exists(path):
            return None, "file gone"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        n = text.count(m["find"])
        if n != 1:
            return None, f"text occurs {n} times"
        return text, ""

    if a.list:
        for m in muts:
            text, why = applicable(m)
            print(f"{m['id']:<14} {'ok' if text is not None else 'N/A: ' + why:<24} "
                  f"{m['file']}: {m['what']}")
        return 0

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    if not os.path.exists(os.path.join(a.build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", ROOT, "-B", a.build, "-DCMAKE_BUILD_TYPE=RelWithAsserts"],
                       check=True, stdout=subprocess.DEVNULL)
    build = ["cmake", "--build", a.build, "-j", str(a.jobs)]
    ctest = ["ctest", "--test-dir", a.build, "-E", SLOW, "-j", str(a.jobs), "--stop-on-failure",
             "--timeout", str(int(a.timeout)), "--output-on-failure"]
    # Check's own per-test limit (CK_DEFAULT_TIMEOUT, 120 s in tests/CMakeLists.txt) is
    # stretched past ctest's, so that a slow test is always ctest's "Timeout", never a failure
    tenv = dict(os.environ, CK_TIMEOUT_MULTIPLIER=str(int(a.timeout // 120) + 2))
    logdir = os.path.join(a.build, "mutation-logs")
    os.makedirs(logdir, exist_ok=True)

    print("mutation: baseline build and suite (must pass)", flush=True)
    rc, _ = run(build, None, os.path.join(logdir, "baseline-build.log"))
    if rc != 0:
        sys.exit("mutation: the unmutated tree does not build: see " + logdir + "/baseline-build.log")
    rc, secs = run(ctest, a.timeout * 2, os.path.join(logdir, "baseline-test.log"), tenv)
    if rc != 0:
        sys.exit("mutation: the unmutated suite fails: see " + logdir + "/baseline-test.log")
    print(f"mutation: baseline suite {secs:.0f} s; {len(muts)} mutants", flush=True)
    # two phases, the same tests: the quick ones first, so that a mutant a
    # quick test kills does not wait for the slow ones (ctest runs the
    # longest first and lets running tests finish after a failure)
    slow = sorted(t for t, s in test_times(os.path.join(logdir, "baseline-test.log")).items()
                  if s >= a.split)
    phases = [ctest]
    if slow and a.split > 0:
        pat = "^(" + "|".join(slow) + ")$"
        phases = [ctest[:3] + ["-E", SLOW + "|" + pat] + ctest[5:], ctest + ["-R", pat]]
        print(f"mutation: slow tests last: {', '.join(slow)}", flush=True)

    results = []
    try:
        for k, m in enumerate(muts, 1):
            path = os.path.join(ROOT, m["file"])
            text, why = applicable(m)
            t0 = time.time()
            if text is None:
                outcome, detail = "not-applicable", why
            else:
                rest.save(path, text)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text.replace(m["find"], m["repl"], 1))
                blog = os.path.join(logdir, m["id"] + "-build.log")
                rc, _ = run(build, None, blog)
                if rc != 0:
                    outcome, detail = "stillborn", "does not compile"
                else:
                    for ph, cmd in enumerate(phases):
                        tlog = os.path.join(logdir, m["id"] + ("-test.log", "-test-slow.log")[ph])
                        rc, _ = run(cmd, a.timeout * 2, tlog, tenv)
                        failed, timed = failed_tests(tlog)
                        if rc != 0:
                            break
                    if rc is None:
                        outcome, detail = "timeout", "the whole suite ran out of time"
                    elif rc != 0 and failed:
                        outcome, detail = "killed", ",".join(failed)
                    elif rc != 0 and timed:
                        outcome, detail = "timeout", ",".join(timed) + " ran out of time"
                    elif rc != 0:
                        outcome, detail = "killed", "ctest failed"
                    else:
                        outcome, detail = "survived", ""
                rest.restore()
            results.append((m, outcome, detail))
            print(f"[{k}/{len(muts)}] {outcome:<14} {m['id']:<14} {time.time() - t0:5.0f} s  "
                  f"{m['file']}: {m['what']}" + (f"  ({detail})" if detail else ""), flush=True)
    except KeyboardInterrupt as e:
        print(f"mutation: interrupted ({e}); source restored", flush=True)
    finally:
        rest.restore()
        # leave the mutation build matching the restored source
        run(build, None, os.path.join(logdir, "final-build.log"))

    out = a.results or os.path.join(a.build, "mutation.tsv")
    with open(out, "w") as f:
        for m, o, d in results:
            f.write(f"{m['id']}\t{o}\t{d}\t{m['file']}\t{m['what']}\n")
    killed = sum(1 for _, o, _ in results if o == "killed")
    surv = [(m, d) for m, o, d in results if o == "survived"]
    na = [(m, d) for m, o, d in results if o == "not-applicable"]
    still = [m for m, o, _ in results if o == "stillborn"]
    tout = [(m, d) for m, o, d in results if o == "timeout"]
    total = killed + len(surv)
    print()
    print(f"mutation: {killed} killed, {len(surv)} survived, {len(still)} stillborn, "
          f"{len(tout)} timeouts, {len(na)} not applicable, of {len(results)} run")
    if total:
        print(f"mutation: kill rate {killed}/{total} = {100.0 * killed / total:.1f}%")
    for m, _ in surv:
        print(f"  survivor {m['id']}: {m['file']}: {m['what']}")
    for m, d in tout:
        print(f"  timeout {m['id']}: {m['file']}: {d}: rerun with --only (not counted)")
    for m, d in na:
        print(f"  not applicable {m['id']}: {m['file']} ({d}): update tests/mutants.tsv")
    for m in still:
        print(f"  stillborn {m['id']}: {m['file']}: fix its replacement")
    print(f"mutation: outcomes in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
