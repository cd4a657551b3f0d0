#!/bin/sh
# test_cli_list.sh -- `dtsim list`, `dtsim explain` and `dtsim keys` (issue
# 16): pinned outputs (tests/golden/cli/), the protocols listed are those
# the loader accepts (the registry's error list), every family's names are
# the ones a bad name's error lists, every key printed is documented in
# docs/scenario.md, and bad arguments exit 2 with the message pinned.  The
# key table itself is checked against the loader by test_scn_keys.
#
#   tests/test_cli_list.sh DTSIM SOURCE_DIR
set -u
dtsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "test_cli_list: FAIL: $*" >&2; fails=$((fails + 1)); }
G=$src/tests/golden/cli
Q=$src/scenarios/quickstart.json
expect() {
  want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" = "$want" ] || fail "$* exited $got, expected $want: $(head -c 300 "$tmp/err")"
}
same() { cmp -s "$1" "$2" || { fail "$3 differs:"; diff "$2" "$1" | head -20 >&2; }; }

# ---- pinned outputs ------------------------------------------------------------
for case in "list.txt|list" "explain-hop.txt|explain algorithm.hop" \
            "explain-partition.txt|explain data.partition" \
            "keys-retransmit.txt|keys network.retransmit"; do
  g=${case%%|*} args=${case#*|}
  # shellcheck disable=SC2086
  expect 0 "$dtsim" $args
  same "$tmp/out" "$G/$g" "dtsim $args"
  [ -s "$tmp/err" ] && fail "dtsim $args wrote to stderr"
done
# explain NAME is explain algorithm.NAME; a trailing dot in a prefix is no matter
expect 0 "$dtsim" explain hop
same "$tmp/out" "$G/explain-hop.txt" "dtsim explain hop"
expect 0 "$dtsim" keys network.retransmit.
same "$tmp/out" "$G/keys-retransmit.txt" "dtsim keys network.retransmit."
# a family alone is its part of the whole listing
expect 0 "$dtsim" list noise
sed -n '/^noise laws/,/^$/p' "$G/list.txt" | sed '/^$/d' >"$tmp/want"
same "$tmp/out" "$tmp/want" "dtsim list noise"
# prefixes go by components: compute covers compute.groups[].noise.dist, not more
expect 0 "$dtsim" keys compute
grep -q '^  compute.groups\[\].noise.dist$' "$tmp/out" || fail "keys compute: no groups[].noise.dist"
grep '^  [a-z]' "$tmp/out" | grep -qv '^  compute' && fail "keys compute: a key outside compute"

# ---- the listings are the loader's ----------------------------------------------
# protocols: exactly the names an unknown algorithm's error lists
expect 2 "$dtsim" validate "$Q" --set algorithm.name=zz
sed -n 's/.*unknown algorithm "zz" (expected one of: \(.*\))$/\1/p' "$tmp/err" | tr -d ' ' |
  tr ',' '\n' | sort >"$tmp/want"
"$dtsim" list protocols | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort >"$tmp/got"
[ -s "$tmp/want" ] || fail "no list in: $(cat "$tmp/err")"
same "$tmp/got" "$tmp/want" "list protocols against the registry"
# each family: the names a bad value's error lists
for fam in "topologies|topology.kind" "mixing|topology.mixing" "models|model.kind" \
           "datasets|data.kind" "partitions|data.partition" "noise|compute.noise.dist" \
           "disciplines|network.discipline" "profiles|model.profile"; do
  f=${fam%%|*} key=${fam#*|}
  set -- --set "$key=zz"
  [ "$key" = compute.noise.dist ] && set -- --set 'compute.noise={"dist":"zz"}'
  [ "$key" = model.profile ] && set -- --set 'model={"kind":"none","profile":"zz"}'
  expect 2 "$dtsim" validate "$Q" "$@"
  sed -n 's/.*"zz" (expected one of: \(.*\))$/\1/p' "$tmp/err" | tr -d ' ' | tr ',' '\n' |
    sort >"$tmp/want"
  [ -s "$tmp/want" ] || { fail "$key=zz: no list in: $(cat "$tmp/err")"; continue; }
  "$dtsim" list "$f" | sed -n 's/^  \([a-z][a-z0-9_-]*\) .*/\1/p; s/^  \([a-z][a-z0-9_-]*\)$/\1/p' |
    sort >"$tmp/got"
  same "$tmp/got" "$tmp/want" "list $f against $key"
done
# every key listed is documented in docs/scenario.md
for k in $("$dtsim" keys | sed -n 's/^  \([a-z][^ ]*\)$/\1/p'); do
  [ "$k" = algorithm.PARAM ] && continue
  n=${k##*.} n=${n%\[\]}
  grep -q -e "\`$n\`" -e "\"$n\"" "$src/docs/scenario.md" || fail "$k: not in docs/scenario.md"
done
# every protocol's parameters are in docs/algorithms.md
for a in $("$dtsim" list protocols | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
  for p in $("$dtsim" explain "algorithm.$a" | sed -n 's/^  algorithm\.\([a-z_]*\)$/\1/p'); do
    [ "$p" = lr ] || [ "$p" = batch ] && continue
    grep -q "^| \`$p\` |" "$src/docs/algorithms.md" || fail "$a.$p: not in docs/algorithms.md"
  done
done

# ---- bad arguments --------------------------------------------------------------
for case in "explain algorithm.zz|dtsim explain: error: unknown algorithm \"zz\" (expected one of: $("$dtsim" list protocols | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | paste -sd, | sed 's/,/, /g'))" \
            "explain nope.key|dtsim explain: error: no scenario key 'nope.key' (dtsim keys lists them, dtsim list the protocols)" \
            "keys comp|dtsim keys: error: no scenario key 'comp' (dtsim keys lists them all)" \
            "list bogus|dtsim list: error: unknown family 'bogus' (expected one of: protocols, topologies, mixing, models, profiles, datasets, partitions, noise, disciplines)"; do
  args=${case%%|*} msg=${case#*|}
  # shellcheck disable=SC2086
  expect 2 "$dtsim" $args
  printf '%s\n' "$msg" >"$tmp/want"
  same "$tmp/err" "$tmp/want" "dtsim $args"
done
expect 2 "$dtsim" explain
expect 2 "$dtsim" keys a b
expect 2 "$dtsim" list --bogus

[ $fails -eq 0 ] || { echo "test_cli_list: $fails failures" >&2; exit 1; }
echo "test_cli_list: ok"
