#!/usr/bin/env python3
"""Makes the transcript fixtures from real transcripts (see README.md here).

    python3 tests/transcripts/trim.py SOURCE_DIR [SCENARIO[:CALL,...]...]

SOURCE_DIR holds <harness>/<scenario>/ as the real-harness capture writes them. For each
pre-tool hook call it takes the transcript as it was when the call's hook started (the
copy taken then; when that copy does not yet record the call, the final transcript cut
after the line that does), cuts every string longer than 1,000 characters to its first
300 (marked; where it carries the rule, the rule and some of its surroundings too), and writes <harness>/<scenario>-<n>.jsonl with the hook payload beside it
(<harness>/<scenario>-<n>.payload.json, its transcript_path left for the test to set).
The scenarios are AE, B, C and D unless named; `R:4,8` keeps only the 4th and 8th calls.
"""
import json, os, sys

LIMIT, KEEP = 1000, 300
HERE = os.path.dirname(os.path.abspath(__file__))


RULE = "Never run touch gate-marker"


def cut(v):
    if isinstance(v, str):
        if len(v) <= LIMIT:
            return v
        out = v[:KEEP] + " [trimmed]"
        at = v.find(RULE, KEEP)
        if at >= 0:
            # Keep the rule where a long message carries it, with some of its surroundings.
            out += " " + v[max(KEEP, at - 100): at + 200] + " [trimmed]"
        return out
    if isinstance(v, list):
        return [cut(x) for x in v]
    if isinstance(v, dict):
        return {k: cut(x) for k, x in v.items()}
    return v


def main(src, wanted):
    for harness in ["claude-code", "codex", "gemini-cli"]:
        os.makedirs(os.path.join(HERE, harness), exist_ok=True)
        for want in wanted:
            scenario, _, numbers = want.partition(":")
            keep = {int(x) for x in numbers.split(",") if x}
            d = os.path.join(src, harness, scenario)
            if not os.path.isdir(d):
                continue
            calls = [json.loads(l) for l in open(os.path.join(d, "hook-calls.jsonl"))]
            n = 0
            for c in calls:
                p = c["payload"]
                if p["hook_event_name"] not in ("PreToolUse", "BeforeTool"):
                    continue
                n += 1
                if keep and n not in keep:
                    continue
                at_call = open(os.path.join(d, "transcript-at-hook-call", f"hook-{n}.jsonl")).read()
                call = p.get("tool_use_id")
                final = open(os.path.join(d, "transcript-1.jsonl")).read().split("\n")
                # A call Codex's code mode makes is never recorded (its `exec` call is).
                upto = next((i for i, l in enumerate(final) if call and call in l), None)
                if call and call not in at_call and upto is not None:
                    at_call = "\n".join(final[: upto + 1]) + "\n"
                lines = [json.dumps(cut(json.loads(l)), ensure_ascii=False, separators=(",", ":"))
                         for l in at_call.split("\n") if l.strip()]
                name = os.path.join(HERE, harness, f"{scenario}-{n}")
                with open(name + ".jsonl", "w") as f:
                    f.write("\n".join(lines) + "\n")
                p = dict(p, transcript_path="")
                with open(name + ".payload.json", "w") as f:
                    f.write(json.dumps(p, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or ["AE", "B", "C", "D"])
