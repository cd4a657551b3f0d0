#!/bin/sh
# test_mpi.sh MPIEXEC NPFLAG DTSIM SOURCE_DIR -- `mpiexec -n 3 dtsim sweep`:
# rank 0 hands the runs to ranks 1 and 2, and the folder ends up exactly as
# a local sweep's (byte-identical sweep.csv, every run folder); a second
# execution runs nothing.  Registered only when CMake found MPI.
set -eu
mpiexec=$1 npflag=$2 dtsim=$3 src=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_mpi: FAIL: $*" >&2; exit 1; }
# OpenMPI refuses root and more ranks than cores unless told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

set -- "$src/scenarios/quickstart.json" --grid algorithm.name=dpsgd,adpsgd,allreduce \
  --grid algorithm.lr=0.05,0.1 --replicates 2 --set stop.time_s=1
"$dtsim" sweep "$@" -o "$tmp/local" --quiet
"$mpiexec" "$npflag" 3 "$dtsim" sweep "$@" -o "$tmp/mpi" > "$tmp/out"
grep -qx "dtsim sweep: 12 runs (12 ran now, 0 were complete), wrote $tmp/mpi/sweep.csv and summary.csv" \
  "$tmp/out" || { cat "$tmp/out"; fail "unexpected summary line"; }
cmp "$tmp/local/sweep.csv" "$tmp/mpi/sweep.csv" || fail "sweep.csv differs from the local sweep"
[ "$(ls "$tmp/mpi/runs" | wc -l)" -eq 12 ] || fail "not 12 run folders"
"$mpiexec" "$npflag" 2 "$dtsim" sweep "$@" -o "$tmp/mpi" > "$tmp/out"
grep -q "(0 ran now, 12 were complete)" "$tmp/out" || fail "the second execution ran again"
echo "test_mpi: ok"
