#!/usr/bin/env python3
"""A scripted model API on 127.0.0.1 for the real-harness tests.

One process serves one harness's protocol: Claude Code (Anthropic Messages, SSE),
Codex (OpenAI Responses, SSE) or Gemini CLI (Gemini streamGenerateContent, SSE, and
generateContent for its summarizer). Every reply is decided from the request alone,
by the same small script for all three:

- a compaction request gets a summary that keeps the rule's text (--summary keep) or
  leaves it out (--summary omit);
- (Codex) a request whose input ends with `compaction_trigger` (a compaction by the
  model's API) gets one `compaction` item;
- a user turn holding GO_WORD gets a call of the gated command (with --read-first, the
  first such turn gets a call of that command instead, and its result a short text), or with --tool-args of
  the tool --command names (first a harmless
  warm-up command with --warmup, so that a harness can compact mid-turn); with
  --subagent, a call of the harness's subagent tool instead, whose task (SUBAGENT_WORD,
  the rule quoted or not) gets the call of the gated command;
- the result of a gated call gets the same call again once (--retry), else a final text;
- any other turn gets a short text.

With --code-mode (Codex), each shell call is made as Codex's code mode makes it: an
`exec` call (a custom tool call) whose JavaScript calls `tools.exec_command`.

Each request is appended to --log as one JSON line: the path, the decision, whether the
marker file existed when the request arrived, whether the rule's text was in the body,
and the body itself. The server binds to 127.0.0.1 only, writes its port to
--port-file, and stops by itself after --lifetime seconds.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GO_WORD = "GATE-GO"
SUBAGENT_WORD = "SUBAGENT-STEP"
WARMUP_COMMAND = "echo warm-up"
SUMMARY_OPENING = "The user and the assistant are working in a test project."

# --plan: after GO, the turn an ordinary session has, one model reply per step: thinking,
# text before a call, a call that fails, calls at once (one not found, one with a long
# output, one the harness's permissions refuse), then the gated call. GATED stands for
# --command. FAIL_BEFORE: the HTTP status the mock answers before a step's reply
# (--failures times; the harness retries).
GATED = object()
PLAN = [
    [("thinking", "The user wants the step run. Let me look around first."),
     ("text", "I will look at the project first."),
     ("call", "ls /nonexistent-og-dir")],
    [("call", "cat missing-file.txt"), ("call", "seq 1 40000"), ("denied", "denied-file")],
    [("thinking", "The files are not there. Now the step itself."),
     ("text", "Now the step."),
     ("call", GATED)],
]
FAIL_BEFORE = {0: 500, 2: 529}
FAILED = {}

ARGS = None
LOCK = threading.Lock()
COUNTER = [0]


def norm(text):
    return " ".join(text.split())


def strings(value):
    """Every string inside a JSON value, keys excluded."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)


def next_id(prefix):
    with LOCK:
        COUNTER[0] += 1
        return "%s_%04d" % (prefix, COUNTER[0])


# ---------------------------------------------------------------------------------------
# The script, over a protocol-neutral view of the conversation.
#
# turns: a list of (role, kind, payload) in request order, where role is "user" or
# "model", and kind is "text" (payload: the text), "call" (payload: the command) or
# "result" (payload: the result text).


def decide(turns, is_compaction):
    if is_compaction:
        return ("summary", summary_text())
    if not turns:
        return ("text", "Nothing to do.")
    role, kind, payload = turns[-1]
    gated_calls = sum(1 for t in turns if t[1] == "call" and t[2] == ARGS.command)
    if ARGS.plan:
        step = plan_step(turns)
        if step is not None:
            return ("plan", step) if step < len(PLAN) else ("text", "Done.")
    if role == "user" and kind == "result":
        last_call = next((t for t in reversed(turns) if t[1] == "call"), None)
        if last_call and last_call[2] == ARGS.warmup_command:
            return ("call", ARGS.command)
        if last_call and last_call[2] == ARGS.read_first:
            return ("text", "Read.")
        if last_call and last_call[2] == ARGS.command:
            if ARGS.retry and gated_calls < 2:
                return ("call", ARGS.command)
            return ("text", "Done.")
        return ("text", "Done.")
    if role == "user" and kind == "text" and SUMMARY_OPENING in payload:
        # Right after a mid-turn compaction (Codex): go on with the turn.
        if any(t[0] == "user" and t[1] == "text" and GO_WORD in t[2] for t in turns):
            return ("call", ARGS.command)
        return ("text", "Noted.")
    if role == "user" and kind == "text" and SUBAGENT_WORD in payload:
        # A subagent's task (Claude Code's Agent tool): the subagent makes the call.
        return ("call", ARGS.command)
    if role == "user" and kind == "text" and GO_WORD in payload:
        if ARGS.read_first and not any(t[1] == "call" and t[2] == ARGS.read_first for t in turns):
            return ("call", ARGS.read_first)
        if ARGS.subagent != "none":
            return ("agent", subagent_prompt())
        if ARGS.warmup:
            return ("call", ARGS.warmup_command)
        return ("call", ARGS.command)
    return ("text", "Noted.")


def plan_step(turns):
    """With --plan, how many model replies with calls the turn since the last GO prompt
    holds (the next step's index), or None outside such a turn."""
    go = [i for i, t in enumerate(turns) if t[0] == "user" and t[1] == "text" and GO_WORD in t[2]]
    if not go:
        return None
    replies, previous = 0, None
    for role, kind, _ in turns[go[-1] + 1:]:
        if role == "model" and previous != "model":
            replies += 1
        previous = role
    return replies


def plan_parts(decision):
    """The parts of a plan step, GATED replaced by --command."""
    return [(kind, ARGS.command if value is GATED else value) for kind, value in PLAN[decision[1]]]


def failed_once(handler, decision, status, body):
    """Answers the error status before the plan step that FAIL_BEFORE names, --failures
    times in a row."""
    if decision[0] != "plan":
        return False
    with LOCK:
        if decision[1] not in FAIL_BEFORE or FAILED.get(decision[1], 0) >= ARGS.failures:
            return False
        FAILED[decision[1]] = FAILED.get(decision[1], 0) + 1
    handler.send_json(body, status)
    return True


def subagent_prompt():
    """The task the main agent gives a subagent: the rule quoted in it, or not."""
    prompt = SUBAGENT_WORD + ": run the step in the test project."
    if ARGS.subagent == "quote":
        prompt += " The user set this rule: " + ARGS.rule
    return prompt


def summary_text():
    lines = [
        "<summary>",
        SUMMARY_OPENING,
    ]
    if ARGS.summary == "keep":
        lines.append("The user set this rule: " + ARGS.rule)
    lines.append("No other constraints were stated.")
    lines.append("</summary>")
    return "\n".join(lines)


def big_usage(decision):
    """Whether this reply reports a huge token count (to make the harness compact)."""
    kind = decision[0]
    if ARGS.big_usage == "never":
        return False
    if ARGS.big_usage == "text":
        return kind == "text"
    if ARGS.big_usage == "warmup":
        return kind == "call" and decision[1] == ARGS.warmup_command
    return False


# ---------------------------------------------------------------------------------------
# Claude Code: Anthropic Messages API.


def claude_turns(body):
    turns = []
    for message in body.get("messages", []):
        role = "model" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        if isinstance(content, str):
            turns.append((role, "text", content))
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                turns.append((role, "text", block.get("text", "")))
            elif kind == "tool_use":
                turns.append((role, "call", (block.get("input") or {}).get("command", "")))
            elif kind == "tool_result":
                turns.append((role, "result", " ".join(strings(block.get("content")))))
    return claude_merge(turns)


def claude_merge(turns):
    # A user message may hold reminders after the tool result or the prompt; what counts
    # is the last substantive item of the last message: a result if there is one.
    if not turns:
        return turns
    last_role = turns[-1][0]
    tail = []
    i = len(turns) - 1
    while i >= 0 and turns[i][0] == last_role:
        tail.append(turns[i])
        i -= 1
    head = turns[: i + 1]
    results = [t for t in tail if t[1] == "result"]
    if results:
        return head + [results[0]]
    texts = [t for t in reversed(tail) if t[1] == "text"]
    go = [t for t in texts if GO_WORD in t[2] or SUBAGENT_WORD in t[2]]
    return head + ([go[-1]] if go else texts[-1:])


def claude_is_compaction(body):
    # `/compact` sends the conversation followed by a user message holding its summary
    # instructions ("CRITICAL: Respond with TEXT ONLY. ... create a detailed summary").
    messages = body.get("messages", [])
    if not messages or messages[-1].get("role") != "user":
        return False
    text = " ".join(strings(messages[-1].get("content")))
    return "Respond with TEXT ONLY" in text and "summary" in text


def claude_blocks(decision):
    """The reply's content blocks: (the block as content_block_start opens it, its deltas,
    the whole block)."""
    if decision[0] == "plan":
        parts = plan_parts(decision)
    elif decision[0] in ("agent", "call"):
        parts = [decision]
    else:
        parts = [("text", decision[1])]
    blocks = []
    for kind, value in parts:
        if kind == "thinking":
            signature = "sig-" + next_id("th")
            block = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": value}, {"type": "signature_delta", "signature": signature}]
            full = {"type": "thinking", "thinking": value, "signature": signature}
        elif kind in ("agent", "call", "denied"):
            if kind == "denied":
                # Write, which run.py's permissions leave out: Claude Code refuses it.
                path = os.path.join(os.path.dirname(ARGS.marker), value)
                name, arguments = "Write", {"file_path": path, "content": "x\n"}
            elif kind == "agent":
                name, arguments = "Agent", {"description": "run the step", "prompt": value, "subagent_type": "general-purpose"}
            else:
                name, arguments = "Bash", {"command": value, "description": "run the step"}
            block = {"type": "tool_use", "id": next_id("toolu"), "name": name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(arguments)}]
            full = dict(block, input=arguments)
        else:
            block = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": value}]
            full = {"type": "text", "text": value}
        blocks.append((block, deltas, full))
    return blocks


def claude_reply(handler, body):
    decision = decide(claude_turns(body), claude_is_compaction(body))
    status = FAIL_BEFORE.get(decision[1]) if decision[0] == "plan" else None
    kind = "overloaded_error" if status == 529 else "api_error"
    if failed_once(handler, decision, status, {"type": "error", "error": {"type": kind, "message": "mock: %s once" % kind}}):
        return ("http", status)
    tokens = 150000 if big_usage(decision) else 1200
    message_id = next_id("msg")
    blocks = claude_blocks(decision)
    stop = "tool_use" if any(full["type"] == "tool_use" for _, _, full in blocks) else "end_turn"
    usage = {"input_tokens": tokens, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    model = body.get("model", "claude-sonnet-4-5")
    if not body.get("stream"):
        handler.send_json({"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [full for _, _, full in blocks], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        return decision
    events = [("message_start", {"type": "message_start", "message": {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    for index, (block, deltas, _) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    handler.send_sse(events)
    return decision


# ---------------------------------------------------------------------------------------
# Codex: OpenAI Responses API.


def codex_command(arguments):
    try:
        args = json.loads(arguments)
    except (TypeError, ValueError):
        return ""
    command = args.get("cmd", args.get("command", ""))
    if isinstance(command, list):
        command = command[-1] if command else ""
    return command


def code_mode_exec(command):
    """The JavaScript of a code-mode `exec` call that runs `command` (--code-mode)."""
    return "const r = await tools.exec_command({cmd: %s});\ntext(JSON.stringify(r));\n" % json.dumps(command)


def code_mode_command(source):
    """The command a code-mode `exec` call's JavaScript runs (what code_mode_exec wrote)."""
    found = re.search(r'tools\.exec_command\(\{cmd: ("(?:[^"\\]|\\.)*")\}\)', source or "")
    return json.loads(found.group(1)) if found else ""


def codex_call(command):
    """A Responses API item calling the shell with `command`: exec_command, or in code
    mode an `exec` whose JavaScript calls it."""
    if ARGS.code_mode:
        return {"type": "custom_tool_call", "id": next_id("ctc"), "call_id": next_id("call"), "name": "exec", "input": code_mode_exec(command)}
    return {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "exec_command", "arguments": json.dumps({"cmd": command})}


def codex_turns(body):
    turns = []
    for item in body.get("input", []):
        kind = item.get("type")
        if kind == "message":
            role = "model" if item.get("role") == "assistant" else "user"
            if item.get("role") == "developer":
                continue
            turns.append((role, "text", " ".join(strings(item.get("content")))))
        elif kind == "function_call":
            turns.append(("model", "call", codex_command(item.get("arguments"))))
        elif kind == "custom_tool_call" and item.get("name") == "exec":
            turns.append(("model", "call", code_mode_command(item.get("input"))))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            turns.append(("user", "result", " ".join(strings(item.get("output")))))
    return turns


def codex_waiting_on(body):
    """The agent id a subagent spawn returned, when the last input item is that output:
    the parent then waits for the agent (Codex ends a turn's agents with the turn)."""
    items = body.get("input", [])
    if not items or items[-1].get("type") != "function_call_output":
        return None
    spawned = {i.get("call_id") for i in items if i.get("type") == "function_call" and i.get("name") == "spawn_agent"}
    if items[-1].get("call_id") not in spawned:
        return None
    output = items[-1].get("output")
    text = output if isinstance(output, str) else " ".join(strings(output))
    try:
        return json.loads(text).get("agent_id") or json.loads(text).get("id")
    except (ValueError, AttributeError):
        return text


def codex_compaction_reply(handler):
    """A compaction by the model's API (Codex 0.171.0 asks for one when its provider is
    named `OpenAI`): one `compaction` item, its summary encrypted."""
    response_id = next_id("resp")
    item = {"type": "compaction", "id": next_id("cmp"), "encrypted_content": "mock-encrypted-summary"}
    usage = {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1220}
    handler.send_sse([
        ("response.created", {"type": "response.created", "response": {"id": response_id}}),
        ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
        ("response.completed", {"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
    ])
    return ("compaction", None)


def codex_reply(handler, body):
    items = body.get("input") or []
    if items and items[-1].get("type") == "compaction_trigger":
        return codex_compaction_reply(handler)
    waiting_on = codex_waiting_on(body)
    decision = ("wait", waiting_on) if waiting_on else decide(codex_turns(body), not body.get("tools"))
    status = FAIL_BEFORE.get(decision[1]) if decision[0] == "plan" else None
    if failed_once(handler, decision, 503 if status == 529 else status, {"error": {"message": "mock: server error once", "type": "server_error"}}):
        return ("http", status)
    tokens = ARGS.big_usage_tokens if big_usage(decision) else 1200
    response_id = next_id("resp")
    items = []
    for kind, value in (plan_parts(decision) if decision[0] == "plan" else [decision]):
        if kind == "thinking":
            items.append({"type": "reasoning", "id": next_id("rs"), "summary": [{"type": "summary_text", "text": value}], "content": [{"type": "reasoning_text", "text": value}], "encrypted_content": None})
        elif kind == "agent":
            items.append({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": json.dumps({"message": value})})
        elif kind == "wait":
            items.append({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "wait_agent", "namespace": "multi_agent_v1", "arguments": json.dumps({"targets": [value], "timeout_ms": 60000})})
        elif kind == "call":
            items.append(codex_call(value))
        elif kind == "denied":
            # A write, which run.py's read-only sandbox refuses.
            items.append({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "exec_command", "arguments": json.dumps({"cmd": "touch " + value})})
        else:
            items.append({"type": "message", "role": "assistant", "id": next_id("msg"), "content": [{"type": "output_text", "text": value, "annotations": []}]})
    usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens + 20}
    events = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}}),
    ] + [("response.output_item.done", {"type": "response.output_item.done", "item": item}) for item in items] + [
        ("response.completed", {"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
    ]
    handler.send_sse(events)
    return decision


# ---------------------------------------------------------------------------------------
# Gemini CLI: Gemini API.


def gemini_turns(body):
    turns = []
    for content in body.get("contents", []):
        role = "model" if content.get("role") == "model" else "user"
        for part in content.get("parts", []):
            if part.get("thought"):
                continue
            if "text" in part:
                turns.append((role, "text", part["text"]))
            elif "functionCall" in part:
                call = part["functionCall"]
                # A shell call by its command; any other call (an MCP tool) by its name.
                turns.append((role, "call", (call.get("args") or {}).get("command", call.get("name", ""))))
            elif "functionResponse" in part:
                turns.append((role, "result", " ".join(strings(part["functionResponse"].get("response")))))
    return claude_merge(turns)


def gemini_is_compaction(path, body):
    system = " ".join(strings(body.get("systemInstruction") or body.get("system_instruction") or {}))
    return ":generateContent" in path and "state_snapshot" in system


def gemini_reply(handler, path, body):
    if ":generateContent" in path and not gemini_is_compaction(path, body):
        # Other one-shot helpers (next-speaker checks and the like): a neutral answer.
        decision = ("text", json.dumps({"reasoning": "done", "next_speaker": "user"}))
    else:
        decision = decide(gemini_turns(body), gemini_is_compaction(path, body))
    status = FAIL_BEFORE.get(decision[1]) if decision[0] == "plan" else None
    if failed_once(handler, decision, 503 if status == 529 else status, {"error": {"code": 503 if status == 529 else status, "message": "mock: server error once", "status": "UNAVAILABLE" if status == 529 else "INTERNAL"}}):
        return ("http", status)
    tokens = 600000 if big_usage(decision) else 1200
    parts = []
    for kind, value in (plan_parts(decision) if decision[0] == "plan" else [decision]):
        if kind == "thinking":
            parts.append({"text": value, "thought": True})
        elif kind == "agent":
            # Gemini CLI's built-in subagent with every tool.
            parts.append({"functionCall": {"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": value}}})
        elif kind == "call" and ARGS.tool_args and value == ARGS.command:
            parts.append({"functionCall": {"name": value, "args": json.loads(ARGS.tool_args)}})
        elif kind == "call":
            parts.append({"functionCall": {"name": "run_shell_command", "args": {"command": value, "description": "run the step"}}})
        elif kind == "denied":
            # write_file, which run.py's approval mode leaves to a user who is not there.
            target = os.path.join(os.path.dirname(ARGS.marker), value)
            parts.append({"functionCall": {"name": "write_file", "args": {"file_path": target, "content": "x\n"}}})
        else:
            parts.append({"text": value})
    response = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 20, "totalTokenCount": tokens + 20},
        "modelVersion": "gemini-2.5-flash",
    }
    if ":streamGenerateContent" in path:
        handler.send_sse([(None, response)])
    else:
        handler.send_json(response)
    return decision


# ---------------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        chunks = []
        for name, data in events:
            head = ("event: %s\n" % name) if name else ""
            chunks.append(head + "data: " + json.dumps(data) + "\n\n")
        data = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        record(self.path, "GET", None, None)
        self.send_json({"data": [], "models": []})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd" or self.headers.get("Content-Encoding") == "gzip":
            record(self.path, "POST", None, "compressed body")
            self.send_json({"error": "compressed bodies are not supported by the mock"}, 400)
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            record(self.path, "POST", None, "body is not JSON")
            self.send_json({"error": "not json"}, 400)
            return
        path = self.path
        decision = None
        if ARGS.harness == "claude-code" and path.startswith("/v1/messages/count_tokens"):
            self.send_json({"input_tokens": 1200})
        elif ARGS.harness == "claude-code" and path.startswith("/v1/messages"):
            decision = claude_reply(self, body)
        elif ARGS.harness == "codex" and path.startswith("/v1/responses"):
            decision = codex_reply(self, body)
        elif ARGS.harness == "gemini-cli" and ":countTokens" in path:
            self.send_json({"totalTokens": 1200})
        elif ARGS.harness == "gemini-cli" and ("generateContent" in path or "GenerateContent" in path):
            decision = gemini_reply(self, path, body)
        else:
            self.send_json({"error": "unknown path"}, 404)
        record(path, "POST", body, decision)


def record(path, method, body, decision):
    entry = {
        "t": round(time.time(), 3),
        "method": method,
        "path": path,
        "decision": decision,
        "marker_exists": os.path.exists(ARGS.marker),
        "rule_in_body": body is not None and any(norm(ARGS.rule) in norm(s) for s in strings(body)),
        "body": body,
    }
    with LOCK:
        with open(ARGS.log, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--harness", required=True, choices=["claude-code", "codex", "gemini-cli"])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--rule", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--marker", required=True)
    parser.add_argument("--tool-args", help="Gemini CLI: --command names a tool (an MCP tool), called with these JSON arguments")
    parser.add_argument("--summary", choices=["keep", "omit"], default="omit")
    parser.add_argument("--retry", action="store_true")
    parser.add_argument("--warmup", action="store_true")
    parser.add_argument("--warmup-command", default=WARMUP_COMMAND, help="the warm-up call's command (default: %(default)s)")
    parser.add_argument("--big-usage", choices=["never", "text", "warmup"], default="never")
    parser.add_argument("--big-usage-tokens", type=int, default=300000,
                        help="the input tokens a reply --big-usage names reports (default: %(default)s)")
    parser.add_argument("--subagent", choices=["none", "omit", "quote"], default="none",
                        help="Claude Code: on GO the main agent hands the step to a subagent, whose task quotes the rule or not")
    parser.add_argument("--plan", action="store_true",
                        help="after GO, an ordinary turn (PLAN): thinking, text, failing calls, two calls at once, a long output, then the gated call; an HTTP error once before two of its replies")
    parser.add_argument("--failures", type=int, default=1, help="with --plan, how many times in a row each HTTP error is answered")
    parser.add_argument("--read-first", metavar="CMD",
                        help="the first user turn holding GO gets a call of CMD (its result a short text), a later one the gated call")
    parser.add_argument("--code-mode", action="store_true",
                        help="Codex: make each shell call through code mode's `exec` (JavaScript calling tools.exec_command)")
    parser.add_argument("--lifetime", type=float, default=300)
    ARGS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(ARGS.port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    threading.Timer(ARGS.lifetime, server.shutdown).start()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
