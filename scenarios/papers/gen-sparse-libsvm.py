#!/usr/bin/env python3
"""gen-sparse-libsvm.py -- the sparse binary classification problem of the
Hogwild! replication (docs/validation.md, "Hogwild"): N rows of K nonzero
features out of D, feature j drawn with probability proportional to
1 / (j + 10) (a few frequent features, a long tail, as in text data),
values uniform in (0, 1]; labels +1/-1 from a fixed random weight vector
w (N(0, 1) per feature) with 5% of them flipped.  Deterministic for a
seed; writes gzipped LIBSVM.

    gen-sparse-libsvm.py OUT.svm.gz [--rows N] [--features D] [--nnz K] [--seed S]
"""
import argparse
import bisect
import gzip
import itertools
import os
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=1000)
    ap.add_argument("--nnz", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not (a.rows > 0 and a.features > 0 and 0 < a.nnz <= a.features):
        ap.error("need rows > 0, features > 0 and 0 < nnz <= features")
    r = random.Random(a.seed)
    w = [r.gauss(0.0, 1.0) for _ in range(a.features)]
    cum = list(itertools.accumulate(1.0 / (j + 10) for j in range(a.features)))
    tmp = a.out + ".tmp"
    with gzip.open(tmp, "wt") as f:
        f.write("# gen-sparse-libsvm.py --rows %d --features %d --nnz %d --seed %d\n"
                % (a.rows, a.features, a.nnz, a.seed))
        for _ in range(a.rows):
            cols = set()
            while len(cols) < a.nnz:
                cols.add(bisect.bisect_left(cum, r.random() * cum[-1]))
            cols = sorted(cols)
            vals = [1.0 - r.random() for _ in cols]
            s = sum(w[j] * v for j, v in zip(cols, vals))
            y = 1 if s > 0 else -1
            if r.random() < 0.05:
                y = -y
            f.write("%+d %s\n" % (y, " ".join("%d:%.4f" % (j + 1, v)
                                              for j, v in zip(cols, vals))))
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
