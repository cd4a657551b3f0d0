#!/bin/sh
# test_cli2.sh -- the command line a researcher expects (issue 16): every
# subcommand's --help, `dtsim help SUB` and -h print the pinned text
# (tests/golden/cli/) on stdout with exit 0; --version everywhere with the
# git commit; the man page is the same text and renders without warnings;
# `cmake --install` puts binary, man page, completion and plot.sh in place;
# the bash completion offers the commands and options of --help; the
# README's synopsis is `dtsim --help`'s; usage errors are GNU-style, exit
# 2; validate takes --set, resolve prints the resolved scenario, topo
# describes graphs the protocol would refuse; errors name the --set behind
# them; merge, plot, --shard and stdout failures exit as documented.
#
#   tests/test_cli2.sh DTSIM SOURCE_DIR BUILD_DIR CMAKE
set -u
dtsim=$1 src=$2 build=$3 cmake=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "test_cli2: FAIL: $*" >&2; fails=$((fails + 1)); }
Q=$src/scenarios/quickstart.json

# expect RC CMD...: runs CMD with stdout in $tmp/out, stderr in $tmp/err
expect() {
  want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" = "$want" ] || fail "$* exited $got, expected $want: $(head -c 300 "$tmp/err")"
}
same() {  # same FILE TEXT-FILE what
  cmp -s "$1" "$2" || { fail "$3 differs:"; diff "$2" "$1" | head -20 >&2; }
}
empty() { [ ! -s "$1" ] || fail "$2: not empty: $(head -c 300 "$1")"; }
printf '%s\n' "$*" >/dev/null

# ---- help: pinned text, three spellings, stdout, exit 0 ---------------------
cmds="run validate resolve topo sweep merge plot list explain keys help"
for c in $cmds; do
  g=$src/tests/golden/cli/help-$c.txt
  for form in "$c --help" "$c -h" "help $c"; do
    # shellcheck disable=SC2086
    expect 0 "$dtsim" $form
    same "$tmp/out" "$g" "dtsim $form"
    empty "$tmp/err" "dtsim $form stderr"
  done
  # every option of the synopsis is described
  for o in $(sed -n '1,/^$/p' "$g" | grep -o -- '--[a-z][a-z-]*\|-[a-z] ' | sort -u); do
    grep -q "^  .*$o" "$g" || fail "$c: $o in the synopsis but not described"
  done
done
for form in "--help" "-h" "help"; do
  expect 0 "$dtsim" $form
  same "$tmp/out" "$src/tests/golden/cli/help.txt" "dtsim $form"
done
# a command of the table that has no golden help
for c in $("$dtsim" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
  [ -f "$src/tests/golden/cli/help-$c.txt" ] || fail "no tests/golden/cli/help-$c.txt"
done
# --help after other arguments, and validate no longer opens it as a file
expect 0 "$dtsim" validate "$Q" --help
same "$tmp/out" "$src/tests/golden/cli/help-validate.txt" "validate FILE --help"
expect 0 "$dtsim" run "$Q" --set stop.time_s=1 --help
same "$tmp/out" "$src/tests/golden/cli/help-run.txt" "run FILE --help"

# ---- --version everywhere, with the commit ----------------------------------
for c in "" $cmds; do
  # shellcheck disable=SC2086
  expect 0 "$dtsim" $c --version
  grep -Eqx 'dtsim [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-z.-]+, cblas: (openblas|gslcblas)\)' \
    "$tmp/out" || fail "dtsim $c --version: $(cat "$tmp/out")"
done
commit=$(sed -n 's/.*(git \([^,]*\),.*/\1/p' "$tmp/out")
if command -v git >/dev/null 2>&1 && git -C "$src" rev-parse >/dev/null 2>&1; then
  # a commit of this repository (the tree may have moved on since the build)
  git -C "$src" cat-file -e "${commit%-dirty}^{commit}" 2>/dev/null \
    || fail "--version names $commit, not a commit of $src"
  # the script names the commit, and -dirty exactly when the tree has changes
  g=$tmp/repo
  mkdir "$g" && git -C "$g" init -q && echo a >"$g/f" && git -C "$g" add f &&
    git -C "$g" -c user.name=t -c user.email=t@t commit -qm one
  h=$(git -C "$g" rev-parse --short HEAD)
  "$cmake" -DSRC="$g" -DOUT="$tmp/git.h" -P "$src/scripts/git-version.cmake"
  grep -qx "#define DTSIM_GIT \"$h\"" "$tmp/git.h" || fail "git-version.cmake: $(cat "$tmp/git.h")"
  echo b >"$g/f"
  "$cmake" -DSRC="$g" -DOUT="$tmp/git.h" -P "$src/scripts/git-version.cmake"
  grep -qx "#define DTSIM_GIT \"$h-dirty\"" "$tmp/git.h" || fail "git-version.cmake dirty: $(cat "$tmp/git.h")"
  rm -f "$tmp/git.h"
fi
# without git or outside a checkout the build still gets a version
"$cmake" -DSRC="$tmp/nowhere" -DOUT="$tmp/git.h" -P "$src/scripts/git-version.cmake"
grep -q '#define DTSIM_GIT "unknown"' "$tmp/git.h" || fail "git-version.cmake outside git"

# ---- man page ----------------------------------------------------------------
expect 0 "$dtsim" help --man
same "$build/dtsim.1" "$tmp/out" "build/dtsim.1 against dtsim help --man"
for c in $cmds; do
  grep -q "^\.SS \"dtsim $c\"" "$tmp/out" || fail "man page: no section for $c"
done
if command -v groff >/dev/null 2>&1; then
  groff -man -Tutf8 -ww -z "$tmp/out" 2>"$tmp/groff" || fail "groff failed"
  empty "$tmp/groff" "groff warnings"
fi

# ---- make install ------------------------------------------------------------
expect 0 "$cmake" --install "$build" --prefix "$tmp/inst"
for f in bin/dtsim share/man/man1/dtsim.1 share/bash-completion/completions/dtsim \
         share/dtsim/plots/plot.sh; do
  [ -f "$tmp/inst/$f" ] || fail "install: no $f"
done
expect 0 "$tmp/inst/bin/dtsim" --version

# ---- bash completion ---------------------------------------------------------
if command -v bash >/dev/null 2>&1; then
  cat >"$tmp/comp.sh" <<EOF
. "$src/scripts/dtsim-completion.bash"
t() { COMP_WORDS=("\$@"); COMP_CWORD=\$((\$# - 1)); COMPREPLY=(); _dtsim; echo "\${COMPREPLY[*]}"; }
t "$dtsim" ""
t "$dtsim" re
t "$dtsim" sweep --
t "$dtsim" topo --e
t "$dtsim" help me
t "$dtsim" list no
t "$dtsim" explain algorithm.ri
t "$dtsim" keys network.retransmit.m
EOF
  bash "$tmp/comp.sh" >"$tmp/comp" 2>&1
  printf '%s\n' "run validate resolve topo sweep merge plot table list explain keys help --help --version" "resolve" \
    "--grid --zip --replicates --jobs --threads --shard --set --seed --quiet --output --keep-going --force --progress --help --version" \
    "--edges" "merge" "noise" "algorithm.ringmaster" "network.retransmit.max_retries" >"$tmp/comp.want"
  same "$tmp/comp" "$tmp/comp.want" "bash completion"
fi

# ---- the README's synopsis is --help's ---------------------------------------
awk '/^<!-- the synopsis of `dtsim --help`/ { on = 1; next }
     on && /^```$/ { if (++fence == 2) exit; next }
     on && fence == 1 { print }' "$src/README.md" >"$tmp/readme"
"$dtsim" --help | sed -n '1,/^$/p' | sed '$d' >"$tmp/synopsis"
same "$tmp/readme" "$tmp/synopsis" "README synopsis against dtsim --help"

# ---- usage errors: GNU style, exit 2 -----------------------------------------
expect 2 "$dtsim" run "$Q" --bogus
printf '%s\n' "dtsim run: error: unknown option '--bogus'" \
  "usage: dtsim run SCENARIO.json [-o DIR] [--set PATH=VALUE]... [--seed N] [--quiet] [--force]" \
  "                 [--threads N] [--progress SECONDS]" \
  "Try 'dtsim run --help' for more information." >"$tmp/want"
same "$tmp/err" "$tmp/want" "run --bogus"
empty "$tmp/out" "run --bogus stdout"
for bad in 0 -1 2x 4097; do
  expect 2 "$dtsim" run "$Q" --threads "$bad"
  head -n 1 "$tmp/err" >"$tmp/err1"
  echo "dtsim run: error: --threads needs a whole number from 1 to 4096" >"$tmp/want"
  same "$tmp/err1" "$tmp/want" "run --threads $bad"
done
expect 2 "$dtsim" frobnicate
printf '%s\n' "dtsim: error: unknown command 'frobnicate' (expected one of: run, validate, resolve, topo, sweep, merge, plot, table, list, explain, keys, help)" \
  "Try 'dtsim --help' for more information." >"$tmp/want"
same "$tmp/err" "$tmp/want" "unknown command"
expect 2 "$dtsim" help frobnicate
expect 2 "$dtsim"
expect 2 "$dtsim" topo "$Q" --seed 3
expect 2 "$dtsim" plot --bogus
grep -q "^dtsim plot: error: unknown option '--bogus'$" "$tmp/err" || fail "plot --bogus: $(cat "$tmp/err")"

# ---- validate --set, resolve, errors naming the --set -------------------------
expect 0 "$dtsim" validate "$Q" --set algorithm.lr=0.5
printf '%s: ok\n' "$Q" >"$tmp/want"
same "$tmp/out" "$tmp/want" "validate --set ok"
expect 2 "$dtsim" validate "$Q" --set algorithm.lr=-1
printf '%s\n' "$Q: /algorithm/lr: error: must be >= 0, got -1" \
  "dtsim validate: note: the value at /algorithm/lr comes from --set algorithm.lr=-1" >"$tmp/want"
same "$tmp/err" "$tmp/want" "validate --set bad"
empty "$tmp/out" "validate --set bad stdout"
expect 2 "$dtsim" validate "$Q" --set compute.noise='{"dist":"lognormal","sigma":-1}'
grep -q "^dtsim validate: note: the value at /compute/noise/sigma comes from --set compute.noise=" \
  "$tmp/err" || fail "note for a value inside a --set object: $(cat "$tmp/err")"
expect 0 "$dtsim" resolve "$Q" --set algorithm.lr=0.25 --seed 5
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["scenario"];
assert s["algorithm"]["lr"] == 0.25 and s["seed"] == 5 and "algorithm_params" in d, d' \
  "$tmp/out" 2>"$tmp/py" || fail "resolve: $(cat "$tmp/py")"
# the resolved scenario is what run.json records
"$dtsim" run "$Q" --set algorithm.lr=0.25 --seed 5 --set stop.time_s=0.5 -o "$tmp/r" --quiet
"$dtsim" resolve "$Q" --set algorithm.lr=0.25 --seed 5 --set stop.time_s=0.5 >"$tmp/res"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]));
assert a["scenario"] == b["scenario"] and a["algorithm_params"] == b["algorithm_params"]' \
  "$tmp/res" "$tmp/r/run.json" 2>"$tmp/py" || fail "resolve differs from run.json: $(cat "$tmp/py")"
expect 2 "$dtsim" resolve "$Q" --set nodes=0
expect 2 "$dtsim" sweep "$Q" --set algorithm.lr=-1 -o "$tmp/never"
printf '%s\n' "$Q: /algorithm/lr: error: must be >= 0, got -1" \
  "dtsim sweep: note: the value at /algorithm/lr comes from --set algorithm.lr=-1" >"$tmp/want"
same "$tmp/err" "$tmp/want" "sweep --set bad"

# ---- topo without the protocol's checks ---------------------------------------
A=$src/scenarios/ring16-adpsgd.json
expect 2 "$dtsim" validate "$A" --set topology.kind=complete
grep -q "adpsgd needs a bipartite topology" "$tmp/err" || fail "adpsgd check: $(cat "$tmp/err")"
expect 0 "$dtsim" topo "$A" --set topology.kind=complete
grep -q '^bipartite: no$' "$tmp/out" && grep -q '^spectral_gap: 1$' "$tmp/out" \
  || fail "topo of a non-bipartite AD-PSGD graph: $(cat "$tmp/out" "$tmp/err")"

# ---- issue 15 item 10 ----------------------------------------------------------
if [ -w /dev/full ]; then
  "$dtsim" topo "$Q" --edges >/dev/full 2>"$tmp/err"
  rc=$?
  [ $rc = 1 ] || fail "topo --edges > /dev/full exited $rc"
  printf 'dtsim: error: writing to stdout failed: No space left on device\n' >"$tmp/want"
  same "$tmp/err" "$tmp/want" "topo --edges > /dev/full"
  "$dtsim" --help >/dev/full 2>/dev/null && fail "--help > /dev/full exited 0"
fi
for s in " 1/2" "+1/+2" "1/ 2" "1/2 " "0/2" "3/2" "1/2/3"; do
  expect 2 "$dtsim" sweep "$Q" --shard "$s" -o "$tmp/never"
  grep -q "^dtsim sweep: error: --shard needs K/N with 1 <= K <= N$" "$tmp/err" \
    || fail "--shard '$s': $(cat "$tmp/err")"
done
expect 2 "$dtsim" sweep "$Q" --seed " 3" -o "$tmp/never"
expect 2 "$dtsim" sweep "$Q" --replicates "+2" -o "$tmp/never"
[ -e "$tmp/never" ] && fail "a refused sweep wrote its folder"
"$dtsim" sweep "$Q" --grid algorithm.lr=0.1,0.2 --set stop.time_s=0.3 -o "$tmp/s1" --quiet -j 1
"$dtsim" sweep "$Q" --grid algorithm.lr=0.3 --set stop.time_s=0.3 -o "$tmp/s2" --quiet -j 1
expect 2 "$dtsim" merge "$tmp/s1" "$tmp/s2" -o "$tmp/m"
printf '%s\n' "$tmp/s2: error: not a shard of the same sweep as $tmp/s1 (sweep.json or runs.csv differ)" >"$tmp/want"
same "$tmp/err" "$tmp/want" "merge of different sweeps"
[ -e "$tmp/m" ] && fail "merge of different sweeps wrote $tmp/m"
expect 2 "$dtsim" merge "$tmp/s1" "$tmp" -o "$tmp/m"
expect 0 "$dtsim" merge "$tmp/s1" --quiet
# plot on folders that are not readable runs or sweeps: named, exit 2, before gnuplot
mkdir -p "$tmp/p1" "$tmp/p2" "$tmp/p3" "$tmp/p4" "$tmp/p5"
printf 'garbage\n\001\n' >"$tmp/p1/metrics.csv"
printf 'time_s,steps\nfoo,1\n' >"$tmp/p2/metrics.csv"
printf 'time_s,steps\n0,1\n0.5' >"$tmp/p3/metrics.csv"
printf 'x\n' >"$tmp/p4/sweep.csv"
cp "$tmp/s1/sweep.csv" "$tmp/p5/"
printf 'time_s,steps\n0,1,2\n' >"$tmp/p6.csv"
for case in "p1|$tmp/p1/metrics.csv:1: no column \"time_s\" in the header (not a file dtsim wrote)" \
            "p2|$tmp/p2/metrics.csv:2: time_s is not a number" \
            "p3|$tmp/p3/metrics.csv:3: last line is not terminated (a run still being written, or a truncated file)" \
            "p4|$tmp/p4/sweep.csv:1: no column \"run\" in the header (not a file dtsim wrote)" \
            "p5|$tmp/p5/summary.csv: cannot open: No such file or directory" \
            "nope|$tmp/nope: No such file or directory" \
            "p6.csv|$tmp/p6.csv: not a directory"; do
  d=${case%%|*} msg=${case#*|}
  DTSIM_PLOTS=$src/plots expect 2 "$dtsim" plot "$tmp/$d"
  printf 'dtsim plot: error: %s\n' "$msg" >"$tmp/want"
  same "$tmp/err" "$tmp/want" "plot $d"
  [ -e "$tmp/$d/plots" ] && fail "plot $d made plots/"
done
mkdir -p "$tmp/p7"
printf 'time_s,steps\n0,1\n0,1,2\n' >"$tmp/p7/metrics.csv"
expect 2 "$dtsim" plot "$tmp/p7"
printf 'dtsim plot: error: %s\n' "$tmp/p7/metrics.csv:3: 3 fields, the header has 2" >"$tmp/want"
same "$tmp/err" "$tmp/want" "plot p7"

[ $fails -eq 0 ] || { echo "test_cli2: $fails failures" >&2; exit 1; }
echo "test_cli2: ok"
