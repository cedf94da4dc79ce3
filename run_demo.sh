#!/usr/bin/env bash
# The demo: build omission-gate, sweep fixtures/ twice, and check that the two runs are
# byte-identical and that every verdict matches the expectations checked in beside the
# fixtures (fixtures/expected.tsv and the action table below).
# Exit 0 only when both hold.
set -uo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "run_demo: cargo not found (install Rust with rustup)" >&2; exit 2; }
# cargo's progress goes to stderr: a first build takes a few minutes, a later one seconds.
echo "run_demo: building omission-gate (cargo build --release)" >&2
cargo build --release --bin omission-gate || { echo "run_demo: build failed" >&2; exit 2; }
bin=target/release/omission-gate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "run_demo: FAIL: $*" >&2; failures=$((failures + 1)); }

fx1=fixtures/fx1_refund_thread.json
# Freeze the compaction, vary the action: tool, params, expected verdict.
actions=(
  'refunds.create|{"amount":8400}|BLOCK'
  'refunds.create|{"amount":120}|PASS'
  'refunds.create|{"amount":5000}|PASS'
  'refunds.create|{"amount":4999}|PASS'
  'refunds.create|{"amount":5001}|BLOCK'
  'notes.append|{"ticket":7741}|PASS'
)

demo() {
  echo "== 1. The full sweep over fixtures/ (retention=given, each document's own action)"
  "$bin" sweep fixtures/*.json --retention given
  echo "(exit $?)"
  echo
  echo "== 2. Is there a correct retention scheme? Same fixtures, equal budget (16 kept)"
  "$bin" sweep fixtures/fx1_*.json fixtures/fx2_*.json fixtures/fx3_*.json fixtures/fx6_*.json fixtures/fx7_*.json \
    --retention head_tail:8 --retention recency:16
  echo "(exit $?)"
  echo
  echo "== 3. Freeze the compaction, vary the action ($fx1, --retention given)"
  for row in "${actions[@]}"; do
    IFS='|' read -r tool params _ <<<"$row"
    "$bin" check "$fx1" --retention given --action "{\"tool\":\"$tool\",\"params\":$params}" \
      | grep -E '^(action|compaction|verdict|note)'
    echo "(exit ${PIPESTATUS[0]})"
  done
  echo
  echo "== 4. Prose cannot be certified: rolling summary, retyped as chatter, and flying blind"
  "$bin" check fixtures/fx4_rolling_summary.json --retention given | grep -E '^verdict'
  "$bin" check fixtures/variants/fx4_rolling_summary_as_chatter.json --retention given | grep -E '^verdict'
  "$bin" check fixtures/fx4_rolling_summary.json --retention given --allow-unevaluable | grep -E '^(verdict|note)' | head -2
  echo
  echo "== 5. Before the call: precheck on the refund thread, without and with the tool's schema"
  "$bin" check --precheck "$fx1" --tools refunds.create | grep -E '^(tools|verdict)'
  "$bin" check --precheck "$fx1" --tools @fixtures/tools/refunds_typed.json | grep -E '^(verdict|witness)'
  "$bin" check --precheck "$fx1" --tools @fixtures/tools/refunds_capped.json | grep -E '^(verdict|note)'
  echo
  echo "== 6. The compactor's side: pin with an 800-token budget, then check under that kept set"
  "$bin" pin "$fx1" --tools @fixtures/tools/refunds_typed.json --budget 800 | grep -E '^(verdict|pinned|tokens)'
  "$bin" pin "$fx1" --tools @fixtures/tools/refunds_typed.json --budget 800 --format ids > "$work/pinned.txt"
  "$bin" check "$fx1" --kept @"$work/pinned.txt" | grep -E '^(compaction|verdict)'
  echo
  echo "== 7. A full report, sealed, and verified"
  "$bin" check fixtures/fx6_stale_permit.json --retention given > "$work/fx6.txt"
  cat "$work/fx6.txt"
  "$bin" verify "$work/fx6.txt"
}

demo > "$work/run1.txt" 2>&1
demo > "$work/run2.txt" 2>&1
cat "$work/run1.txt"
echo
echo "== Checks"
if cmp -s "$work/run1.txt" "$work/run2.txt"; then
  echo "ok   two runs are byte-identical (sha256 $(sha256sum < "$work/run1.txt" | cut -c1-64))"
else
  fail "the two runs differ"; diff "$work/run1.txt" "$work/run2.txt" | head -20
fi

"$bin" sweep fixtures/*.json --retention given --retention head_tail:8 --retention recency:16 --format tsv \
  | grep -v ' -> overall exit ' | sed 's|^fixtures/||' > "$work/got.tsv"
if grep -v '^#' fixtures/expected.tsv | diff - "$work/got.tsv" > "$work/table.diff"; then
  echo "ok   every fixture x retention verdict matches fixtures/expected.tsv ($(wc -l < "$work/got.tsv") cells)"
else
  fail "verdicts differ from fixtures/expected.tsv:"; cat "$work/table.diff"
fi

summary=$("$bin" sweep fixtures/*.json --retention given | tail -n 1)
if [ "$summary" = "2 PASS, 4 BLOCK, 1 ERROR -> overall exit 2" ]; then
  echo "ok   full sweep: $summary"
else
  fail "full sweep summary is '$summary'"
fi

fingerprints=""
for row in "${actions[@]}"; do
  IFS='|' read -r tool params want <<<"$row"
  "$bin" check "$fx1" --retention given --action "{\"tool\":\"$tool\",\"params\":$params}" --format json > "$work/a.json"
  code=$?
  got=$(grep -m1 '"verdict"' "$work/a.json" | sed 's/.*: "\(.*\)",/\1/')
  fingerprints="$fingerprints $(grep -m1 '"kept_sha256"' "$work/a.json" | sed 's/.*: "\(.*\)"/\1/')"
  if [ "$got" != "$want" ]; then fail "$tool $params gave $got (exit $code), expected $want"; fi
done
if [ "$(echo $fingerprints | tr ' ' '\n' | sort -u | wc -l)" = 1 ]; then
  echo "ok   the six actions on fx1 give the expected verdicts over one kept set (kept-sha256=$(echo $fingerprints | cut -d' ' -f1))"
else
  fail "fx1's kept-sha256 differs between actions:$fingerprints"
fi

chatter=$("$bin" check fixtures/variants/fx4_rolling_summary_as_chatter.json | grep '^verdict')
blind=$("$bin" check fixtures/fx4_rolling_summary.json --allow-unevaluable)
if [ "$chatter" = "verdict   : PASS exit 0" ] && grep -q '^verdict   : PASS exit 0' <<<"$blind" \
  && grep -qF '[--allow-unevaluable: you chose to fly blind]' <<<"$blind"; then
  echo "ok   rolling summary retyped as chatter passes; --allow-unevaluable passes with the signed marker"
else
  fail "rolling-summary variants: '$chatter'"
fi

precheck_line() { "$bin" check --precheck "$fx1" --tools "$1" | grep '^verdict'; }
if [ "$(precheck_line refunds.create)" = "verdict   : BLOCK (may-bind-some-action) exit 1" ] \
  && [ "$(precheck_line '*')" = "verdict   : BLOCK (may-bind-some-action) exit 1" ] \
  && [ "$(precheck_line @fixtures/tools/refunds_typed.json)" = "verdict   : BLOCK (may-bind-some-action) exit 1" ] \
  && [ "$(precheck_line @fixtures/tools/refunds_capped.json)" = "verdict   : PASS exit 0" ]; then
  echo "ok   precheck on fx1: BLOCK without a schema (also for the glob '*') and with the typed schema, PASS with the capped one"
else
  fail "precheck verdicts on fx1 changed"
fi

"$bin" pin "$fx1" --tools @fixtures/tools/refunds_typed.json --budget 800 --format ids > "$work/pinned.txt"
if grep -qx f_011 "$work/pinned.txt" \
  && [ "$("$bin" check "$fx1" --kept @"$work/pinned.txt" | grep '^verdict')" = "verdict   : PASS exit 0" ] \
  && "$bin" check --precheck "$fx1" --tools @fixtures/tools/refunds_typed.json --kept @"$work/pinned.txt" >/dev/null \
  && "$bin" check --precheck "$fx1" --kept @"$work/pinned.txt" >/dev/null; then
  echo "ok   pin keeps f_011 within 800 tokens; under pin's kept set precheck and the 8,400 check pass"
else
  fail "pin's kept set does not protect the refund thread"
fi

if [ "$failures" -eq 0 ]; then
  echo "run_demo: all checks passed"
  exit 0
fi
echo "run_demo: $failures check(s) failed" >&2
exit 1
