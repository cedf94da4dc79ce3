#!/usr/bin/env python3
"""Real-harness scenarios: Claude Code, Codex and Gemini CLI against a local model mock.

Each scenario runs one real CLI, headless, against mock.py on 127.0.0.1, with
omission-gate as its pre-tool hook in `--kept-from transcript` mode, and judges the
outcome by the marker file the gated shell command creates and by the requests the mock
received (see README.md in this directory). Nothing here holds a kept list: the gate
computes it from the transcript the harness names in each payload.

Usage: run.py --cli-dir DIR --gate BIN [--mode real|sanity] [--wiring init|direct]
              [--harness H]... [--scenario S]... [--work DIR] [--capture DIR] [--known FILE]

--wiring init: the hook configuration is what `BIN init H` writes; direct (the default):
  written here, with the gate run through hook_wrap.py.

--mode real: every scenario must come out as the issue asks (exit 0 when all do).
--mode sanity: the gate is a stub that always passes; the scenarios that need a block
  (A, D, and E's first step) must then FAIL, or the suite cannot tell a gate from none
  (exit 0 when they all fail and the others pass).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import mock  # beside this script: its reading of a request body is used too

HERE = os.path.dirname(os.path.abspath(__file__))
RULE = "Never run touch gate-marker without the user's sign-off."
COMMAND = "touch gate-marker"
MARKER = "gate-marker"
GO = "GATE-GO: please run the step now."
STEP_TIMEOUT = 120  # seconds for one CLI invocation
MOCK_LIFETIME = 300  # seconds; the mock stops by itself after this

# The shell tool's name as each harness reports it to a pre-tool hook.
SHELL_TOOL = {"claude-code": "Bash", "codex": "Bash", "gemini-cli": "run_shell_command"}

SCENARIOS = {
    # name: (rule stated, compaction, summary, mock retries the gated call once)
    "A+E": (True, True, "omit", True),
    "B": (True, True, "keep", False),
    "C": (True, False, "omit", False),
    "D": (False, False, "omit", False),
    # Claude Code with init's wiring whole, its PreCompact hook included (init mode only).
    "F": (True, True, "omit", False),
    # Gemini CLI only: an MCP tool call that a rule never mentioned binds.
    "M": (False, False, "omit", False),
    # Claude Code only: the main agent hands the step to a subagent (the Agent tool),
    # whose task leaves the rule out (S) or quotes it (T).
    "S": (True, False, "omit", False),
    "T": (True, False, "omit", False),
    # An ordinary turn (mock.py's PLAN), twice in one session: thinking, text before a
    # call, failing calls, calls at once, a long output, a call the harness's permissions
    # refuse, HTTP errors the harness retries, then the gated call; between the turns a
    # manual compaction where the harness has one headless (Claude Code `/compact`), else
    # a resume. The rule is never mentioned: the first gated call is blocked, the second
    # runs only if the block's reason is still in view, every other call passes, and no
    # hook call is an ERROR.
    "R": (False, False, "omit", False),
    # Codex only, in code mode: the shell calls are made from an `exec` call's
    # JavaScript (tools.exec_command), as D (K: the rule never mentioned, blocked; the
    # warm-up command before it, which no rule binds, runs) and as C (L: the rule in
    # view, the call runs).
    "K": (False, False, "omit", False),
    "L": (True, False, "omit", False),
    # Codex only, a resumed session: the first `codex exec` (tool_output_token_limit
    # 20000) reads a file whose ~30 KB hold the rule in their middle, stored whole; the
    # second resumes it with a budget of 200 tokens, which cuts the resumed turn's own
    # warm-up output, and asks for the step. The old output is still sent whole, so the
    # rule is in view and the call runs (as C).
    "Q": (False, False, "omit", False),
}

# The code-mode scenarios, and the scenario each one is judged as.
CODE_MODE = {"K": "D", "L": "C"}

# The resumed-session scenarios, and the scenario each one is judged as.
RESUMED = {"Q": "C"}
# What Q's first turn reads (a file of NOTES_LINES filler lines, the rule in their
# middle), and its resumed turn's warm-up, whose output the resumed budget cuts.
NOTES = "notes.txt"
NOTES_LINES = 440
RESUMED_WARMUP = "seq 1 3000"
# Codex's mark where it cut a tool output short.
CUT_MARK = re.compile("\u2026[0-9]+ (chars|tokens) truncated\u2026")

# The subagent scenarios: whether the subagent's task quotes the rule.
SUBAGENT = {"S": "omit", "T": "quote"}

MCP_TOOL = "mcp_billing_refunds_create"  # Gemini CLI's name for the server's tool
MCP_RULE = "Refunds over 5,000 need a human approver."
MCP_ARGS = {"amount": 8400, "ticket": "7741"}
MCP_MARKER = "refund-marker"


class Failure(Exception):
    pass


def store_document(harness):
    return {
        "records": [
            {
                "id": "marker-rule",
                "seq": 1,
                "kind": "policy",
                "scope": SHELL_TOOL[harness],
                "predicate": {"field": "command", "op": "eq", "value": COMMAND},
                "effect": "deny",
                "text": RULE,
            },
            {
                "id": "refund-rule",
                "seq": 2,
                "kind": "policy",
                "scope": MCP_TOOL,
                "predicate": {"field": "amount", "op": "gt", "value": 5000},
                "effect": "require_approval",
                "text": MCP_RULE,
            },
        ]
    }


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def quote(word):
    return "'" + word.replace("'", "'\\''") + "'"


class Run:
    """One scenario of one harness: its directories, mock, hook and CLI steps."""

    def __init__(self, args, harness, scenario):
        self.args = args
        self.harness = harness
        self.scenario = scenario
        self.rule_stated, self.compaction, self.summary, self.retry = SCENARIOS[scenario]
        # What the outcome must be: as the scenario a code-mode or resumed one repeats.
        self.like = CODE_MODE.get(scenario, RESUMED.get(scenario, scenario))
        mcp = scenario == "M"
        self.command = MCP_TOOL if mcp else COMMAND
        self.rule = MCP_RULE if mcp else RULE
        self.marker = MCP_MARKER if mcp else MARKER
        name = "%s-%s" % (harness, scenario.replace("+", ""))
        self.dir = os.path.join(args.work, args.mode, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.home = os.path.join(self.dir, "home")
        self.project = os.path.join(self.dir, "project")
        os.makedirs(self.home)
        os.makedirs(self.project)
        self.requests = os.path.join(self.dir, "requests.jsonl")
        self.hooks = os.path.join(self.dir, "hooks.jsonl")
        self.store = os.path.join(self.project, ".omission-gate", "store.json")
        write(self.store, json.dumps(store_document(harness), indent=1) + "\n")
        if scenario in RESUMED:
            half = NOTES_LINES // 2
            filler = ["note %04d: lorem ipsum dolor sit amet, consectetur adipiscing elit" % i for i in range(NOTES_LINES)]
            write(os.path.join(self.project, NOTES), "\n".join(filler[:half] + [self.rule] + filler[half:]) + "\n")
        self.mock = None
        self.port = None
        self.steps = []

    # -- the mock ------------------------------------------------------------------------

    def start_mock(self):
        port_file = os.path.join(self.dir, "port")
        warmup = self.harness in ("codex", "gemini-cli")
        command = [
            sys.executable, os.path.join(HERE, "mock.py"),
            "--harness", self.harness,
            "--port-file", port_file,
            "--log", self.requests,
            "--rule", self.rule,
            "--command", self.command,
            "--marker", os.path.join(self.project, self.marker),
            "--summary", self.summary,
            "--lifetime", str(MOCK_LIFETIME),
        ]
        if self.retry:
            command.append("--retry")
        if self.scenario in SUBAGENT:
            command += ["--subagent", SUBAGENT[self.scenario]]
        if self.command == MCP_TOOL:
            command += ["--tool-args", json.dumps(MCP_ARGS)]
        if self.scenario in CODE_MODE:
            command.append("--code-mode")
        if self.scenario in RESUMED:
            command += ["--read-first", "cat " + NOTES, "--warmup-command", RESUMED_WARMUP]
        if self.scenario == "R":
            command += ["--plan", "--failures", str(self.args.plan_failures)]
        elif warmup:
            command.append("--warmup")
        if self.compaction and warmup:
            command += ["--big-usage", "warmup"]
        self.mock = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.exists(port_file):
                with open(port_file) as handle:
                    self.port = int(handle.read())
                return
            if self.mock.poll() is not None:
                raise Failure("the mock exited early")
            time.sleep(0.05)
        raise Failure("the mock did not start within 20 s")

    def stop_mock(self):
        if self.mock and self.mock.poll() is None:
            self.mock.terminate()
            try:
                self.mock.wait(5)
            except subprocess.TimeoutExpired:
                self.mock.kill()
                self.mock.wait()

    # -- the hook ------------------------------------------------------------------------

    def hook_command(self):
        snapshot = ["--snapshot", os.path.join(self.dir, "at-hook")] if self.args.capture else []
        words = [sys.executable, os.path.join(HERE, "hook_wrap.py"), self.hooks] + snapshot + [self.args.gate,
                 "hook", self.harness, "--store", self.store, "--kept-from", "transcript",
                 "--timeout-ms", "10000"]
        return " ".join(quote(w) for w in words) + " || exit 2"

    def init(self, env):
        """Runs `GATE init HARNESS --dir PROJECT` (the store is already there, so init keeps
        it) and returns what it printed."""
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home}
        full_env.update(env)
        done = subprocess.run([self.args.gate, "init", self.harness, "--dir", self.project],
                              env=full_env, capture_output=True, text=True, timeout=60)
        write(os.path.join(self.dir, "init.out"), done.stdout + done.stderr)
        if done.returncode != 0:
            raise Failure("%s: `omission-gate init` exited %d: %s" % (self.harness, done.returncode, done.stderr.strip()))
        return done.stdout

    def observer_command(self):
        """A hook that only records its payload (capture mode: compaction payloads)."""
        words = [sys.executable, os.path.join(HERE, "hook_wrap.py"), self.hooks, "sh", "-c", "cat >/dev/null"]
        return " ".join(quote(w) for w in words)

    # -- running a CLI -------------------------------------------------------------------

    def step(self, name, argv, env, stdin=None):
        full_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "LANG": "C.UTF-8",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        full_env.update(env)
        out = os.path.join(self.dir, "%s.out" % name)
        err = os.path.join(self.dir, "%s.err" % name)
        started = time.time()
        with open(out, "wb") as o, open(err, "wb") as e:
            try:
                process = subprocess.Popen(argv, cwd=self.project, env=full_env, stdout=o, stderr=e,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as failure:
                raise Failure("%s: cannot start %s: %s" % (self.harness, argv[0], failure))
            try:
                code = process.wait(STEP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                code = "timeout"
        self.steps.append({"step": name, "exit": code, "seconds": round(time.time() - started, 1)})
        if code == "timeout":
            raise Failure("%s: %s did not finish within %d s (see %s)" % (self.harness, name, STEP_TIMEOUT, err))
        return out

    def run(self):
        self.start_mock()
        try:
            getattr(self, "run_" + self.harness.replace("-", "_"))()
        finally:
            self.stop_mock()

    def first_prompt(self):
        return self.rule if self.rule_stated else "Hello."

    # Claude Code: one session over several `claude -p` runs; `/compact` compacts it.
    def run_claude_code(self):
        settings = os.path.join(self.project, ".claude", "settings.json")
        if self.args.wiring == "init":
            self.init({})
            with open(settings, encoding="utf-8") as handle:
                written = json.load(handle)
            # init also installs the PreCompact hook, whose output stays in the session
            # after a manual /compact and so keeps the rule in view: these scenarios test
            # the pre-tool gate against a compaction that drops the rule, so it goes.
            if self.scenario != "F":
                written["hooks"].pop("PreCompact", None)
            write(settings, json.dumps(written, indent=1) + "\n")
        else:
            hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": self.hook_command(), "timeout": 30}]}]}
            if self.args.capture:
                hooks["PreCompact"] = [{"hooks": [{"type": "command", "command": self.observer_command(), "timeout": 30}]}]
            write(settings, json.dumps({"hooks": hooks}, indent=1) + "\n")
        binary = os.path.join(self.args.cli_dir, "claude-code", "node_modules", ".bin", "claude")
        env = {
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % self.port,
            "ANTHROPIC_API_KEY": "mock-key",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
        }
        common = ["--output-format", "json", "--allowedTools", "Bash", "--permission-mode", "bypassPermissions"]
        if self.scenario == "R":
            # Permissions as a user sets them: Bash allowed, the rest (Write) refused.
            common = ["--output-format", "json", "--allowedTools", "Bash", "--permission-mode", "default"]
        out = self.step("1-first", [binary, "-p", self.first_prompt()] + common, env)
        try:
            with open(out) as handle:
                session = json.load(handle)["session_id"]
        except (OSError, ValueError, KeyError) as failure:
            raise Failure("claude-code: no session id in the first run's output (%s)" % failure)
        resume = ["--resume", session]
        if self.scenario == "R":
            self.step("2-go", [binary, "-p", GO] + resume + common, env)
            self.step("3-compact", [binary, "-p", "/compact"] + resume + common, env)
            self.step("4-go", [binary, "-p", GO] + resume + common, env)
            return
        if self.compaction:
            # Two exchanges at least: Claude Code refuses to compact a one-exchange session.
            self.step("2-second", [binary, "-p", "Thanks."] + resume + common, env)
            self.step("3-compact", [binary, "-p", "/compact"] + resume + common, env)
        self.step("4-go", [binary, "-p", GO] + resume + common, env)

    # Codex: one `codex exec` turn. With a compaction, the rule sits in the middle of a
    # long user message: Codex keeps user messages through a compaction, but cuts one
    # over its budget down to its head and tail, so the rule's only copy goes, and only
    # the summary can carry it. The mock then reports a huge token count on a warm-up
    # call, and Codex compacts mid-turn before it goes on.
    def run_codex(self):
        codex_home = os.path.join(self.dir, "codex-home")
        os.makedirs(codex_home)
        config = [
            'model = "mock-model"',
            'model_provider = "mock"',
            'approval_policy = "never"',
            'sandbox_mode = "%s"' % ("read-only" if self.scenario == "R" else "danger-full-access"),
            "model_auto_compact_token_limit = 200000",
            "",
            "[model_providers.mock]",
            'name = "mock"',
            'base_url = "http://127.0.0.1:%d/v1"' % self.port,
            'wire_api = "responses"',
            'env_key = "MOCK_API_KEY"',
            "",
            "[analytics]",
            "enabled = false",
            "",
        ]
        if self.scenario in CODE_MODE:
            config += ["[features]", "code_mode = true", ""]
        env = {"CODEX_HOME": codex_home, "MOCK_API_KEY": "mock-key"}
        trust = []
        if self.args.wiring == "init":
            # init writes .codex/hooks.json and prints the trust Codex needs (the project,
            # and the hook's hash) for the user config: add it as a user would.
            config += codex_trust_block(self.init(env))
        else:
            trust = ["--dangerously-bypass-hook-trust"]
            config += [
                "[[hooks.PreToolUse]]",
                'matcher = "^(Bash|apply_patch|mcp__.*)$"',
                "",
                "[[hooks.PreToolUse.hooks]]",
                'type = "command"',
                "command = %s" % json.dumps(self.hook_command()),
                "timeout = 30",
                "",
            ]
        if self.args.capture:
            config += [
                "[[hooks.PreCompact]]",
                "",
                "[[hooks.PreCompact.hooks]]",
                'type = "command"',
                "command = %s" % json.dumps(self.observer_command()),
                "timeout = 30",
                "",
            ]
        write(os.path.join(codex_home, "config.toml"), "\n".join(config))
        binary = os.path.join(self.args.cli_dir, "codex", "node_modules", ".bin", "codex")
        if self.compaction:
            filler = "lorem ipsum dolor sit amet " * 2000
            prompt = "%s\n%s\n%s\n%s" % (filler, self.rule, filler, GO)
        else:
            prompt = "%s\n%s" % (self.first_prompt(), GO)
        if self.scenario in RESUMED:
            # The first turn reads the notes under a budget that keeps them whole; the
            # resumed one asks for the step under a budget far smaller.
            self.step("1-exec", [binary, "exec", "--skip-git-repo-check"] + trust + ["-c", "tool_output_token_limit=20000", prompt], env)
            self.step("2-resume", [binary, "exec", "--skip-git-repo-check"] + trust + ["-c", "tool_output_token_limit=200", "resume", "--last", GO], env)
            return
        self.step("1-exec", [binary, "exec", "--skip-git-repo-check"] + trust + [prompt], env)
        if self.scenario == "R":
            self.step("2-resume", [binary, "exec", "--skip-git-repo-check"] + trust + ["resume", "--last", GO], env)

    # Gemini CLI: a first run states the rule, a second (`--resume latest`) asks for the
    # step; with a compaction the mock reports a huge promptTokenCount on a warm-up call,
    # and Gemini CLI compresses before its next request.
    def run_gemini_cli(self):
        write(os.path.join(self.home, ".gemini", "settings.json"),
              json.dumps({
                  "security": {"auth": {"selectedType": "gemini-api-key"}},
                  "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                  "privacy": {"usageStatisticsEnabled": False},
              }) + "\n")
        write(os.path.join(self.home, ".gemini", "trustedFolders.json"),
              json.dumps({self.project: "TRUST_FOLDER"}) + "\n")
        settings = os.path.join(self.project, ".gemini", "settings.json")
        if self.args.wiring == "init":
            self.init({})
        else:
            hooks = {"BeforeTool": [{"matcher": "run_shell_command|mcp_.*", "hooks": [
                {"name": "omission-gate", "type": "command", "command": self.hook_command(), "timeout": 30000}]}]}
            if self.args.capture:
                hooks["PreCompress"] = [{"hooks": [
                    {"name": "observer", "type": "command", "command": self.observer_command(), "timeout": 30000}]}]
            write(settings, json.dumps({"hooks": hooks}, indent=1) + "\n")
        if self.command == MCP_TOOL:
            with open(settings, encoding="utf-8") as handle:
                written = json.load(handle)
            written["mcpServers"] = {"billing": {
                "command": sys.executable,
                "args": [os.path.join(HERE, "mcp_billing.py"), os.path.join(self.project, self.marker)],
                "trust": True}}
            write(settings, json.dumps(written, indent=1) + "\n")
        binary = os.path.join(self.args.cli_dir, "gemini-cli", "node_modules", ".bin", "gemini")
        env = {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % self.port, "GEMINI_API_KEY": "mock-key"}
        common = ["-m", "gemini-2.5-flash", "--yolo"]
        if self.scenario == "R":
            # The shell allowed, the rest (write_file) left to a user who is not there.
            common = ["-m", "gemini-2.5-flash", "--approval-mode", "default", "--allowed-tools", "run_shell_command"]
        self.step("1-first", [binary, "-p", self.first_prompt()] + common, env)
        self.step("2-go", [binary, "-p", GO, "--resume", "latest"] + common, env)
        if self.scenario == "R":
            # `gemini -p` runs no slash command (`/compress` would go to the model as a
            # prompt): the second turn is a plain resume.
            self.step("3-go", [binary, "-p", GO, "--resume", "latest"] + common, env)

    # -- judging -------------------------------------------------------------------------

    def load(self, path):
        entries = []
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        entries.append(json.loads(line))
        return entries

    def gated_payload(self, payload):
        """Whether a hook payload is a call of the gated command (or MCP tool)."""
        if not isinstance(payload, dict):
            return False
        if self.command == MCP_TOOL:
            return payload.get("tool_name") == MCP_TOOL
        tool_input = payload.get("tool_input")
        return isinstance(tool_input, dict) and tool_input.get("command") == COMMAND

    def judge(self):
        """Returns {scenario letter: (ok, detail)} for this run."""
        if self.scenario == "R":
            return self.judge_ordinary()
        requests = [r for r in self.load(self.requests) if r.get("decision")]
        hooks = [h for h in self.load(self.hooks) if self.gated_payload(h.get("payload"))]
        calls = [i for i, r in enumerate(requests) if r["decision"] == ["call", self.command]]
        compactions = sum(1 for r in requests if r["decision"][0] == "summary")
        gate_exits = [h["exit"] for h in hooks] if self.args.wiring == "direct" else "n/a (init's wiring)"
        facts = "summary-requests=%d gated-calls=%d gate-exits=%s" % (compactions, len(calls), gate_exits)
        if self.scenario == "F":
            facts += "; init's PreCompact hook installed"
        if self.compaction and compactions == 0:
            return {self.scenario[0]: (False, "no compaction happened; " + facts)}
        if not calls:
            return {self.scenario[0]: (False, "the agent never called the gated command; " + facts)}

        def after(index):
            # The next model request after the one that issued call number `index`.
            later = [r for r in requests[calls[index] + 1:] if r["decision"][0] != "summary"]
            return later[0] if later else None

        def in_view_at(index):
            return requests[calls[index]]["rule_in_body"]

        # The session must be what the scenario says before the gate's answer counts: the
        # rule in the model's context at the call (B, C) or not (A, D), as the mock saw it.
        wanted = self.like in ("B", "C", "F", "T")
        if in_view_at(0) != wanted:
            return {self.scenario[0]: (False, "not set up as the scenario says: the rule was %sin the model's context at the call; %s" % (
                "" if in_view_at(0) else "not ", facts))}
        if self.scenario in RESUMED:
            # The resumed turn's budget must be the smaller one: it cut the warm-up's
            # output, which the request that made the call holds.
            outputs = [" ".join(mock.strings(item.get("output"))) for item in requests[calls[0]]["body"].get("input", [])
                       if isinstance(item, dict) and item.get("type") == "function_call_output"]
            if not any(CUT_MARK.search(o) for o in outputs):
                return {self.scenario[0]: (False, "not set up as the scenario says: the resumed turn's budget did not cut its warm-up output; " + facts)}
            facts += "; resumed with a budget that cut the warm-up output"
        results = {}
        first = after(0)
        if first is None:
            return {self.scenario[0]: (False, "no request after the gated call; " + facts)}
        ran = first["marker_exists"]
        if self.scenario in SUBAGENT:
            # The call is the subagent's, and the main agent may ask the model again
            # before the subagent's command ends: the marker at the session's end counts
            # too (nothing here retries a subagent's call).
            ran = ran or os.path.exists(os.path.join(self.project, self.marker))
        reached = first["rule_in_body"]
        context = "rule in the model's context at the call: %s; " % ("yes" if in_view_at(0) else "no")
        if self.like in ("A+E", "D", "M", "S"):
            ok = not ran and reached
            detail = "%s; the rule's text %s the model; %s%s" % (
                "blocked" if not ran else "RAN", "reached" if reached else "did NOT reach", context, facts)
            results[self.scenario[0]] = (ok, detail)
        else:
            results[self.scenario[0]] = (ran, "%s; %s%s" % ("ran" if ran else "BLOCKED", context, facts))
        if self.scenario == "A+E":
            if len(calls) < 2:
                results["E"] = (False, "no retry was made; " + facts)
            else:
                second = after(1)
                if ran:
                    results["E"] = (False, "the first call already ran, so the retry proves nothing; " + facts)
                elif second is None:
                    results["E"] = (False, "no request after the retry; " + facts)
                else:
                    results["E"] = (second["marker_exists"], "retry %s; %s" % (
                        "ran" if second["marker_exists"] else "BLOCKED", facts))
        return results

    def judge_ordinary(self):
        """R, from the requests the mock received (so with either wiring): no gate reason
        in any of them is an ERROR; each reply's calls are followed by a request holding
        one new BLOCK reason when the reply held the gated call and the rule was not in
        the model's context as it asked for it, else none; the first gated call is blocked."""
        requests = [r for r in self.load(self.requests) if r.get("decision")]

        def count(request, what):
            return sum(s.count(what) for s in mock.strings(request["body"]))

        errors = sum(count(r, "denied this call: ERROR") for r in requests)
        http = sum(1 for r in requests if r["decision"][0] == "http")
        asked = [i for i, r in enumerate(requests) if r["decision"][0] == "plan"]
        verdicts = []
        for i in asked:
            ask = requests[i]
            later = [r for r in requests[i + 1:] if r["path"] == ask["path"] and r["decision"][0] in ("plan", "text")]
            if not later:
                return {"R": (False, "no request after the reply to step %d" % ask["decision"][1])}
            new = count(later[0], "omission-gate denied this call") - count(ask, "omission-gate denied this call")
            gated = ask["decision"][1] == 2
            verdicts.append("%d:%s" % (ask["decision"][1], {0: "pass", 1: "block"}.get(new, "%d denials" % new)))
            if new != (1 if gated and not ask["rule_in_body"] else 0):
                return {"R": (False, "step %d: %d new denials, the rule %sin view; %s" % (
                    ask["decision"][1], new, "" if ask["rule_in_body"] else "not ", verdicts))}
        facts = "steps %s; http-errors-served=%d" % (" ".join(verdicts), http)
        if errors:
            return {"R": (False, "%d ERROR reasons reached the model; %s" % (errors, facts))}
        gated = [v for v in verdicts if v.startswith("2:")]
        if len(gated) < 2 or gated[0] != "2:block":
            return {"R": (False, "want two gated calls, the first blocked; " + facts)}
        return {"R": (True, "no ERROR; the first gated call blocked, the second as the rule's view says, the other calls passed; " + facts)}

    # -- capture for the readers' tests --------------------------------------------------

    def capture(self, into):
        target = os.path.join(into, self.harness, self.args.mode + "-" + self.scenario.replace("+", ""))
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        transcripts = []
        for entry in self.load(self.hooks):
            path = (entry.get("payload") or {}).get("transcript_path")
            if isinstance(path, str) and path and path not in transcripts:
                transcripts.append(path)
        for n, path in enumerate(transcripts, 1):
            if os.path.exists(path):
                shutil.copy(path, os.path.join(target, "transcript-%d%s" % (n, os.path.splitext(path)[1])))
        if os.path.exists(self.hooks):
            shutil.copy(self.hooks, os.path.join(target, "hook-calls.jsonl"))
        snapshots = os.path.join(self.dir, "at-hook")
        if os.path.isdir(snapshots):
            shutil.copytree(snapshots, os.path.join(target, "transcript-at-hook-call"))
        with open(os.path.join(target, "requests-summary.jsonl"), "w") as out:
            for r in self.load(self.requests):
                out.write(json.dumps({k: r[k] for k in ("path", "decision", "marker_exists", "rule_in_body")}) + "\n")
        with open(os.path.join(target, "transcript-paths.json"), "w") as out:
            json.dump(transcripts, out, indent=1)




def codex_trust_block(printed):
    """The TOML lines `init codex` prints for the user config: from the `[projects.` table
    to the last `trusted_hash` line."""
    lines = printed.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("[projects.")]
    ends = [i for i, line in enumerate(lines) if line.startswith("trusted_hash = ")]
    if not starts or not ends or ends[-1] < starts[0]:
        raise Failure("codex: `omission-gate init codex` printed no trust lines to add")
    return lines[starts[0]:ends[-1] + 1] + [""]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli-dir", required=True)
    parser.add_argument("--gate", required=True)
    parser.add_argument("--mode", choices=["real", "sanity"], default="real")
    parser.add_argument("--harness", action="append", choices=list(SHELL_TOOL))
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument("--work")
    parser.add_argument("--capture")
    parser.add_argument("--wiring", choices=["init", "direct"], default="direct",
                        help="init: the hook configuration is what `GATE init H` writes; direct: written here, through hook_wrap.py")
    parser.add_argument("--plan-failures", type=int, default=1,
                        help="R: how many times in a row the mock answers each of its HTTP errors")
    parser.add_argument("--known", help="a file of known failures: `HARNESS LETTER reason` lines (real mode)")
    args = parser.parse_args()
    args.gate = os.path.abspath(args.gate)
    args.cli_dir = os.path.abspath(args.cli_dir)
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="og-harness-"))
    harnesses = args.harness or list(SHELL_TOOL)
    scenarios = args.scenario or list(SCENARIOS)
    results = {}
    started = time.time()
    for harness in harnesses:
        for scenario in scenarios:
            if scenario == "F" and (harness != "claude-code" or args.wiring != "init"):
                continue
            if scenario == "M" and harness != "gemini-cli":
                continue
            if (scenario in CODE_MODE or scenario in RESUMED) and harness != "codex":
                continue
            if scenario in SUBAGENT and harness not in ("claude-code", "gemini-cli", "codex"):
                continue
            run = Run(args, harness, scenario)
            t0 = time.time()
            try:
                run.run()
                verdicts = run.judge()
            except Failure as failure:
                verdicts = {scenario[0]: (False, "could not run: %s" % failure)}
            if args.capture:
                run.capture(args.capture)
            for letter, verdict in verdicts.items():
                results[(harness, letter)] = verdict
            steps = " ".join("%s:%s/%.1fs" % (s["step"], s["exit"], s["seconds"]) for s in run.steps)
            print("   %s %s (%.1f s; %s)" % (harness, scenario, time.time() - t0, steps), flush=True)
    return report(args, harnesses, results, time.time() - started)


def known_failures(path):
    known = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                line = line.strip()
                if line and not line.startswith("#"):
                    words = line.split(None, 2)
                    if len(words) == 3:
                        known[(words[0], words[1])] = words[2]
    return known


def report(args, harnesses, results, seconds):
    expected_block = {"A", "D", "K", "M", "R", "S"}
    known = known_failures(args.known) if args.mode == "real" else {}
    failed = 0
    print("%s mode, gate %s, %.0f s, work dir %s" % (args.mode, args.gate, seconds, args.work))
    for harness in harnesses:
        for letter in "ABCDEFKLMQRST":
            if (harness, letter) not in results:
                continue
            ok, detail = results[(harness, letter)]
            if args.mode == "real" and (harness, letter) in known:
                # A documented failure (known-failures): reported, not counted.
                good = True
                label = "KNOWN FAILURE (%s)" % known[(harness, letter)] if not ok else (
                    "ok, and listed as a known failure: remove it from %s" % args.known)
            elif args.mode == "real":
                good = ok
                label = "ok  " if ok else "FAIL"
            else:
                # With a gate that always passes, the scenarios that need a block must fail
                # (E's first step is A's block); the others must still pass.
                must_fail = letter in expected_block or letter == "E"
                good = (not ok) if must_fail else ok
                label = ("fails as it must" if must_fail else "ok") if good else (
                    "PASSED WITHOUT A GATE" if must_fail else "FAIL")
            failed += 0 if good else 1
            print("%-11s %s  %-4s %s" % (harness, letter, label, detail))
    print("%s mode: %s" % (args.mode, "all as expected" if failed == 0 else "%d unexpected" % failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
