#!/usr/bin/env bash
# Real-harness tests: Claude Code, Codex and Gemini CLI, installed from npm at pinned
# versions, run headless against a loopback mock of their model API, with omission-gate
# as their pre-tool hook (`--kept-from transcript`). See tests/harness/README.md.
#
#   tests/harness/run.sh [run.py options, e.g. --harness codex --scenario B]
#
# Environment:
#   OMISSION_GATE_BIN          the gate to test (default: `cargo build`, target/debug/omission-gate)
#   OMISSION_GATE_HARNESS_CACHE where the CLIs are installed (default: target/harness-cli)
#   OMISSION_GATE_HARNESS_WORK  keep the sessions' files there (default: a temp dir, removed)
#
# Exit: 0 when every scenario comes out as expected (or the step is skipped, loudly,
# because node, npm, python3 or the npm registry is missing), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

CLAUDE_CODE_VERSION=2.1.197
CODEX_VERSION=0.171.0
GEMINI_CLI_VERSION=0.61.0

skip() {
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  echo "!! SKIPPED: the real-harness tests did not run: $1" >&2
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  exit 0
}

for tool in node npm python3; do
  command -v "$tool" >/dev/null 2>&1 || skip "\`$tool\` is not on PATH (install Node.js 20+ with npm, and Python 3)"
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] 2>/dev/null || skip "node $(node --version) is older than 20"

cache=${OMISSION_GATE_HARNESS_CACHE:-$root/target/harness-cli}
mkdir -p "$cache"

# install NAME PACKAGE VERSION: into $cache/NAME, unless that version is there already.
install() {
  local dir=$cache/$1 package=$2 version=$3 have
  have=$(node -p "try { require('$dir/node_modules/$package/package.json').version } catch (e) { '' }" 2>/dev/null)
  if [ "$have" = "$version" ]; then
    echo "   $package@$version (cached in $dir)"
    return 0
  fi
  echo "   npm install $package@$version into $dir"
  mkdir -p "$dir"
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$package@$version" >"$dir/install.log" 2>&1; then
    if ! npm ping >/dev/null 2>&1; then
      skip "the npm registry ($(npm config get registry)) is unreachable, so $package@$version cannot be installed"
    fi
    echo "error: npm install $package@$version failed (see $dir/install.log):" >&2
    tail -n 20 "$dir/install.log" >&2
    exit 1
  fi
}

echo "== installing the CLIs (pinned versions)"
install claude-code @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION"
install codex @openai/codex "$CODEX_VERSION"
install gemini-cli @google/gemini-cli "$GEMINI_CLI_VERSION"

gate=${OMISSION_GATE_BIN:-}
if [ -z "$gate" ]; then
  echo "== cargo build (the gate under test)"
  cargo build --quiet || exit 1
  gate=$root/target/debug/omission-gate
fi
[ -x "$gate" ] || { echo "error: the gate \`$gate\` is not an executable file (set OMISSION_GATE_BIN)" >&2; exit 1; }
# The hook's help exits 2 (a hook command that asks for help denies), older builds' 0:
# read it whatever the exit code.
hook_help=$("$gate" hook claude-code --help 2>&1 || true)
if ! grep -q -- '--kept-from' <<<"$hook_help"; then
  # Another build named by OMISSION_GATE_BIN may predate the mode; the one built here
  # must have it.
  if [ -n "${OMISSION_GATE_BIN:-}" ]; then
    skip "\`$gate\` has no \`hook --kept-from transcript\` (the mode these tests are about)"
  fi
  echo "error: \`$gate hook claude-code --help\` does not show \`--kept-from\` (the mode these tests are about)" >&2
  exit 1
fi

# The hook configuration: what `omission-gate init H` writes, where the gate has init;
# else written by run.py (through hook_wrap.py, which also records each hook call).
wiring=direct
if "$gate" init --help >/dev/null 2>&1; then
  wiring=init
fi

work=${OMISSION_GATE_HARNESS_WORK:-}
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/og-harness.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi

# Where this kernel allows it, run the sessions in a network namespace of their own with
# only loopback up: then nothing but the mock on 127.0.0.1 can be reached, whatever a CLI
# tries. Elsewhere each CLI is pointed at 127.0.0.1 by its settings alone.
isolate=()
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 &&
  unshare -rn sh -c 'ip link set lo up' >/dev/null 2>&1; then
  isolate=(unshare -rn sh -c 'ip link set lo up && exec "$@"' sh)
  echo "   (the sessions run with no network but loopback: unshare -rn)"
else
  echo "   (unshare -rn is not available: the sessions are not network-isolated; every CLI is pointed at 127.0.0.1)"
fi

status=0
echo "== real harnesses, gate $gate, hooks wired by: $wiring"
${isolate[@]+"${isolate[@]}"} python3 tests/harness/run.py --cli-dir "$cache" --gate "$gate" --mode real --wiring "$wiring" --work "$work" \
  --known tests/harness/known-failures "$@" || status=1
echo "== sanity: the same scenarios with a gate that always passes must fail where a block is needed"
${isolate[@]+"${isolate[@]}"} python3 tests/harness/run.py --cli-dir "$cache" --gate tests/harness/always-pass-gate.sh --mode sanity --work "$work" \
  --scenario A+E --scenario D --scenario K --scenario M --scenario R --scenario S "$@" || status=1
exit $status
