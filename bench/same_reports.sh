#!/usr/bin/env bash
# bench/same_reports.sh: two builds of omission-gate give byte-identical replies (stdout,
# stderr and exit code) on the transcript paths: `context --store` over the transcripts
# of tests/transcripts/ (with their stores and with the bench's 10,000-record store),
# every fixture payload through `hook --kept-from transcript` (both stores), the bench's
# hooks, `check --transcript` and `context` over the bench transcripts, and `check`
# (`--kept`, text and JSON) over the bench stores and the golden fixtures.
#
#   OLD=/tmp/old/omission-gate NEW=target/release/omission-gate bash bench/same_reports.sh
#
# Needs the data of bench/transcript.sh (bench/data/). Exit 1 when any reply differs
# (each difference is named), else prints how many runs agreed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
OLD=${OLD:?OLD: the path of the build to compare against}
NEW=${NEW:-target/release/omission-gate}
D=bench/data
STORE=$D/store_10k.jsonl
TINY=$D/store_tiny.jsonl
T=$D/transcripts
for f in "$STORE" "$TINY" "$T/claude-code-200m.jsonl"; do
    [ -f "$f" ] || { echo "bench/same_reports.sh: run bench/transcript.sh first (no $f)" >&2; exit 2; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

runs=0
differ=0
# run NAME STDIN_FILE ARGS...: one command with both builds, compared.
run() {
    local name=$1 stdin=$2
    shift 2
    for side in old new; do
        local bin=$OLD
        [ "$side" = new ] && bin=$NEW
        "$bin" "$@" <"$stdin" >"$WORK/$side.out" 2>"$WORK/$side.err"
        echo "$?" >"$WORK/$side.code"
    done
    runs=$((runs + 1))
    for part in out err code; do
        if ! cmp -s "$WORK/old.$part" "$WORK/new.$part"; then
            echo "DIFFERS ($part): $name" >&2
            differ=$((differ + 1))
            break
        fi
    done
}

# A payload naming a fixture transcript (the fixtures leave `transcript_path` empty).
payload_for() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
payload, transcript, out = sys.argv[1:4]
p = json.load(open(payload))
p["transcript_path"] = transcript
json.dump(p, open(out, "w"))
PY
}

for h in claude-code codex gemini-cli; do
    small=tests/transcripts/store-$h.jsonl
    # Each transcript: a scenario's file, or a folder's session file.
    for f in tests/transcripts/$h/*.jsonl tests/transcripts/$h/*/session.jsonl; do
        [ -f "$f" ] || continue
        for s in "$small" "$STORE"; do
            run "context $f --store $s" /dev/null context "$f" --store "$s"
        done
        run "context $f --harness $h" /dev/null context "$f" --harness "$h"
    done
    for p in tests/transcripts/$h/*.payload.json; do
        base=${p%.payload.json}
        transcript=$base.jsonl
        [ -d "$base" ] && [ -f "$base/session.jsonl" ] && transcript=$base/session.jsonl
        [ -f "$transcript" ] || continue
        payload_for "$p" "$PWD/$transcript" "$WORK/payload.json"
        for s in "$small" "$STORE"; do
            run "hook $h $p --store $s" "$WORK/payload.json" \
                hook "$h" --store "$s" --kept-from transcript --timeout-ms 2000
        done
    done
done

action=$STORE.action.json
for h in claude-code codex gemini-cli; do
    for size in 1m 200m; do
        tr=$T/$h-$size.jsonl
        run "hook $h $size" "$tr.payload.json" hook "$h" --store "$STORE" --kept-from transcript
        for s in "$TINY" "$STORE"; do
            for format in text json; do
                run "check $s --transcript $tr ($format)" /dev/null \
                    check "$s" --action "@$action" --transcript "$tr" --format "$format"
            done
        done
        run "context $tr" /dev/null context "$tr"
        run "context $tr --store" /dev/null context "$tr" --store "$STORE"
    done
done

for s in "$STORE" "$D/store_100k.jsonl"; do
    [ -f "$s" ] || continue
    for format in text json; do
        run "check $s --kept ($format)" /dev/null \
            check "$s" --kept "@$s.kept.txt" --action "@$s.action.json" --format "$format"
    done
done
for f in tests/golden/fx*.json; do
    for format in text json; do
        run "check $f ($format)" /dev/null check "$f" --format "$format"
    done
done

if [ "$differ" -gt 0 ]; then
    echo "$differ of $runs runs differ" >&2
    exit 1
fi
echo "all $runs runs byte-identical (stdout, stderr, exit code)"
