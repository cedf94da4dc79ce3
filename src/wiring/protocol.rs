//! How each harness treats a hook: which tool names its matcher selects, and what it
//! does with the hook's exit code, stdout and stderr (as observed with the real CLIs;
//! docs/hooks.md has the details).

use serde_json::Value;

use crate::hook::Harness;

/// Whether the harness's matcher selects a tool name; `None` for a matcher the harness
/// cannot compile (Claude Code and Codex then skip the group; Gemini CLI compares it as
/// a plain string, which this returns as `Some`).
pub fn matches(harness: Harness, matcher: Option<&str>, tool: &str) -> Option<bool> {
    let m = matcher.map(str::trim).unwrap_or("");
    if m.is_empty() || m == "*" {
        return Some(true);
    }
    match harness {
        // Claude Code: a plain list of names (`Edit|Write`) matches exactly; anything
        // else is a regular expression searched in the name.
        Harness::ClaudeCode
            if m.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'|') =>
        {
            Some(m.split('|').any(|n| n == tool))
        }
        Harness::ClaudeCode | Harness::Codex => regex::Regex::new(m).ok().map(|r| r.is_match(tool)),
        Harness::GeminiCli => Some(match regex::Regex::new(m) {
            Ok(r) => r.is_match(tool),
            Err(_) => m == tool,
        }),
    }
}

/// What the harness does with a pre-tool hook's exit code and output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The tool is denied; the text is what the model reads.
    Denied(String),
    /// The tool runs (the hook passed, failed, or its answer was not understood).
    Runs,
}

/// How each harness reads a pre-tool hook's exit code, stdout and stderr (as observed
/// with the real CLIs: see docs/hooks.md).
pub fn outcome(harness: Harness, exit: Option<i32>, stdout: &str, stderr: &str) -> Outcome {
    let json: Option<Value> = serde_json::from_str(stdout.trim()).ok();
    let stderr_text = stderr.trim();
    match harness {
        Harness::ClaudeCode => match exit {
            Some(2) => Outcome::Denied(stderr_text.to_string()),
            Some(0) => json_deny(json.as_ref()).map_or(Outcome::Runs, Outcome::Denied),
            _ => Outcome::Runs,
        },
        Harness::Codex => match exit {
            Some(2) if !stderr_text.is_empty() => Outcome::Denied(stderr_text.to_string()),
            Some(0) => json_deny(json.as_ref()).map_or(Outcome::Runs, Outcome::Denied),
            _ => Outcome::Runs,
        },
        Harness::GeminiCli => {
            // stdout is read first, whatever the exit code.
            if let Some(Value::Object(o)) = &json
                && let Some(d) = o.get("decision").and_then(Value::as_str)
            {
                let reason = o.get("reason").and_then(Value::as_str).unwrap_or("");
                return match d {
                    "deny" | "block" => Outcome::Denied(reason.to_string()),
                    _ => Outcome::Runs,
                };
            }
            let output = if stderr_text.is_empty() {
                stdout.trim()
            } else {
                stderr_text
            };
            match exit {
                Some(0) | Some(1) => Outcome::Runs,
                Some(_) if !output.is_empty() => Outcome::Denied(output.to_string()),
                _ => Outcome::Runs,
            }
        }
    }
}

/// The reason of a Claude Code / Codex JSON deny on stdout.
fn json_deny(json: Option<&Value>) -> Option<String> {
    let out = json?.get("hookSpecificOutput")?;
    (out.get("permissionDecision")?.as_str()? == "deny").then(|| {
        out.get("permissionDecisionReason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wiring::Wiring;

    #[test]
    fn each_harness_matches_its_own_way() {
        let cc = Harness::ClaudeCode;
        assert_eq!(matches(cc, Some("Bash|Edit"), "Bash"), Some(true));
        assert_eq!(matches(cc, Some("Bash|Edit"), "BashX"), Some(false));
        assert_eq!(matches(cc, Some("mcp__.*"), "mcp__billing__x"), Some(true));
        // init's matcher selects every tool of Claude Code's that runs a shell command.
        for shell in ["Bash", "Monitor", "PowerShell"] {
            assert_eq!(matches(cc, Some(Wiring::of(cc).matcher), shell), Some(true));
        }
        assert_eq!(matches(cc, None, "anything"), Some(true));
        assert_eq!(
            matches(Harness::Codex, Some("^(Bash)$"), "Bash"),
            Some(true)
        );
        assert_eq!(matches(Harness::Codex, Some("("), "Bash"), None);
        let g = Harness::GeminiCli;
        let m = Wiring::of(g).matcher;
        assert_eq!(
            matches(g, Some(m), "mcp_billing_refunds_create"),
            Some(true)
        );
        assert_eq!(
            matches(g, Some("mcp__.*"), "mcp_billing_refunds_create"),
            Some(false)
        );
        assert_eq!(matches(g, Some("("), "("), Some(true));
    }

    #[test]
    fn each_harness_reads_exit_codes_its_own_way() {
        use Harness::*;
        for h in [ClaudeCode, Codex, GeminiCli] {
            assert_eq!(outcome(h, Some(2), "", "no"), Outcome::Denied("no".into()));
            assert_eq!(outcome(h, Some(0), "", ""), Outcome::Runs);
            assert_eq!(outcome(h, None, "", "killed"), Outcome::Runs);
        }
        assert_eq!(
            outcome(ClaudeCode, Some(2), "", ""),
            Outcome::Denied(String::new())
        );
        assert_eq!(outcome(Codex, Some(2), "", " "), Outcome::Runs);
        assert_eq!(outcome(GeminiCli, Some(2), "", ""), Outcome::Runs);
        assert_eq!(
            outcome(ClaudeCode, Some(127), "", "not found"),
            Outcome::Runs
        );
        assert_eq!(
            outcome(GeminiCli, Some(127), "", "not found"),
            Outcome::Denied("not found".into())
        );
        assert_eq!(outcome(GeminiCli, Some(1), "", "warn"), Outcome::Runs);
        assert_eq!(
            outcome(GeminiCli, Some(2), "{\"decision\":\"allow\"}", "no"),
            Outcome::Runs
        );
    }
}
