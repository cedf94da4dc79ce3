#!/usr/bin/env bash
# bench/same_store_reports.sh: whether two builds of omission-gate give byte-identical output
# and the same exit code: on the bench stores (check, precheck, pin, pin --budget, a
# document, the Claude Code hook, head_tail and recency retentions, each also on a copy
# of the store written with `\u` escapes, as Python's json module writes non-ASCII) and
# on every fixture (check, pin, sweep). (bench/same_reports.sh does the transcript paths.)
#
#   OLD=/tmp/old/omission-gate NEW=target/release/omission-gate bash bench/same_store_reports.sh
#   SKIP_STORES=1 ...   # the document and the fixtures only
#
# Prints one line per difference and exits 1 if there is any.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OLD=${OLD:?OLD: the path of the build to compare against}
NEW=${NEW:-target/release/omission-gate}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
S1=bench/data/store_1m.jsonl
D1=bench/data/store_1m.json
ASCII=$work/store_ascii.jsonl
# SKIP_STORES=1: only the document and the fixtures.
[ "${SKIP_STORES:-0}" = 1 ] && S1=/nonexistent
if [ -f "$S1" ]; then
    python3 - "$S1" "$ASCII" <<'PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as g:
    for line in f:
        g.write(json.dumps(json.loads(line), separators=(",", ":")) + "\n")
PY
fi
diffs=0 runs=0
same() { # same NAME ARGS... (stdin from $STDIN if set)
    local name=$1; shift
    local rc_old rc_new
    "$OLD" "$@" <"${STDIN:-/dev/null}" >"$work/old.out" 2>"$work/old.err"; rc_old=$?
    "$NEW" "$@" <"${STDIN:-/dev/null}" >"$work/new.out" 2>"$work/new.err"; rc_new=$?
    runs=$((runs + 1))
    if [ "$rc_old" != "$rc_new" ] || ! cmp -s "$work/old.out" "$work/new.out" ||
        ! cmp -s "$work/old.err" "$work/new.err"; then
        echo "DIFFERS: $name (exit $rc_old / $rc_new)"
        diffs=$((diffs + 1))
    fi
}
for s in "$S1" "$ASCII"; do
    [ -f "$s" ] || continue
    k=$S1.kept.txt a=$S1.action.json t=$S1.tools.json
    same "check $s" check "$s" --kept "@$k" --action "@$a" --format json
    same "check text $s" check "$s" --kept "@$k" --action "@$a"
    same "precheck $s" check --precheck "$s" --tools "@$t" --kept "@$k" --format json
    same "pin $s" pin "$s" --tools "@$t" --format json
    same "pin --budget $s" pin "$s" --tools "@$t" --budget 200000 --format json
    same "head_tail $s" check "$s" --retention head_tail:8 --action "@$a" --format json
    same "recency $s" check "$s" --retention recency:16 --action "@$a" --format json
    python3 - "$a" "$work/payload.json" <<'PY'
import json, sys
action = json.load(open(sys.argv[1]))
json.dump({"session_id": "s", "transcript_path": "/tmp/none.jsonl", "cwd": "/tmp",
           "permission_mode": "default", "hook_event_name": "PreToolUse",
           "tool_name": action["tool"], "tool_input": action.get("params", {}),
           "tool_use_id": "toolu_1"}, open(sys.argv[2], "w"))
PY
    STDIN=$work/payload.json same "hook claude-code $s" hook claude-code --store "$s" --kept "@$k"
done
if [ -f "$D1" ]; then
    same "check $D1" check "$D1" --format json
    same "precheck $D1" check --precheck "$D1" --tools "@$D1.tools.json" --format json
    same "pin $D1" pin "$D1" --tools "@$D1.tools.json" --format json
    same "pin --budget $D1" pin "$D1" --tools "@$D1.tools.json" --budget 200000 --format json
fi
for f in fixtures/*.json fixtures/variants/*.json; do
    same "check $f" check "$f"
    same "check json $f" check "$f" --format json
    same "precheck $f" check --precheck "$f" --format json
    same "pin $f" pin "$f" --format json
    for r in given head_tail:8 recency:16; do
        same "check $r $f" check "$f" --retention "$r" --format json
    done
done
same "sweep fixtures" sweep fixtures/*.json --retention given --retention head_tail:8 --retention recency:16
same "sweep fixtures json" sweep fixtures/*.json --retention given --retention head_tail:8 --format json
echo "$runs runs compared, $diffs differ"
[ "$diffs" = 0 ]
