#!/bin/sh
# test_provenance.sh -- provenance in every output (issue 16): run.json
# records the binary (git_commit, dtsim_version, cblas) and the invocation
# ("provenance": command line, --set list, start time, host) with exactly
# the keys pinned here; sweep.json records the binary only (shards compare
# it byte for byte), the invocations go to provenance.jsonl, one line each
# (sweep, resume, merge: shards' lines first); runs.csv, sweep.csv and
# summary.csv carry a git_commit column equal to --version's commit on every
# row; no CSV holds the host or the start time, and two sweeps of one
# scenario at different times give the same sweep.json and sweep.csv.
#
#   tests/test_provenance.sh DTSIM SOURCE_DIR
set -u
dtsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "test_provenance: FAIL: $*" >&2; fails=$((fails + 1)); }
Q=$src/scenarios/quickstart.json
commit=$("$dtsim" --version | sed -n 's/.*(git \([^,]*\),.*/\1/p')
[ -n "$commit" ] || fail "no commit in --version"
host=$(hostname)

# ---- run.json -------------------------------------------------------------------
"$dtsim" run "$Q" --set stop.time_s=0.3 --seed 4 -o "$tmp/r" --quiet || fail "run"
python3 - "$tmp/r/run.json" "$commit" "$host" "$dtsim" "$Q" "$tmp/r" <<'PY' 2>"$tmp/py" || fail "run.json: $(cat "$tmp/py")"
import json, re, sys
path, commit, host, dtsim, q, out = sys.argv[1:]
d = json.load(open(path))
keys = list(d)
assert keys[:5] == ["dtsim_version", "cblas", "git_commit", "provenance", "scenario_file"], keys
assert d["git_commit"] == commit, d["git_commit"]
p = d["provenance"]
assert list(p) == ["command", "git_commit", "dtsim_version", "cblas", "command_line", "sets",
                   "start_time", "host"], list(p)
assert p["command"] == "run" and p["git_commit"] == commit
assert p["dtsim_version"] == d["dtsim_version"] and p["cblas"] == d["cblas"]
assert p["command_line"] == [dtsim, "run", q, "--set", "stop.time_s=0.3", "--seed", "4",
                             "-o", out, "--quiet"], p["command_line"]
assert p["sets"] == ["stop.time_s=0.3", "seed=4"], p["sets"]
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p["start_time"]), p["start_time"]
assert p["host"] == host, p["host"]
PY
# the same run again: byte-identical CSVs (nothing of the invocation in them)
"$dtsim" run "$Q" --set stop.time_s=0.3 --seed 4 -o "$tmp/r2" --quiet || fail "run 2"
for f in metrics.csv nodes.csv; do
  cmp -s "$tmp/r/$f" "$tmp/r2/$f" || fail "$f differs between two runs"
done

# ---- sweeps -----------------------------------------------------------------------
args="--grid algorithm.lr=0.1,0.2 --set stop.time_s=0.3 --quiet -j 1"
# shellcheck disable=SC2086
"$dtsim" sweep "$Q" $args -o "$tmp/s" || fail "sweep"
python3 - "$tmp/s" "$commit" <<'PY' 2>"$tmp/py" || fail "sweep.json: $(cat "$tmp/py")"
import json, sys
d = json.load(open(sys.argv[1] + "/sweep.json"))
assert list(d)[:4] == ["dtsim_version", "git_commit", "cblas", "scenario"], list(d)
assert d["git_commit"] == sys.argv[2]
for k in ("host", "start_time", "command_line", "provenance"):
    assert k not in d, k
PY
lines() { wc -l <"$1" | tr -d ' '; }
[ "$(lines "$tmp/s/provenance.jsonl")" = 1 ] || fail "provenance.jsonl: $(cat "$tmp/s/provenance.jsonl")"
# a resume adds its line, and changes neither sweep.json nor the tables
cp "$tmp/s/sweep.json" "$tmp/s/sweep.csv" "$tmp"/
# shellcheck disable=SC2086
"$dtsim" sweep "$Q" $args -o "$tmp/s" || fail "resume"
[ "$(lines "$tmp/s/provenance.jsonl")" = 2 ] || fail "resume: provenance.jsonl has $(lines "$tmp/s/provenance.jsonl") lines"
cmp -s "$tmp/sweep.json" "$tmp/s/sweep.json" || fail "resume changed sweep.json"
cmp -s "$tmp/sweep.csv" "$tmp/s/sweep.csv" || fail "resume changed sweep.csv"
python3 - "$tmp/s/provenance.jsonl" "$commit" "$host" <<'PY' 2>"$tmp/py" || fail "provenance.jsonl: $(cat "$tmp/py")"
import json, sys
for line in open(sys.argv[1]):
    p = json.loads(line)
    assert list(p) == ["command", "git_commit", "dtsim_version", "cblas", "command_line",
                       "sets", "start_time", "host"], list(p)
    assert p["command"] == "sweep" and p["git_commit"] == sys.argv[2] and p["host"] == sys.argv[3]
    assert p["sets"] == ["stop.time_s=0.3"], p["sets"]
    assert p["command_line"][1:3] == ["sweep", p["command_line"][2]], p["command_line"]
PY
# every run's run.json has the sweep's provenance
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["provenance"]["command"] == "sweep"' \
  "$(ls -d "$tmp"/s/runs/000_*)/run.json" || fail "a sweep run's run.json"
# the git_commit column: the binary's, on every row of every table
for f in runs.csv sweep.csv summary.csv; do
  awk -F, -v c="$commit" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "git_commit") k = i
                                    if (!k) { print "no git_commit column"; exit 1 }; next }
                          $k != c { print "row " NR ": " $k; exit 1 }' "$tmp/s/$f" >"$tmp/aw" ||
    fail "$f: $(cat "$tmp/aw")"
done
# no host, no time of day in any CSV
for f in "$tmp"/s/*.csv "$tmp"/s/runs/*/*.csv "$tmp"/r/*.csv; do
  grep -q -e "$host" -e '[0-9]T[0-9][0-9]:[0-9][0-9]' "$f" && fail "$f holds the host or a time"
done
# the same sweep elsewhere, later: the same identity and the same tables
# shellcheck disable=SC2086
"$dtsim" sweep "$Q" $args -o "$tmp/s2" || fail "sweep 2"
cmp -s "$tmp/s/sweep.json" "$tmp/s2/sweep.json" || fail "sweep.json differs between two sweeps"
cmp -s "$tmp/s/sweep.csv" "$tmp/s2/sweep.csv" || fail "sweep.csv differs between two sweeps"

# ---- shards and merge ---------------------------------------------------------------
for k in 1 2; do
  # shellcheck disable=SC2086
  "$dtsim" sweep "$Q" $args --shard $k/2 -o "$tmp/h$k" || fail "shard $k"
done
"$dtsim" merge "$tmp/h1" "$tmp/h2" -o "$tmp/m" --quiet || fail "merge"
cmp -s "$tmp/s/sweep.csv" "$tmp/m/sweep.csv" || fail "merged sweep.csv differs"
python3 - "$tmp/m/provenance.jsonl" <<'PY' 2>"$tmp/py" || fail "merged provenance.jsonl: $(cat "$tmp/py")"
import json, sys
p = [json.loads(l) for l in open(sys.argv[1])]
assert [x["command"] for x in p] == ["sweep", "sweep", "merge"], p
assert p[0]["command_line"][-2:] == ["--shard", "1/2"] or "1/2" in p[0]["command_line"], p[0]
assert "2/2" in p[1]["command_line"], p[1]
PY

[ $fails -eq 0 ] || { echo "test_provenance: $fails failures" >&2; exit 1; }
echo "test_provenance: ok"
