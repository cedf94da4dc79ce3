#!/bin/sh
# gate-then-run.sh: run a command only when omission-gate passes the call it stands for.
#
#   gate-then-run.sh STORE ACTION -- COMMAND [ARG...]
#
# STORE is the record store (a document with `records` and `kept`, or JSON Lines with the
# kept ids in OMISSION_GATE_KEPT). ACTION is the call as the gate sees it:
# {"tool": "...", "params": {...}}. The gate's report goes to stderr, so COMMAND's stdout
# stays its own. COMMAND runs only on PASS (exit 0), and then this script exits with
# COMMAND's code. On BLOCK (1), ERROR (2) or a gate that cannot be run at all (127),
# COMMAND does not run and this script exits with the gate's code: never 0.
#
# OMISSION_GATE names the binary (default: omission-gate on PATH).
set -u

if [ "$#" -lt 4 ] || [ "$3" != "--" ]; then
  echo "usage: gate-then-run.sh STORE ACTION -- COMMAND [ARG...]" >&2
  exit 2
fi
store=$1
action=$2
shift 3
gate=${OMISSION_GATE:-omission-gate}

if [ -n "${OMISSION_GATE_KEPT:-}" ]; then
  "$gate" check "$store" --action "$action" --kept "$OMISSION_GATE_KEPT" >&2
else
  "$gate" check "$store" --action "$action" >&2
fi
status=$?
if [ "$status" -ne 0 ]; then
  echo "gate-then-run: not running \`$1\`: omission-gate exited $status" >&2
  exit "$status"
fi
exec "$@"
