#!/usr/bin/env python3
"""Generate a synthetic harness transcript for the transcript bench (standard library only).

Deterministic from --seed. The shapes are those of the real transcripts under
tests/transcripts/ (Claude Code session JSON Lines, Codex rollout, Gemini CLI session).

    python3 bench/gen_transcript.py --harness claude-code --size 200M --live 1M \\
        --store bench/data/store_10k.jsonl --out bench/data/transcripts/claude-code-200m.jsonl

Writes OUT (about --size bytes: a session, then, when --live is below --size, a compaction
that leaves about --live bytes of live context at the end, ending in a pending tool call)
and beside it OUT.payload.json, the pre-tool hook payload for that pending call (its
transcript_path is OUT, absolute). With --store, the live context quotes the text of every
other chatter record of that store (up to half the live bytes), so some records are in view
and some are not; the action is the store's (STORE.action.json).
"""

import argparse
import json
import os
import random

WORDS = (
    "refund invoice deploy customer balance weekly check status pending note draft "
    "summary window sync asked replied again nothing late could will whether please"
).split()


def size_arg(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1].upper()] if s[-1].upper() in units else int(s)


def prose(rng, n):
    out, total = [], 0
    while total < n:
        w = rng.choice(WORDS)
        out.append(w)
        total += len(w) + 1
    return " ".join(out)


class Writer:
    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8")
        self.bytes = 0

    def line(self, obj):
        s = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        self.f.write(s)
        self.bytes += len(s.encode("utf-8"))


def texts_to_quote(store, live):
    if not store:
        return []
    out, total = [], 0
    with open(store, encoding="utf-8") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            if r.get("kind") == "chatter" and "text" in r and i % 2 == 0:
                out.append(r["text"])
                total += len(r["text"])
                if total > live // 2:
                    break
    return out


def messages(rng, w, budget, quotes):
    """(role, text) pairs until `w` has written `budget` more bytes, quoting `quotes`."""
    quotes = list(quotes)
    end, role = w.bytes + budget, "user"
    while w.bytes < end:
        parts = [prose(rng, 1500)]
        for _ in range(12):
            if quotes:
                parts.append(quotes.pop())
        yield role, "\n".join(parts)
        role = "assistant" if role == "user" else "user"


def claude(out, rng, size, live, quotes, action):
    w = Writer(out)
    n = [0]

    def uuid():
        n[0] += 1
        return "u-%08d" % n[0]

    def entry(kind, parent, message, **extra):
        u = uuid()
        e = {"parentUuid": parent, "isSidechain": False, "type": kind, "message": message,
             "uuid": u, "timestamp": "2026-12-01T00:00:00.000Z", "sessionId": "s-bench"}
        e.update(extra)
        w.line(e)
        return u

    def text_message(role, text):
        if role == "user":
            return {"role": "user", "content": text}
        return {"role": "assistant", "type": "message", "content": [{"type": "text", "text": text}]}

    parent = None
    w.line({"type": "queue-operation", "operation": "enqueue", "sessionId": "s-bench"})
    compacting = live < size
    before = size - live if compacting else 0
    for role, text in messages(rng, w, before, []):
        parent = entry(role, parent, text_message(role, text))
    if compacting:
        preserved = parent
        boundary = uuid()
        w.line({"parentUuid": None, "logicalParentUuid": preserved, "isSidechain": False,
                "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "uuid": boundary, "timestamp": "2026-12-01T00:00:00.000Z",
                "compactMetadata": {"trigger": "manual", "preTokens": size // 4,
                                    "preservedMessages": {"anchorUuid": boundary, "uuids": [preserved]}}})
        parent = entry("user", boundary, text_message("user", "<summary>" + prose(rng, 2000) + "</summary>"),
                       isCompactSummary=True, isVisibleInTranscriptOnly=True)
    call = 0
    for role, text in messages(rng, w, live - 4000, quotes):
        parent = entry(role, parent, text_message(role, text))
        if role == "assistant":
            call += 1
            tid = "toolu_%06d" % call
            parent = entry("assistant", parent, {"role": "assistant", "type": "message", "content": [
                {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "ls -la"}}]})
            parent = entry("user", parent, {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": prose(rng, 300)}]})
    pending = "toolu_pending"
    entry("assistant", parent, {"role": "assistant", "type": "message", "content": [
        {"type": "tool_use", "id": pending, "name": action["tool"], "input": action["params"]}]})
    return pending


def codex(out, rng, size, live, quotes, action):
    w = Writer(out)

    def item(payload):
        w.line({"timestamp": "2026-12-01T00:00:00.000Z", "type": "response_item", "payload": payload})

    def message(role, text):
        kind = "output_text" if role == "assistant" else "input_text"
        item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    w.line({"timestamp": "2026-12-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "s-bench", "cwd": "/bench", "base_instructions": {"text": prose(rng, 10000)}}})
    compacting = live < size
    for role, text in messages(rng, w, size - live if compacting else 0, []):
        message(role, text)
    if compacting:
        summary = "Another language model started to solve this problem. " + prose(rng, 2000)
        w.line({"timestamp": "2026-12-01T00:00:00.000Z", "type": "compacted", "payload": {
            "message": summary,
            "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prose(rng, 500)}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]},
            ]}})
    call = 0
    for role, text in messages(rng, w, live - 4000, quotes):
        message(role, text)
        if role == "assistant":
            call += 1
            cid = "call_%06d" % call
            item({"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "ls -la"}),
                  "call_id": cid})
            item({"type": "function_call_output", "call_id": cid, "output": prose(rng, 300)})
    pending = "call_pending"
    item({"type": "function_call", "name": "exec_command", "arguments": json.dumps(action["params"]),
          "call_id": pending})
    return pending


def gemini(out, rng, size, live, quotes, action):
    w = Writer(out)
    n = [0]

    def mid():
        n[0] += 1
        return "m-%08d" % n[0]

    def message(role, text):
        kind = "gemini" if role == "assistant" else "user"
        return {"id": mid(), "timestamp": "2026-12-01T00:00:00.000Z", "type": kind,
                "content": [{"text": text}] if kind == "user" else text}

    w.line({"sessionId": "s-bench", "projectHash": "p-bench", "startTime": "2026-12-01T00:00:00.000Z",
            "lastUpdated": "2026-12-01T00:00:00.000Z", "kind": "main"})
    compacting = live < size
    for role, text in messages(rng, w, size - live if compacting else 0, []):
        w.line(message(role, text))
    if compacting:
        w.line({"$set": {"messages": [
            message("user", "<state_snapshot>" + prose(rng, 2000) + "</state_snapshot>"),
            message("assistant", "Got it. Thanks for the additional context!"),
        ]}})
    for role, text in messages(rng, w, live - 4000, quotes):
        m = message(role, text)
        if role == "assistant":
            m["toolCalls"] = [{"id": "tc-" + m["id"], "name": "run_shell_command", "args": {"command": "ls -la"},
                               "result": [{"functionResponse": {"id": "tc-" + m["id"], "name": "run_shell_command",
                                                                "response": {"output": prose(rng, 300)}}}],
                               "status": "success", "timestamp": "2026-12-01T00:00:00.000Z"}]
        w.line(m)
        w.line({"$set": {"lastUpdated": "2026-12-01T00:00:00.000Z"}})
    # The model message holding the pending call, recorded without its toolCalls.
    w.line(message("assistant", ""))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--harness", required=True, choices=["claude-code", "codex", "gemini-cli"])
    ap.add_argument("--size", type=size_arg, required=True)
    ap.add_argument("--live", type=size_arg, required=True)
    ap.add_argument("--store")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    quotes = texts_to_quote(a.store, a.live)
    action = {"tool": "Bash", "params": {"command": "touch gate-marker"}}
    if a.store and os.path.exists(a.store + ".action.json"):
        action = json.load(open(a.store + ".action.json"))
    write = {"claude-code": claude, "codex": codex, "gemini-cli": gemini}[a.harness]
    pending = write(a.out, rng, a.size, a.live, quotes, action)
    event = "BeforeTool" if a.harness == "gemini-cli" else "PreToolUse"
    payload = {"session_id": "s-bench", "transcript_path": os.path.abspath(a.out), "cwd": "/bench",
               "hook_event_name": event, "tool_name": action["tool"], "tool_input": action["params"]}
    if pending:
        payload["tool_use_id"] = pending
    with open(a.out + ".payload.json", "w") as f:
        json.dump(payload, f)
        f.write("\n")
    print(f"{a.out}: {a.harness}, {os.path.getsize(a.out) / 1e6:.1f} MB, live about {a.live} bytes, "
          f"{len(quotes)} store texts quoted")


if __name__ == "__main__":
    main()
