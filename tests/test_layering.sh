#!/bin/sh
# test_layering.sh -- the module graph of docs/architecture.md, checked on
# the sources: every protocol compiles against the protocol-facing header
# alone (a folder holding only alg.h, the protocol helpers and the two data
# headers it includes); nothing under sim/cluster/ includes a models or
# trainer header and its library does not link models; no production .c
# file is over 700 lines and each opens with its paragraph; the scenario
# declares no mirror of an owner's enum and the runner dispatches on no
# scenario string.
#
#   tests/test_layering.sh CC SOURCE_DIR [CFLAGS...]
set -u
cc=$1
src=$2
shift 2
fail=0
say() { echo "test_layering: $*" >&2; fail=1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$src/sim/algos/alg.h" "$src/sim/algos/alg_coll.h" "$src/sim/algos/alg_ps.h" "$src/sim/algos/alg_batchplan.h" "$src/sim/algos/alg_sdgraph.h" "$src/sim/algos/alg_nbr.h" \
   "$src/sim/algos/alg_epidemic_graph.h" "$src/sim/algos/alg_prague_static.h" \
   "$src/sim/algos/alg_comdml_sched.h" "$src/sim/algos/alg_comdml_int.h" \
   "$src/sim/algos/alg_pipeline_int.h" \
   "$src/sim/cluster/cl_buf.h" "$src/topologies/topo.h" "$stage/"
for f in "$src"/sim/algos/alg_*.c; do
  case $(basename "$f") in alg_host.c|alg_registry.c) continue ;; esac
  "$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -fsyntax-only -Wall -Wextra -Werror \
    -I"$stage" "$@" "$f" || say "$f does not compile against alg.h alone"
done

for f in "$src"/sim/cluster/*.[ch]; do
  if grep -Eq '#include "(mdl[a-z_]*|trn|alg[a-z_]*|run[a-z_]*|scn[a-z_]*)\.h"' "$f"; then
    say "$f includes a header of a module above the cluster"
  fi
done
grep -q 'dtsim_models' "$src/sim/cluster/CMakeLists.txt" && say "sim/cluster links models"

if grep -rEn 'SCN_(NOISE|SLOW|FAULT|JITTER|DISCIPLINE|NIC|TOPO|MIX|SCHED|PARTITION|SCALE|ACT)_|^ *TOPO_[A-Z_0-9]+,' \
     "$src/sim/scenario" >&2; then
  say "the scenario redeclares an enum its owner declares"
fi
if grep -En 'strcmp\(.*(s|r->s)->' "$src"/sim/runner/*.c >&2; then
  say "the runner dispatches on a scenario string"
fi

for f in $(find "$src/sim" "$src/models" "$src/topologies" -name '*.c'); do
  n=$(wc -l < "$f")
  [ "$n" -le 700 ] || say "$f has $n lines (at most 700)"
  head -c 2 "$f" | grep -q '/\*' || say "$f does not open with its paragraph"
done
exit $fail
