#!/usr/bin/env bash
# bench/transcript.sh: what reading a harness transcript costs.
#
# Generates into bench/data/ (git-ignored) a 10,000-record store and, for each harness,
# a 1 MB transcript (no compaction: all of it is live) and a 200 MB one whose last
# compaction leaves about 1 MB live, then times, interleaved round by round (the median
# of each command, the ratios of the medians):
#
#   read_<h>   check TINY --transcript <h>-200m  vs  <h>-1m        target <= 2x
#              (a 2-record store: the cost is the transcript's)
#   hook_<h>   hook <h> --store STORE_10K --kept-from transcript, payload naming <h>-200m
#              vs  check STORE_10K --kept @ids-in-view --action @action   target <= 2x
#              (the ids in view are those `context` lists for <h>-200m: the check judges
#              the very compaction the hook finds in the transcript, so the ratio is what
#              reading the transcript adds. Shown too, not targets: the hook against
#              check with the store's own kept list, 1,000 ids where about 4,000 to 6,400
#              are in view, and against the same hook given the ids in view with --kept)
#
#   bash bench/transcript.sh               # build, generate (once), measure
#   ROUNDS=30 SKIP_BUILD=1 bash bench/transcript.sh
#   REGEN=1 bash bench/transcript.sh       # generate the data again
#   STRICT=1 bash bench/transcript.sh      # exit 1 unless every target is met
#   GATE=/path/to/other/omission-gate SKIP_BUILD=1 bash bench/transcript.sh   # time another binary

set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
cd "$ROOT" || exit 2

ROUNDS=${ROUNDS:-20}
GATE=${GATE:-target/release/omission-gate}
DATA=bench/data
T=$DATA/transcripts
mkdir -p "$T"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --release --bin omission-gate || exit 2
fi

STORE=$DATA/store_10k.jsonl
if [ "${REGEN:-0}" = 1 ] || [ ! -f "$STORE" ]; then
    python3 bench/gen_store.py --records 10000 --out "$STORE" || exit 2
fi
for h in claude-code codex gemini-cli; do
    for size in 1m 200m; do
        out=$T/$h-$size.jsonl
        if [ "${REGEN:-0}" = 1 ] || [ ! -f "$out.payload.json" ]; then
            upper=$(echo "$size" | tr m M)
            python3 bench/gen_transcript.py --harness "$h" --size "$upper" --live 1M \
                --store "$STORE" --out "$out" || exit 2
        fi
    done
done
TINY=$DATA/store_tiny.jsonl
printf '%s\n' \
    '{"id":"p1","seq":1,"kind":"policy","scope":"*","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny","text":"Refunds over 5,000 need a human approver."}' \
    '{"id":"c2","seq":2,"kind":"chatter","text":"Preparing the refund."}' >"$TINY"

# The ids of the records in view of each transcript's live context, one per line, as
# `context` lists them: the kept set of the check each hook is measured against.
for h in claude-code codex gemini-cli; do
    # (Its note that the Gemini CLI file is not where Gemini CLI keeps one is left out.)
    "$GATE" context "$T/$h-200m.jsonl" --harness "$h" --store "$STORE" 2>/dev/null \
        | awk '/^in view  *: /{print $4}' >"$T/$h-200m.in-view.txt"
    if [ ! -s "$T/$h-200m.in-view.txt" ]; then
        echo "bench/transcript.sh: context listed no record in view of $T/$h-200m.jsonl" >&2
        exit 2
    fi
done

GATE="$GATE" STORE="$STORE" TINY="$TINY" T="$T" ROUNDS="$ROUNDS" STRICT="${STRICT:-0}" python3 - <<'EOF'
import os, statistics, subprocess, sys, time

gate, store, tiny, t = os.environ["GATE"], os.environ["STORE"], os.environ["TINY"], os.environ["T"]
rounds = int(os.environ["ROUNDS"])
action = "@" + store + ".action.json"
commands = {}
for h in ["claude-code", "codex", "gemini-cli"]:
    for size in ["1m", "200m"]:
        commands[f"read_{h}_{size}"] = ([gate, "check", tiny, "--action", action,
                                         "--transcript", f"{t}/{h}-{size}.jsonl"], None)
    payload = open(f"{t}/{h}-200m.jsonl.payload.json", "rb").read()
    in_view = "@" + f"{t}/{h}-200m.in-view.txt"
    commands[f"hook_{h}"] = ([gate, "hook", h, "--store", store, "--kept-from", "transcript"], payload)
    # The same compaction judged by check and by the hook, given the ids in view.
    commands[f"check_in_view_{h}"] = ([gate, "check", store, "--kept", in_view,
                                       "--action", action], None)
    commands[f"hook_{h}_kept"] = ([gate, "hook", h, "--store", store, "--kept", in_view], payload)
commands["check_kept"] = ([gate, "check", store, "--kept", "@" + store + ".kept.txt",
                           "--action", action], None)

# Write-only, as a shell's >/dev/null: the gate refuses a stdout of /dev/null open for
# reading and writing (subprocess.DEVNULL), since a report written there is lost.
NULL = open(os.devnull, "wb")

def once(argv, stdin):
    start = time.perf_counter()
    p = subprocess.run(argv, input=stdin, stdout=NULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    return took, p.returncode, p.stderr

times = {name: [] for name in commands}
codes = {}
for name, (argv, stdin) in commands.items():  # warm-up, and the exit codes
    _, codes[name], err = once(argv, stdin)
    if codes[name] not in (0, 1) and not (name.startswith("hook_") and codes[name] == 2
                                           and err.startswith(b"omission-gate denied this call: BLOCK")):
        print(f"!! {name} exited {codes[name]}: {err[:300]!r}", file=sys.stderr)
for _ in range(rounds):
    for name, (argv, stdin) in commands.items():
        times[name].append(once(argv, stdin)[0])
med = {name: statistics.median(v) for name, v in times.items()}

rows = []
met_all = True
def row(name, base, target):
    """A ratio against its target (`None`: shown for what it tells, not a target)."""
    global met_all
    ratio = med[name] / med[base]
    met = target is None or ratio <= target
    met_all &= met
    target_text = "-" if target is None else f"<= {target}x"
    met_text = "-" if target is None else ("yes" if met else "NO")
    rows.append(f"| {name:<22} | {med[name] * 1000:8.1f} | {base:<26} | {med[base] * 1000:8.1f} | "
                f"{ratio:5.2f}x | {target_text:>6} | {met_text:>3} |")
for h in ["claude-code", "codex", "gemini-cli"]:
    row(f"read_{h}_200m", f"read_{h}_1m", 2)
for h in ["claude-code", "codex", "gemini-cli"]:
    row(f"hook_{h}", f"check_in_view_{h}", 2)
# Shown, not targets: against check with the store's own kept list (another compaction,
# with far fewer records kept to digest), and against the same hook given the ids in view.
for h in ["claude-code", "codex", "gemini-cli"]:
    row(f"hook_{h}", "check_kept", None)
for h in ["claude-code", "codex", "gemini-cli"]:
    row(f"hook_{h}", f"hook_{h}_kept", None)
print(f"rounds: {rounds}, median wall time of each command (ms), cores: {os.cpu_count()}")
print()
print("| command                | ms       | against                    | ms       | ratio | target | met |")
print("|------------------------|----------|----------------------------|----------|-------|--------|-----|")
print("\n".join(rows))
print()
print("all targets met" if met_all else "some targets NOT met")
sys.exit(1 if (os.environ["STRICT"] == "1" and not met_all) else 0)
EOF
