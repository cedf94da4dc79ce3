#!/usr/bin/env python3
"""A tiny MCP server (stdio, JSON-RPC 2.0, one message a line) for the real-harness tests.

Usage: mcp_billing.py MARKER

One tool, `refunds_create` (amount, ticket): calling it creates the file MARKER, so a
test can tell whether the harness ran the call. It exits when its stdin closes.
"""

import json
import sys

TOOL = {
    "name": "refunds_create",
    "description": "Create a refund for a ticket.",
    "inputSchema": {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "ticket": {"type": "string"}},
        "required": ["amount", "ticket"],
    },
}


def answer(request, marker):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "billing", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        with open(marker, "w") as out:
            out.write(json.dumps(params.get("arguments")) + "\n")
        return {"content": [{"type": "text", "text": "refund created"}]}
    if method == "ping":
        return {}
    return None


def main():
    marker = sys.argv[1]
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if "id" not in request:
            continue  # a notification
        result = answer(request, marker)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "method not found"}}
        else:
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
