#!/usr/bin/env bash
# bench/ab.sh: two builds of omission-gate timed against each other on the bench stores,
# in interleaved rounds (each round runs every command of both, in a rotated order), by
# CPU time (user + system, from the kernel's rusage of each run) and wall time, with the
# peak RSS of each. For a machine shared with others: a run's CPU time moves less with
# the load than its wall time, and the two builds meet the same conditions in each round.
#
#   OLD=/tmp/old/omission-gate NEW=target/release/omission-gate bash bench/ab.sh
#   ROUNDS (10), ONLY (space-separated command names, default all), MID (a third build,
#   shown as MID/old CPU)
#
# Commands: check, precheck, pin, document, hook, head_tail (on the 1M-record stores that
# bench/run.sh generates into bench/data/), and the parse floor when FLOOR is given.
# Prints per command the median over rounds of new/old (CPU and wall), its range, and
# the medians and peak RSS of each build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OLD=${OLD:?OLD: the path of the build to compare against}
NEW=${NEW:-target/release/omission-gate}
S1=bench/data/store_1m.jsonl
D1=bench/data/store_1m.json
[ -f "$S1" ] && [ -f "$D1" ] || { echo "bench/ab.sh: run bench/run.sh first (no bench stores)" >&2; exit 2; }
python3 - "$OLD" "$NEW" "${ROUNDS:-10}" "${ONLY:-}" "${FLOOR:-}" "$S1" "$D1" <<'PY'
import os, statistics, subprocess, sys, time
old, new, rounds, only, floor, s1, d1 = sys.argv[1:8]
rounds = int(rounds)
def cmds(b):
    return {
        "check": [b, "check", s1, "--kept", f"@{s1}.kept.txt", "--action", f"@{s1}.action.json", "--format", "json"],
        "precheck": [b, "check", "--precheck", s1, "--tools", f"@{s1}.tools.json", "--kept", f"@{s1}.kept.txt", "--format", "json"],
        "pin": [b, "pin", s1, "--tools", f"@{s1}.tools.json", "--format", "json"],
        "document": [b, "check", d1, "--format", "json"],
        "hook": ["sh", "-c", 'exec "$0" hook claude-code --store "$1" --kept "@$1.kept.txt" <"$2"', b, s1, "bench/data/hook_1m.payload.json"],
        "head_tail": [b, "check", s1, "--retention", "head_tail:8", "--action", f"@{s1}.action.json", "--format", "json"],
    }
names = only.split() if only else list(cmds(old))
runs = [(n, "old", cmds(old)[n]) for n in names] + [(n, "new", cmds(new)[n]) for n in names]
if os.environ.get("MID"):
    runs += [(n, "mid", cmds(os.environ["MID"])[n]) for n in names]
if floor:
    runs.append(("floor", "old", [floor, s1]))
# Write-only, as a shell's >/dev/null: the gate refuses a stdout of /dev/null open for
# reading and writing (subprocess.DEVNULL), since a report written there is lost.
NULL = open(os.devnull, "wb")
res = {}
for r in range(rounds):
    k = (r * 3) % len(runs)
    for name, which, cmd in runs[k:] + runs[:k]:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=NULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        res.setdefault((name, which), []).append((ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss))
def med(v): return statistics.median(v)
print(f"{rounds} interleaved rounds; new = {new}, old = {old}")
print()
print("| command | CPU new/old (median, range) | wall new/old (median, range) | CPU s old / new (median) | CPU s old / new (lowest) | wall s old / new | peak RSS MiB old / new |")
print("|---|---|---|---|---|---|---|")
for n in names:
    o, w = res[(n, "old")], res[(n, "new")]
    cpu = [b[0] / a[0] for a, b in zip(o, w)]
    wall = [b[1] / a[1] for a, b in zip(o, w)]
    print(f"| {n} | {med(cpu):.3f}x ({min(cpu):.2f}-{max(cpu):.2f}) | {med(wall):.3f}x ({min(wall):.2f}-{max(wall):.2f}) | "
          f"{med([x[0] for x in o]):.3f} / {med([x[0] for x in w]):.3f} | {min(x[0] for x in o):.3f} / {min(x[0] for x in w):.3f} | "
          f"{med([x[1] for x in o]):.3f} / {med([x[1] for x in w]):.3f} | "
          f"{max(x[2] for x in o) / 1024:.1f} / {max(x[2] for x in w) / 1024:.1f} |")
for n in names:
    if (n, "mid") in res:
        o, w = res[(n, "old")], res[(n, "mid")]
        cpu = [b[0] / a[0] for a, b in zip(o, w)]
        print(f"| {n} (MID) | {med(cpu):.3f}x ({min(cpu):.2f}-{max(cpu):.2f}) | | {med([x[0] for x in w]):.3f} | {min(x[0] for x in w):.3f} | | |")
if floor:
    f = res[("floor", "old")]
    print()
    print(f"parse floor: CPU {med([x[0] for x in f]):.3f} s, wall {med([x[1] for x in f]):.3f} s")
    for which in ("old", "new"):
        c = res[("check", which)] if ("check", which) in res else None
        if c:
            rc = [a[1] / b[1] for a, b in zip(c, f)]
            print(f"check/floor ({which}): wall {med(rc):.3f}x ({min(rc):.2f}-{max(rc):.2f})")
PY
