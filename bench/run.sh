#!/usr/bin/env bash
# bench/run.sh: the performance bench (check, precheck, pin, documents, the hook, retentions
# and sweep on the 1M-record store, against the parse floor).
#
# Builds in release, generates the reference stores into bench/data/ (git-ignored),
# measures each command's median wall time (hyperfine, >= 5 runs) and peak RSS
# (/usr/bin/time -v), and prints a table of the ratios against their targets, all
# measured in the same run.
#
#   bash bench/run.sh                 # everything
#   RUNS=10 bash bench/run.sh         # more runs per command
#   SKIP_BUILD=1 bash bench/run.sh    # use the binaries already in target/release
#   REGEN=1 bash bench/run.sh         # regenerate the stores even if up to date
#   STRICT=1 bash bench/run.sh        # exit 1 unless every target of the table is met
#   PAIRS=20 bash bench/run.sh        # rounds of the interleaved (paired) ratios; 0: none
#
# Environment knobs: RUNS (5), WARMUP (1), STARTUP_RUNS (50), STARTUP_WARMUP (5), PAIRS (10),
# RSS_RUNS (3, the max is reported), SEED (5), PROBE_TIMEOUT (600 s),
# GATE and FLOOR (paths of the two binaries, default target/release/...).
#
# A command the binary does not support yet (no JSON report, usage error, crash,
# timeout) is shown as "n/a" with the reason; the script carries on.

set -uo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
cd "$ROOT" || exit 2

RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
STARTUP_RUNS=${STARTUP_RUNS:-50}
STARTUP_WARMUP=${STARTUP_WARMUP:-5}
RSS_RUNS=${RSS_RUNS:-3}
SEED=${SEED:-5}
PROBE_TIMEOUT=${PROBE_TIMEOUT:-600}
GATE=${GATE:-target/release/omission-gate}
FLOOR=${FLOOR:-target/release/examples/parse_floor}

DATA=bench/data
OUT=$DATA/results
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.status "$OUT"/*.rss "$OUT"/*.out "$OUT"/*.err "$OUT"/*.log "$OUT"/*.cmd \
    "$OUT"/*.time "$OUT"/table.md "$OUT"/met

say() { printf '%s\n' "$*" >&2; }
hr() { say "== $*"; }

# ---------------------------------------------------------------- tools
hr "tools"
if [ "$RUNS" -lt 5 ]; then say "RUNS=$RUNS is below the issue's minimum of 5"; fi
apt_install() {
    # apt_install PACKAGE: install a Debian package when we are root and may.
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
    say "installing $1 with apt-get"
    apt-get install -y -qq "$1" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$1" >/dev/null 2>&1; }
}
HYPERFINE=1
if ! command -v hyperfine >/dev/null 2>&1; then
    apt_install hyperfine
    command -v hyperfine >/dev/null 2>&1 ||
        { HYPERFINE=0; say "hyperfine not available: timing with a python3 loop instead"; }
fi
GNU_TIME=1
if [ ! -x /usr/bin/time ]; then
    apt_install time
    [ -x /usr/bin/time ] ||
        { GNU_TIME=0; say "/usr/bin/time not available: peak RSS from python3 getrusage instead"; }
fi
[ "$HYPERFINE" = 1 ] && say "$(hyperfine --version)"
say "cores: $(nproc)"

# ---------------------------------------------------------------- build
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    hr "build (release)"
    if ! cargo build --release --bin omission-gate --example parse_floor; then
        say "combined build failed; building the two targets one by one"
        cargo build --release --bin omission-gate || say "!! omission-gate did not build"
        if ! cargo build --release --example parse_floor; then
            say "!! the parse_floor example did not build. Cargo.toml needs:"
            say '   [[example]]'
            say '   name = "parse_floor"'
            say '   path = "bench/parse_floor.rs"'
        fi
    fi
fi

# ---------------------------------------------------------------- stores
hr "stores (seed $SEED)"
GEN_HASH=$(sha256sum bench/gen_store.py | cut -c1-16)
gen() { # gen FILE RECORDS FORM
    local file=$DATA/$1 stamp="gen=$GEN_HASH seed=$SEED records=$2 form=$3"
    if [ "${REGEN:-0}" != 1 ] && [ -f "$file" ] && [ -f "$file.kept.txt" ] &&
        [ "$(cat "$file.stamp" 2>/dev/null)" = "$stamp" ]; then
        say "$file: up to date ($(du -m "$file" | cut -f1) MiB)"
        return 0
    fi
    local t0=$SECONDS
    python3 bench/gen_store.py --records "$2" --out "$file" --form "$3" --seed "$SEED" || {
        say "!! generating $file failed"; exit 2; }
    printf '%s\n' "$stamp" >"$file.stamp"
    say "  ($((SECONDS - t0)) s)"
}
gen store_100k.jsonl 100000 jsonl
gen store_1m.jsonl 1000000 jsonl
gen store_1m.json 1000000 document

S1=$DATA/store_1m.jsonl
S100=$DATA/store_100k.jsonl
D1=$DATA/store_1m.json
FX1=fixtures/fx1_refund_thread.json

# ---------------------------------------------------------------- measuring
# probe NAME KIND CMD...: run once, decide whether the binary supports the command.
#   KIND json    stdout must be one JSON value (the report)
#   KIND text    stdout must carry a "verdict" line
#   KIND floor   exit 0 and stdout a line count
#   KIND version exit 0 and some stdout
# Writes $OUT/NAME.status: "ok VERDICT" or "na REASON".
probe() {
    local name=$1 kind=$2; shift 2
    printf '%q ' "$@" >"$OUT/$name.cmd"
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "na binary $1 not built" >"$OUT/$name.status"; return 1
    fi
    timeout "$PROBE_TIMEOUT" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    local rc=$?
    python3 - "$name" "$kind" "$rc" "$OUT" <<'PY'
import json, sys
name, kind, rc, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
stdout = open(f"{out}/{name}.out", "rb").read().decode("utf-8", "replace")
stderr = open(f"{out}/{name}.err", "rb").read().decode("utf-8", "replace")
def first_line(s):
    s = s.strip().splitlines()
    return s[0][:100] if s else ""
def status(s):
    open(f"{out}/{name}.status", "w").write(s + "\n")
if rc == 124:
    status("na timed out"); sys.exit()
if rc > 2 or rc < 0:
    status(f"na exit {rc}: {first_line(stderr)}"); sys.exit()
if kind == "json":
    try:
        rep = json.loads(stdout)
    except ValueError:
        status(f"na no JSON report (exit {rc}): {first_line(stderr) or first_line(stdout)}")
        sys.exit()
    if not isinstance(rep, dict):
        status(f"na report is not a JSON object (exit {rc})"); sys.exit()
    verdict = rep.get("verdict", "-")
    status(f"ok {verdict}/{rc}")
    if verdict == "ERROR":
        msgs = [f.get("code", "?") + ": " + str(f.get("message", ""))[:160]
                for f in rep.get("findings", []) if isinstance(f, dict) and f.get("severity") == "error"]
        print(f"   !! {name}: verdict ERROR on the bench input: " + ("; ".join(msgs[:3]) or "?"),
              file=sys.stderr)
elif kind == "text":
    vs = [l.split(":", 1)[1].strip().split()[0] for l in stdout.splitlines()
          if l.startswith("verdict") and ":" in l and l.split(":", 1)[1].strip()]
    if not vs:
        status(f"na no verdict line (exit {rc}): {first_line(stderr) or first_line(stdout)}")
    else:
        status(f"ok {vs[0]}/{rc}")
elif kind == "hook":
    # A deny is exit 2 with the reason on stderr; a PASS is silent, exit 0.
    if rc == 2 and stderr.startswith("omission-gate denied this call"):
        status("ok deny/2")
    elif rc == 0 and not stderr.strip():
        status("ok pass/0")
    else:
        status(f"na exit {rc}: {first_line(stderr)}")
elif kind == "sweep":
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    if "overall exit" in last:
        status(f"ok {last.split('->')[0].strip()}/{rc}")
    else:
        status(f"na no summary line (exit {rc}): {first_line(stderr)}")
elif kind == "floor":
    if rc == 0 and stdout.strip().isdigit():
        status(f"ok {stdout.strip()} lines")
    else:
        status(f"na exit {rc}: {first_line(stderr)}")
elif kind == "version":
    if rc == 0 and stdout.strip():
        status(f"ok {first_line(stdout)}")
    else:
        status(f"na exit {rc}: {first_line(stderr)}")
PY
    case $(cat "$OUT/$name.status") in ok*) return 0 ;; *) return 1 ;; esac
}

# time_cmd NAME RUNS WARMUP CMD...: median wall over RUNS into $OUT/NAME.json
# (hyperfine's --export-json shape; a non-zero exit is expected and ignored).
time_cmd() {
    local name=$1 runs=$2 warmup=$3; shift 3
    if [ "$HYPERFINE" = 1 ]; then
        local cmdline
        cmdline=$(printf '%q ' "$@")
        hyperfine -N -i --runs "$runs" --warmup "$warmup" --style basic \
            --command-name "$name" --export-json "$OUT/$name.json" "$cmdline" \
            >"$OUT/$name.log" 2>&1 || say "   !! hyperfine failed for $name (see $OUT/$name.log)"
    else
        python3 - "$OUT/$name.json" "$name" "$runs" "$warmup" "$@" <<'PY'
import json, os, subprocess, sys, time
# Write-only, as a shell's >/dev/null: the gate refuses a stdout of /dev/null open for
# reading and writing (subprocess.DEVNULL), since a report written there is lost.
NULL = open(os.devnull, "wb")
path, name, runs, warmup, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
times, codes = [], []
for i in range(warmup + runs):
    t = time.perf_counter()
    rc = subprocess.run(cmd, stdout=NULL, stderr=subprocess.DEVNULL).returncode
    if i >= warmup:
        times.append(time.perf_counter() - t); codes.append(rc)
json.dump({"results": [{"command": name, "times": times, "exit_codes": codes}]}, open(path, "w"))
PY
    fi
}

# rss NAME CMD...: peak RSS in KiB (max over RSS_RUNS) into $OUT/NAME.rss
rss() {
    local name=$1; shift
    local best=0 kib i
    for ((i = 0; i < RSS_RUNS; i++)); do
        if [ "$GNU_TIME" = 1 ]; then
            /usr/bin/time -v -o "$OUT/$name.time" "$@" >/dev/null 2>&1
            kib=$(awk -F': *' '/Maximum resident set size/ {print $2}' "$OUT/$name.time")
        else
            kib=$(python3 -c 'import os, resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=open(os.devnull, "wb"), stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@")
        fi
        [ -n "$kib" ] && [ "$kib" -gt "$best" ] && best=$kib
    done
    echo "$best" >"$OUT/$name.rss"
}

# bench NAME KIND RUNS WARMUP CMD...
bench() {
    local name=$1 kind=$2 runs=$3 warmup=$4; shift 4
    if probe "$name" "$kind" "$@"; then
        time_cmd "$name" "$runs" "$warmup" "$@"
        rss "$name" "$@"
        say "   $name: $(cat "$OUT/$name.status")"
    else
        say "   $name: $(cat "$OUT/$name.status")"
    fi
}

hr "measuring ($RUNS runs, $WARMUP warmup; startup $STARTUP_RUNS runs)"
bench floor_1m floor "$RUNS" "$WARMUP" "$FLOOR" "$S1"
bench check_1m json "$RUNS" "$WARMUP" "$GATE" check "$S1" \
    --kept "@$S1.kept.txt" --action "@$S1.action.json" --format json
bench check_100k json "$RUNS" "$WARMUP" "$GATE" check "$S100" \
    --kept "@$S100.kept.txt" --action "@$S100.action.json" --format json
bench precheck_1m json "$RUNS" "$WARMUP" "$GATE" check --precheck "$S1" \
    --tools "@$S1.tools.json" --kept "@$S1.kept.txt" --format json
bench pin_1m json "$RUNS" "$WARMUP" "$GATE" pin "$S1" --tools "@$S1.tools.json" --format json
bench document_1m json "$RUNS" "$WARMUP" "$GATE" check "$D1" --format json
# The pre-tool hook before a call (Claude Code's payload on stdin), on the same store and
# kept set as check_1m: it is what runs before every tool call.
python3 - "$S1.action.json" "$DATA/hook_1m.payload.json" <<'PY'
import json, sys
action = json.load(open(sys.argv[1]))
json.dump({"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": "/tmp",
           "permission_mode": "default", "hook_event_name": "PreToolUse",
           "tool_name": action["tool"], "tool_input": action.get("params", {}),
           "tool_use_id": "toolu_bench"}, open(sys.argv[2], "w"))
PY
bench hook_1m hook "$RUNS" "$WARMUP" sh -c 'exec "$0" hook claude-code --store "$1" --kept "@$1.kept.txt" <"$2"' \
    "$GATE" "$S1" "$DATA/hook_1m.payload.json"
bench headtail_1m json "$RUNS" "$WARMUP" "$GATE" check "$S1" --retention head_tail:8 \
    --action "@$S1.action.json" --format json
if [ -f "$FX1" ]; then
    bench fx1_check text "$STARTUP_RUNS" "$STARTUP_WARMUP" "$GATE" check "$FX1"
else
    echo "na $FX1 missing" >"$OUT/fx1_check.status"
    say "   fx1_check: n/a ($FX1 missing)"
fi
bench version version "$STARTUP_RUNS" "$STARTUP_WARMUP" "$GATE" --version
# sweep: one cell (fx1 under given: the same work as fx1_check, through sweep), and the
# demo's whole table (7 fixtures x 3 retentions, 21 cells; shown, no target).
bench sweep_fx1 sweep "$STARTUP_RUNS" "$STARTUP_WARMUP" "$GATE" sweep "$FX1" --retention given
bench sweep_fx sweep "$STARTUP_RUNS" "$STARTUP_WARMUP" "$GATE" sweep fixtures/fx1_refund_thread.json \
    fixtures/fx2_superseded_fact.json fixtures/fx3_genuinely_safe.json fixtures/fx4_rolling_summary.json \
    fixtures/fx5_unresolved_field.json fixtures/fx6_stale_permit.json fixtures/fx7_stale_deny.json \
    --retention given --retention head_tail:8 --retention recency:16

# ---------------------------------------------------------------- table
hr "results"
python3 - "$OUT" "$(nproc)" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- 2>/dev/null || echo '+dirty')" "$(rustc --version 2>/dev/null)" "$RUNS" "$STARTUP_RUNS" <<'PY'
import json, os, statistics, sys
out, cores, commit, rustc, runs, sruns = sys.argv[1:7]

def load(name):
    st = open(f"{out}/{name}.status").read().strip() if os.path.exists(f"{out}/{name}.status") else "na not run"
    ok = st.startswith("ok ")
    d = {"name": name, "ok": ok, "status": st[3:], "wall": None, "rss": None, "runs": 0}
    if ok and os.path.exists(f"{out}/{name}.json"):
        res = json.load(open(f"{out}/{name}.json"))["results"][0]
        if res.get("times"):
            d["wall"] = statistics.median(res["times"])
            d["runs"] = len(res["times"])
    if ok and os.path.exists(f"{out}/{name}.rss"):
        kib = int(open(f"{out}/{name}.rss").read().strip() or 0)
        d["rss"] = kib / 1024 if kib else None
    if d["wall"] is None:
        d["ok"] = False
    return d

names = ["floor_1m", "check_1m", "check_100k", "precheck_1m", "pin_1m", "document_1m",
         "hook_1m", "headtail_1m", "fx1_check", "sweep_fx1", "sweep_fx", "version"]
m = {n: load(n) for n in names}

# (row label, name, baseline name or None, what the ratio is, target, limit)
rows = [
    ("floor_1m", "floor_1m", None, None, None),
    ("check_1m", "check_1m", "floor_1m", "check/floor", 1.0),
    ("check_1m peak RSS", "check_1m", "rss", "MiB", 64.0),
    ("check_100k", "check_100k", None, None, None),
    ("growth 100k->1m", "check_1m", "check_100k", "check_1m/check_100k", 11.0),
    ("precheck_1m", "precheck_1m", "check_1m", "precheck/check", 2.0),
    ("pin_1m", "pin_1m", "check_1m", "pin/check", 2.0),
    ("document_1m", "document_1m", "check_1m", "document/jsonl", 2.0),
    ("hook_1m", "hook_1m", "check_1m", "hook/check", 1.25),
    ("hook_1m peak RSS", "hook_1m", "rss", "MiB", 64.0),
    ("headtail_1m", "headtail_1m", "check_1m", "head_tail/check", 1.25),
    ("fx1_check", "fx1_check", "version", "fx1 check/--version", 1.5),
    ("sweep_fx1", "sweep_fx1", "fx1_check", "sweep/check, one cell", 1.25),
    ("sweep_fx (21 cells)", "sweep_fx", None, None, None),
    ("version", "version", None, None, None),
]

def f(x, fmt, suffix=""):
    return "n/a" if x is None else format(x, fmt) + suffix

table = [("command", "median wall (s)", "peak RSS (MiB)", "ratio vs baseline", "target", "met", "verdict/exit")]
met_all = True
for label, name, base, what, limit in rows:
    d = m[name]
    wall = f(d["wall"], ".4f") if d["ok"] else "n/a"
    rss = f(d["rss"], ".1f") if d["ok"] else "n/a"
    verdict = d["status"] if d["ok"] else "n/a (" + d["status"] + ")"
    if base is None:
        table.append((label, wall, rss, "baseline", "-", "-", verdict))
        continue
    if base == "rss":
        val = d["rss"] if d["ok"] else None
        table.append((label, "", rss, "", f"<= {limit:g} MiB",
                      "n/a" if val is None else ("yes" if val <= limit else "no"), ""))
        met_all &= val is not None and val <= limit
        continue
    b = m[base]
    ratio = d["wall"] / b["wall"] if d["ok"] and b["ok"] and b["wall"] else None
    met = "n/a" if ratio is None else ("yes" if ratio <= limit else "no")
    met_all &= ratio is not None and ratio <= limit
    if label.startswith("growth"):
        table.append((label, "", "", f(ratio, ".2f", "x"), f"{what} <= {limit:g}", met, ""))
    else:
        table.append((label, wall, rss, f(ratio, ".2f", "x"), f"{what} <= {limit:g}", met, verdict))

widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
lines = []
for i, r in enumerate(table):
    lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    if i == 0:
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
text = "\n".join(lines)
head = (f"cores: {cores}   commit: {commit}   {rustc}\n"
        f"runs: {runs} per command ({sruns} for fx1_check/version), median wall; "
        f"peak RSS = max over the RSS runs")
floor = m["floor_1m"]
size = os.path.getsize(os.path.join(os.path.dirname(out), "store_1m.jsonl"))
if floor["ok"]:
    head += f"\nparse floor: {size / 1e6 / floor['wall']:.0f} MB/s on {size / 1e6:.1f} MB"
print(head)
print()
print(text)
print()
print("all targets met" if met_all else "NOT all targets met (no / n/a above)")
open(f"{out}/table.md", "w").write(head + "\n\n" + text + "\n")
open(f"{out}/met", "w").write("yes\n" if met_all else "no\n")
PY
say "(table also in $OUT/table.md; raw hyperfine JSON, probe outputs and logs in $OUT/)"

# ---------------------------------------------------------------- paired ratios
# hyperfine times each command in a block of its own, so a host whose speed drifts over
# a minute (a shared machine) can put the floor and `check` in different conditions.
# Here the commands of each ratio run in turn, PAIRS rounds (order rotated each round),
# and each round gives its own ratios: the median of those is the ratio under the same
# conditions. Printed beside the table above, not instead of it.
PAIRS=${PAIRS:-10}
if [ "$PAIRS" -gt 0 ]; then
    hr "paired ratios ($PAIRS interleaved rounds)"
    python3 - "$OUT" "$PAIRS" <<'PY' | tee -a "$OUT/table.md"
import os, shlex, statistics, subprocess, sys, time
out, rounds = sys.argv[1], int(sys.argv[2])
# Write-only, as a shell's >/dev/null: the gate refuses a stdout of /dev/null open for
# reading and writing (subprocess.DEVNULL), since a report written there is lost.
NULL = open(os.devnull, "wb")
names = ["floor_1m", "check_1m", "precheck_1m", "pin_1m", "document_1m", "hook_1m", "headtail_1m"]
cmds = {}
for n in names:
    st = f"{out}/{n}.status"
    if os.path.exists(st) and open(st).read().startswith("ok "):
        cmds[n] = shlex.split(open(f"{out}/{n}.cmd").read().strip())
pairs = [("check/floor", "check_1m", "floor_1m", 1.0),
         ("precheck/check", "precheck_1m", "check_1m", 2.0),
         ("pin/check", "pin_1m", "check_1m", 2.0),
         ("document/jsonl", "document_1m", "check_1m", 2.0),
         ("hook/check", "hook_1m", "check_1m", 1.25),
         ("head_tail/check", "headtail_1m", "check_1m", 1.25)]
pairs = [p for p in pairs if p[1] in cmds and p[2] in cmds]
order = [n for n in names if n in cmds]
walls = {n: [] for n in order}
for r in range(rounds):
    k = r % len(order)
    for n in order[k:] + order[:k]:
        t = time.perf_counter()
        subprocess.run(cmds[n], stdout=NULL, stderr=subprocess.DEVNULL)
        walls[n].append(time.perf_counter() - t)
print()
print("| ratio | median of per-round ratios | range over rounds | target | met |")
print("|---|---|---|---|---|")
met_all = True
for label, a, b, limit in pairs:
    ratios = [x / y for x, y in zip(walls[a], walls[b])]
    med = statistics.median(ratios)
    met_all &= med <= limit
    print(f"| {label} | {med:.2f}x | {min(ratios):.2f}x - {max(ratios):.2f}x | <= {limit:g} | "
          f"{'yes' if med <= limit else 'no'} |")
print()
print("paired: all ratio targets met" if met_all else "paired: NOT all ratio targets met")
PY
fi

if [ "${STRICT:-0}" = 1 ] && [ "$(cat "$OUT/met" 2>/dev/null)" != yes ]; then
    exit 1
fi
exit 0
