#!/usr/bin/env python3
"""Runs a hook command for the real-harness tests and records what happened.

Usage: hook_wrap.py LOG [--snapshot DIR] COMMAND [ARG...]

The harness's payload (stdin) is passed to COMMAND unchanged, and COMMAND's stdout,
stderr and exit code are passed back unchanged, so the harness sees the gate itself.
One JSON line per call is appended to LOG: the payload, the exit code, the stderr, and
the size of the transcript file the payload names at the moment the hook started (a
harness may write its transcript after it calls the hook). With --snapshot, a copy of
that transcript as it was then goes to DIR/hook-N.<ext>.
"""

import json
import os
import shutil
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: hook_wrap.py LOG COMMAND [ARG...]\n")
        return 2
    log, command = sys.argv[1], sys.argv[2:]
    snapshots = None
    if command[:1] == ["--snapshot"] and len(command) > 2:
        snapshots, command = command[1], command[2:]
    payload = sys.stdin.buffer.read()
    started = time.time()
    try:
        parsed = json.loads(payload)
    except ValueError:
        parsed = None
    transcript = parsed.get("transcript_path") if isinstance(parsed, dict) else None
    size_at_start = None
    if isinstance(transcript, str) and transcript and os.path.exists(transcript):
        size_at_start = os.path.getsize(transcript)
        if snapshots:
            os.makedirs(snapshots, exist_ok=True)
            number = len(os.listdir(snapshots)) + 1
            shutil.copy(transcript, os.path.join(snapshots, "hook-%d%s" % (number, os.path.splitext(transcript)[1])))
    try:
        done = subprocess.run(command, input=payload, capture_output=True, timeout=60)
        code, out, err = done.returncode, done.stdout, done.stderr
    except (OSError, subprocess.TimeoutExpired) as failure:
        code, out, err = 127, b"", ("hook_wrap: %s\n" % failure).encode()
    entry = {
        "started": round(started, 3),
        "seconds": round(time.time() - started, 3),
        "payload": parsed,
        "exit": code,
        "stdout": out.decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "transcript_bytes_at_start": size_at_start,
    }
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main())
