#!/usr/bin/env python3
"""A scripted model API on 127.0.0.1 for the real-harness tests.

One process serves one harness's protocol: Claude Code (Anthropic Messages, SSE),
Codex (OpenAI Responses, SSE) or Gemini CLI (Gemini streamGenerateContent, SSE, and
generateContent for its summarizer). Every reply is decided from the request alone,
by the same small script for all three:

- a compaction request gets a summary that keeps the rule's text (--summary keep) or
  leaves it out (--summary omit);
- a user turn holding GO_WORD gets a call of the gated command, or with --tool-args of
  the tool --command names (first a harmless
  warm-up command with --warmup, so that a harness can compact mid-turn); with
  --subagent, a call of the harness's subagent tool instead, whose task (SUBAGENT_WORD,
  the rule quoted or not) gets the call of the gated command;
- the result of a gated call gets the same call again once (--retry), else a final text;
- any other turn gets a short text.

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
    if role == "user" and kind == "result":
        last_call = next((t for t in reversed(turns) if t[1] == "call"), None)
        if last_call and last_call[2] == WARMUP_COMMAND:
            return ("call", ARGS.command)
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
        if ARGS.subagent != "none":
            return ("agent", subagent_prompt())
        if ARGS.warmup:
            return ("call", WARMUP_COMMAND)
        return ("call", ARGS.command)
    return ("text", "Noted.")


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
        return kind == "call" and decision[1] == WARMUP_COMMAND
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


def claude_reply(handler, body):
    decision = decide(claude_turns(body), claude_is_compaction(body))
    tokens = 150000 if big_usage(decision) else 1200
    message_id = next_id("msg")
    if decision[0] == "agent":
        arguments = {"description": "run the step", "prompt": decision[1], "subagent_type": "general-purpose"}
        block = {"type": "tool_use", "id": next_id("toolu"), "name": "Agent", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        stop = "tool_use"
        full = dict(block, input=arguments)
    elif decision[0] == "call":
        block = {"type": "tool_use", "id": next_id("toolu"), "name": "Bash", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps({"command": decision[1], "description": "run the step"})}
        stop = "tool_use"
        full = dict(block, input={"command": decision[1], "description": "run the step"})
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": decision[1]}
        stop = "end_turn"
        full = {"type": "text", "text": decision[1]}
    usage = {"input_tokens": tokens, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    model = body.get("model", "claude-sonnet-4-5")
    if not body.get("stream"):
        handler.send_json({"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [full], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        return decision
    events = [
        ("message_start", {"type": "message_start", "message": {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
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
        elif kind == "function_call_output":
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


def codex_reply(handler, body):
    waiting_on = codex_waiting_on(body)
    decision = ("wait", waiting_on) if waiting_on else decide(codex_turns(body), not body.get("tools"))
    tokens = 300000 if big_usage(decision) else 1200
    response_id = next_id("resp")
    if decision[0] == "agent":
        item = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": json.dumps({"message": decision[1]})}
    elif decision[0] == "wait":
        item = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "wait_agent", "namespace": "multi_agent_v1", "arguments": json.dumps({"targets": [decision[1]], "timeout_ms": 60000})}
    elif decision[0] == "call":
        item = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": "exec_command", "arguments": json.dumps({"cmd": decision[1]})}
    else:
        item = {"type": "message", "role": "assistant", "id": next_id("msg"), "content": [{"type": "output_text", "text": decision[1], "annotations": []}]}
    usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens + 20}
    events = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}}),
        ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
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
    tokens = 600000 if big_usage(decision) else 1200
    if decision[0] == "agent":
        # Gemini CLI's built-in subagent with every tool.
        part = {"functionCall": {"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": decision[1]}}}
    elif decision[0] == "call" and ARGS.tool_args and decision[1] == ARGS.command:
        part = {"functionCall": {"name": decision[1], "args": json.loads(ARGS.tool_args)}}
    elif decision[0] == "call":
        part = {"functionCall": {"name": "run_shell_command", "args": {"command": decision[1], "description": "run the step"}}}
    else:
        part = {"text": decision[1]}
    response = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
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
    parser.add_argument("--big-usage", choices=["never", "text", "warmup"], default="never")
    parser.add_argument("--subagent", choices=["none", "omit", "quote"], default="none",
                        help="Claude Code: on GO the main agent hands the step to a subagent, whose task quotes the rule or not")
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
