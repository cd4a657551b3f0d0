#!/bin/sh
# valgrind_quickstart.sh VALGRIND DTSIM SOURCE_DIR -- the quickstart scenario
# under valgrind memcheck (about 5 s here): any memory error or any definitely or indirectly lost
# block fails (exit 1).  Exit 77 (skipped) when valgrind is missing.
# Possibly-lost and still-reachable blocks are allowed: they are OpenBLAS's
# thread pool, which lives until exit by design.
valgrind=$1 dtsim=$2 src=$3
command -v "$valgrind" >/dev/null 2>&1 || exit 77
tmp=$(mktemp -d /tmp/dtsim-valgrind-XXXXXX) || exit 1
"$valgrind" --quiet --error-exitcode=99 --leak-check=full \
  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
  "$dtsim" run "$src/scenarios/quickstart.json" -o "$tmp/run" --quiet \
  2>"$tmp/log"
rc=$?
if [ $rc -ne 0 ] || [ -s "$tmp/log" ]; then
  cat "$tmp/log" >&2
  echo "valgrind_quickstart: memcheck failed (exit status $rc)" >&2
  rm -rf "$tmp"
  exit 1
fi
rm -rf "$tmp"
