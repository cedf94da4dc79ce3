//! The agent harnesses the gate knows: their names on the command line. Which hook event
//! each answers lives in `hook`; how each writes its transcript lives in `transcript`.

use std::fmt;
use std::str::FromStr;

/// An agent harness: Claude Code, Codex or Gemini CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Harness {
    /// Claude Code.
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    GeminiCli,
}

impl Harness {
    /// Every harness, in the order messages list them.
    pub const ALL: [Harness; 3] = [Harness::ClaudeCode, Harness::Codex, Harness::GeminiCli];

    /// The harness as named on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::GeminiCli => "gemini-cli",
        }
    }

    /// The harness's name as its users know it, in messages.
    pub fn title(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "Claude Code",
            Harness::Codex => "Codex",
            Harness::GeminiCli => "Gemini CLI",
        }
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A harness name the gate does not know: the name as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown harness `{}` (claude-code, codex or gemini-cli)", crate::text::clean(.0))]
pub struct UnknownHarness(pub String);

impl FromStr for Harness {
    type Err = UnknownHarness;

    fn from_str(s: &str) -> Result<Harness, UnknownHarness> {
        Harness::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| UnknownHarness(s.to_string()))
    }
}
