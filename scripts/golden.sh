#!/bin/sh
# The golden outputs of tests/golden/ (docs/testing.md): runs every
# tests/data/golden-NAME.json with DTSIM and compares metrics.csv and
# nodes.csv with tests/golden/NAME/ byte for byte.  Prints the diff of each
# that changed and exits 1; with ACCEPT=1 in the environment it overwrites
# them instead (only for a deliberate behaviour change, named in the
# commit).  A scenario without a golden directory yet is pinned only with
# ACCEPT=1 too.
# Usage: scripts/golden.sh DTSIM [SOURCE_DIR]
set -u
dtsim=$1
src=${2:-$(dirname "$0")/..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtsim-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
changed=0
for json in "$src"/tests/data/golden-*.json; do
  name=$(basename "$json" .json)
  name=${name#golden-}
  if ! "$dtsim" run "$json" -o "$tmp/$name" --quiet; then
    echo "golden: $name: the run failed" >&2
    exit 1
  fi
  for f in metrics.csv nodes.csv; do
    want=$src/tests/golden/$name/$f
    if [ ! -f "$want" ]; then
      echo "golden: $name/$f: new"
      changed=1
    elif ! cmp -s "$want" "$tmp/$name/$f"; then
      diff -u "$want" "$tmp/$name/$f" | sed "1,2s|$tmp/||"
      changed=1
    fi
  done
done
if [ "$changed" = 0 ]; then
  echo "golden: every output matches tests/golden/"
  exit 0
fi
if [ "${ACCEPT:-0}" != 1 ]; then
  echo "golden: outputs differ from tests/golden/ (above); nothing was overwritten." >&2
  echo "golden: accept only a deliberate behaviour change, named in the commit: make golden ACCEPT=1" >&2
  exit 1
fi
for json in "$src"/tests/data/golden-*.json; do
  name=$(basename "$json" .json)
  name=${name#golden-}
  mkdir -p "$src/tests/golden/$name"
  cp "$tmp/$name/metrics.csv" "$tmp/$name/nodes.csv" "$src/tests/golden/$name/"
done
echo "golden: tests/golden/ rewritten (ACCEPT=1): name the behaviour change in the commit"
