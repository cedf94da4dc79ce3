//! The agent harnesses the gate knows: their names on the command line, and the names
//! each gives its own tools (a store written for one harness names tools another never
//! calls). Which hook event each answers lives in `hook`; how each writes its transcript
//! lives in `transcript`; how each is wired lives in `wiring`.

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

    /// Whether the harness refuses a call outside the tool's declared schema before its
    /// pre-tool hook runs, so that the schema bounds the calls the gate judges. Gemini CLI
    /// does (0.61.0 checks every tool's call with Ajv, where Ajv compiles the schema);
    /// Claude Code (2.1.197) and Codex (0.171.0) run an MCP tool's call whatever its
    /// `inputSchema` says, and check a built-in tool's call against their own schema only.
    pub fn holds_calls_to_schemas(self) -> bool {
        self == Harness::GeminiCli
    }

    /// Whether `name` (a tool's name or `*` glob) covers some MCP tool's name as Claude
    /// Code and Codex give it (`mcp__` first: Gemini CLI's `mcp_<server>_<tool>` has one
    /// `_` unless the server's name begins with one): `*` and `mcp_*` cover
    /// `mcp__billing__refunds_create` as much as that name does.
    pub fn claude_code_or_codex_mcp_name(name: &str) -> bool {
        crate::record::globs_overlap(name, "mcp__*")
    }

    /// How the harness names an MCP tool: `mcp<sep><server><sep><tool>`, with `__` in
    /// Claude Code and Codex and `_` in Gemini CLI.
    pub fn mcp_separator(self) -> &'static str {
        match self {
            Harness::ClaudeCode | Harness::Codex => "__",
            Harness::GeminiCli => "_",
        }
    }

    /// How the harness changes an MCP tool's name before it sends it, for messages:
    /// Claude Code replaces characters, Codex and Gemini CLI cut a long name too, and Codex
    /// trims the `_`s around the join of server and tool.
    pub fn mcp_name_change(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "it replaces characters it does not allow in a tool name",
            Harness::Codex => {
                "it replaces characters it does not allow in a tool name, drops the `_`s next to the `__` that joins server and tool, and cuts a long name"
            }
            Harness::GeminiCli => {
                "it replaces characters it does not allow in a tool name, and cuts a long name"
            }
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

/// What a built-in tool that changes things does: a tool of another harness that does
/// the same is its equivalent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Runs shell commands.
    Shell,
    /// Writes a file.
    Write,
    /// Edits a file.
    Edit,
    /// Searches the contents of files.
    Search,
    /// Edits a notebook's cells.
    Notebook,
}

/// Each harness's built-in tools that change things, with what each does (Codex's
/// `apply_patch` writes and edits files; Claude Code's `Monitor`, behind a feature flag
/// in 2.1.197, runs a shell command and streams its output, and `PowerShell` is its shell
/// on Windows; Claude Code's `NotebookEdit` edits a Jupyter notebook's cells, which no
/// other harness has a tool for), and the built-ins a harness answers to under two
/// names: Gemini CLI 0.61.0 runs `grep_search` when the model calls it by its old name,
/// `search_file_content`, and its hook sees the name the model called (its
/// `TOOL_LEGACY_ALIASES`). No other harness gives a tool these names: a store that names
/// one of them for another harness names a tool that harness never calls.
const BUILTINS: [(Harness, &str, &[Role]); 14] = [
    (Harness::ClaudeCode, "Bash", &[Role::Shell]),
    (Harness::ClaudeCode, "Monitor", &[Role::Shell]),
    (Harness::ClaudeCode, "PowerShell", &[Role::Shell]),
    (Harness::ClaudeCode, "Write", &[Role::Write]),
    (Harness::ClaudeCode, "Edit", &[Role::Edit]),
    (Harness::ClaudeCode, "MultiEdit", &[Role::Edit]),
    (Harness::ClaudeCode, "NotebookEdit", &[Role::Notebook]),
    (Harness::Codex, "Bash", &[Role::Shell]),
    (Harness::Codex, "apply_patch", &[Role::Write, Role::Edit]),
    (Harness::GeminiCli, "run_shell_command", &[Role::Shell]),
    (Harness::GeminiCli, "write_file", &[Role::Write]),
    (Harness::GeminiCli, "replace", &[Role::Edit]),
    (Harness::GeminiCli, "grep_search", &[Role::Search]),
    (Harness::GeminiCli, "search_file_content", &[Role::Search]),
];

/// How this harness spells a tool that another harness names `tool`, when `tool` is
/// not a name this harness gives: the shell, edit and write tools, and MCP tools
/// (`mcp__<server>__<tool>` in Claude Code and Codex, `mcp_<server>_<tool>` in Gemini
/// CLI).
///
/// An MCP tool named this harness's way is spelt as the harness sends it: Claude Code and
/// Codex write `_` for each character other than an ASCII letter, a digit, `_` (and `-`
/// in Claude Code), Gemini CLI for each one other than those, `-`, `.` and `:`, and cuts
/// a name over 63 characters to its first and last 30 around `...`; Codex joins server
/// and tool as [`sent_forms`] says (what Claude Code 2.1.332, Codex 0.171.0 and Gemini
/// CLI 0.61.0 do). A name they may send as written is `None`: [`spellings`] gives every
/// other name they may send it under.
pub fn spelling(harness: Harness, tool: &str) -> Option<String> {
    let (all, as_written) = spell(harness, tool);
    all.into_iter().next().filter(|_| !as_written)
}

/// Every name other than `tool` that this harness may give the tool a store names `tool`
/// ([`spelling`]'s, and for Codex each other way it may join the server and tool a name
/// of MCP form stands for). Empty for a name it gives.
pub fn spellings(harness: Harness, tool: &str) -> Vec<String> {
    spell(harness, tool).0
}

/// `tool` and each of its [`spellings`]: every name a call of the tool a store names
/// `tool` may arrive under in this harness, before any cut.
pub fn with_spellings(harness: Harness, tool: &str) -> impl Iterator<Item = String> {
    std::iter::once(tool.to_string()).chain(spellings(harness, tool))
}

/// The names other than `tool` this harness may give the tool a store names `tool`, and
/// whether it may also send it as written.
fn spell(harness: Harness, tool: &str) -> (Vec<String>, bool) {
    if BUILTINS.iter().any(|(h, n, _)| *h == harness && *n == tool) {
        return (Vec::new(), true);
    }
    if harness == Harness::GeminiCli
        && let Some(rest) = tool.strip_prefix("mcp__")
    {
        let sep = harness.mcp_separator();
        let Some((server, name)) = rest.split_once("__") else {
            // A glob over the server's name and what follows (`mcp__*`, `mcp__bill*`):
            // Gemini CLI's form of it, whose `*` spans its `_` before the tool's name.
            return match rest.contains('*') {
                true => (vec![format!("mcp{sep}{rest}")], false),
                false => (Vec::new(), true),
            };
        };
        let theirs = format!("mcp{sep}{server}{sep}{name}");
        return (vec![sent_as(harness, &theirs).unwrap_or(theirs)], false);
    }
    let sent = sent_forms(harness, tool);
    if !sent.is_empty() {
        let as_written = sent.iter().any(|s| s == tool);
        return (sent.into_iter().filter(|s| s != tool).collect(), as_written);
    }
    let Some((_, _, does)) = other_builtin(harness, tool) else {
        return (Vec::new(), true);
    };
    let instead = BUILTINS
        .iter()
        .find(|(h, _, r)| *h == harness && does.iter().all(|d| r.contains(d)))
        .map(|(_, n, _)| n.to_string());
    (instead.into_iter().collect(), false)
}

/// The built-in `tool` names: as written, or, when no built-in of this harness has the
/// name in any case (that is [`hook_name_of`]'s), another harness's in another case
/// (`bash` for Claude Code's `Bash`, seen from Gemini CLI, which names no tool so).
fn other_builtin(
    harness: Harness,
    tool: &str,
) -> Option<&'static (Harness, &'static str, &'static [Role])> {
    BUILTINS.iter().find(|(_, n, _)| *n == tool).or_else(|| {
        let own = |n: &str| {
            BUILTINS
                .iter()
                .any(|(h, o, _)| *h == harness && o.eq_ignore_ascii_case(n))
        };
        (!own(tool))
            .then(|| {
                BUILTINS
                    .iter()
                    .find(|(_, n, _)| n.eq_ignore_ascii_case(tool))
            })
            .flatten()
    })
}

/// The longest MCP tool name Gemini CLI sends: it cuts a longer one to its first and
/// last [`GEMINI_KEPT`] characters around `...`.
const GEMINI_MAX_NAME: usize = 63;

/// What Gemini CLI keeps of each end of a name it cuts.
const GEMINI_KEPT: usize = 30;

/// Whether the harness keeps `c` in an MCP tool's name (it writes `_` for any other; a
/// glob's `*` stays, as it stands for the characters it covers).
fn kept_in_mcp_name(harness: Harness, c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || c == '*'
        || match harness {
            Harness::ClaudeCode => c == '-',
            Harness::Codex => false,
            Harness::GeminiCli => matches!(c, '-' | '.' | ':'),
        }
}

/// How the harness sends an MCP tool that a store names `tool`, in this harness's own
/// form (`mcp__<server>__<tool>`, or `mcp_<server>_<tool>` in Gemini CLI), when it may
/// not send it as written: characters it does not keep become `_`, Gemini CLI cuts a name
/// (not a glob) over 63 characters, and Codex joins server and tool as [`sent_forms`]
/// says (the first way, when there are several). Codex cuts a long name too, ending it in
/// a hash of the server and tool: see [`hashed_stem`].
pub fn sent_as(harness: Harness, tool: &str) -> Option<String> {
    let sent = sent_forms(harness, tool);
    if sent.iter().any(|s| s == tool) {
        return None;
    }
    sent.into_iter().next()
}

/// Every name the harness may send the MCP tool a store names `tool` under, in this
/// harness's own form (empty for a name of another form): as [`sent_as`] says, one name
/// but for Codex. Codex joins the server's part and the tool's with `__` after it drops
/// the `_`s at the end of the one and at the start of the other, and writes no second
/// `mcp__` before a server whose name starts with one (seen with 0.171.0: the tool
/// `_refund` of the server `billing_` arrived as `mcp__billing__refund`, `t` of
/// `mcp__dup` as `mcp__dup__t`, `-x` of `a-b.c` as `mcp__a_b_c__x`). Where the server
/// ends and the tool begins, a name of `__` more than once does not say: each place gives
/// one name.
pub fn sent_forms(harness: Harness, tool: &str) -> Vec<String> {
    let sep = harness.mcp_separator();
    let prefix = format!("mcp{sep}");
    if !tool.starts_with(&prefix) {
        return Vec::new();
    }
    let kept = kept_or_cut(harness, tool);
    if harness != Harness::Codex {
        return vec![kept];
    }
    // Every character is ASCII by now, so any byte offset is a character boundary.
    let rest = kept.get(prefix.len()..).unwrap_or_default();
    let mut forms: Vec<String> = Vec::new();
    for at in (0..rest.len()).filter(|&at| rest.get(at..).is_some_and(|r| r.starts_with(sep))) {
        let (server, name) = (
            rest.get(..at).unwrap_or_default(),
            rest.get(at + 2..).unwrap_or_default(),
        );
        let namespace = match server.starts_with(&prefix) {
            true => server.to_string(),
            false => format!("{prefix}{server}"),
        };
        let form = format!(
            "{}{sep}{}",
            namespace.trim_end_matches('_'),
            name.trim_start_matches('_')
        );
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    if forms.is_empty() {
        forms.push(kept);
    }
    forms
}

/// `name` with each character the harness does not keep made `_`, and cut as Gemini CLI
/// cuts a name (not a glob) over 63 characters.
fn kept_or_cut(harness: Harness, name: &str) -> String {
    let sent: String = name
        .chars()
        .map(|c| if kept_in_mcp_name(harness, c) { c } else { '_' })
        .collect();
    if harness != Harness::GeminiCli || sent.contains('*') || sent.len() <= GEMINI_MAX_NAME {
        return sent;
    }
    // Every character is ASCII by now, so byte offsets are character offsets.
    let head = sent.get(..GEMINI_KEPT).unwrap_or_default();
    let tail = sent.get(sent.len() - GEMINI_KEPT..).unwrap_or_default();
    format!("{head}...{tail}")
}

/// The name Gemini CLI gives the tool `tool` of the MCP server `server`:
/// `mcp_<server>_<tool>` (without a second `mcp_` when the server's name starts with
/// one), its characters kept or made `_`, cut when long.
pub fn gemini_mcp_name(server: &str, tool: &str) -> String {
    let joined = format!("{server}_{tool}");
    let name = match joined.starts_with("mcp_") {
        true => joined,
        false => format!("mcp_{joined}"),
    };
    kept_or_cut(Harness::GeminiCli, &name)
}

/// What Codex kept of a long MCP tool name it cut: `call` without the `_` and 12 hex
/// digits of the hash it ends a cut name with (seen with Codex 0.171.0: a tool name of
/// 157 characters arrived as its first 98, `_` and 12 hex digits). `None` when `call`
/// does not end so.
pub fn hashed_stem(harness: Harness, call: &str) -> Option<&str> {
    const HASH: usize = 12;
    if harness != Harness::Codex || !call.starts_with("mcp__") {
        return None;
    }
    let cut = call.len().checked_sub(HASH + 1)?;
    let (stem, hash) = (call.get(..cut)?, call.get(cut..)?);
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    let digits = hash.strip_prefix('_')?;
    (digits.bytes().all(hex)).then_some(stem)
}

/// An MCP tool name whose server part Codex ended in `_` and 12 hex digits of a hash,
/// without that hash: Codex does so when two servers' names come out the same once it
/// replaces their characters (`a-b` and `a.b` both give `mcp__a_b`; read from
/// openai/codex, `codex-mcp/src/tools.rs`, `append_namespace_hash_suffix`, not seen run).
/// `None` for a name without one.
pub fn unhashed_server(harness: Harness, call: &str) -> Option<String> {
    if harness != Harness::Codex {
        return None;
    }
    let rest = call.strip_prefix("mcp__")?;
    rest.match_indices("__").find_map(|(at, _)| {
        let server = format!("mcp__{}", rest.get(..at)?);
        let stem = hashed_stem(harness, &server)?;
        Some(format!("{stem}__{}", rest.get(at + 2..)?))
    })
}

/// How long Codex lets the `mcp__<server>` and tool parts of an MCP tool's name be
/// together: it cuts a longer name to fill them (seen with 0.171.0: a tool of 157
/// characters on the server `bill.ing-srv` arrived in the hook as 129 characters,
/// `mcp__bill_ing_srv`, `__`, 97 of the tool's and a 13-character hash).
const CODEX_PARTS: usize = 128;

/// Whether Codex may send the MCP tool it would call `sent` as `call`, a name it ended
/// in a hash: `sent` cut (too long to send whole; `call` fills the length and keeps its
/// start), or whole (a name two tools share).
pub fn hashed_from(harness: Harness, sent: &str, call: &str) -> bool {
    let Some(stem) = hashed_stem(harness, call) else {
        return false;
    };
    let cut = sent.len() > call.len() && call.len() >= CODEX_PARTS && sent.starts_with(stem);
    !sent.contains('*') && (sent == stem || cut)
}

/// How Claude Code names the tools of an MCP server a plugin brings, for messages (see
/// [`plugin_pattern`]).
pub const PLUGIN_MCP_NAMES: &str = "it names a plugin's MCP servers `plugin_<plugin>_<server>`";

/// The names Claude Code may send the MCP tool a store names `name` (`mcp__<server>__<tool>`,
/// a glob or not) under, as a glob, when a plugin brings the server: Claude Code names
/// such a server `plugin:<plugin>:<server>` and, replacing the `:`s, sends its tools as
/// `mcp__plugin_<plugin>_<server>__<tool>` (read from Claude Code 2.1.197). `None` for
/// another harness or a name of another form.
pub fn plugin_pattern(harness: Harness, name: &str) -> Option<String> {
    let rest = name.strip_prefix("mcp__")?;
    (harness == Harness::ClaudeCode && rest.contains("__") && !rest.starts_with("plugin_"))
        .then(|| format!("mcp__plugin_*_{rest}"))
}

/// The tool names `tool` stands for when the store gives it, names it as another harness
/// does (or as this harness may not send it), and does not also give this harness's name
/// for it (`names` tells which names the store gives): this harness's names, which the
/// store should give too. A name the store gives both ways, as `init` writes a store
/// shared by harnesses, gives none.
pub fn misnamed(harness: Harness, tool: &str, names: impl Fn(&str) -> bool) -> Vec<String> {
    spellings(harness, tool)
        .into_iter()
        .filter(|instead| !names(instead))
        .collect()
}

/// For a glob, the built-ins of other harnesses it covers that this harness names
/// otherwise, each with this harness's name for it (`Bas*` under Gemini CLI: `Bash`, to
/// be `run_shell_command`): a rule naming only the glob binds none of this harness's
/// calls of them. Empty for a name without `*`, and for one that also covers this
/// harness's name (`*`, `*Edit` under Claude Code), which binds the call itself.
pub fn glob_spellings(harness: Harness, glob: &str) -> Vec<(&'static str, String)> {
    use crate::record::glob_match;
    if !glob.contains('*') {
        return Vec::new();
    }
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let covers = |n: &str| glob_match(glob, n) || covers_in_another_case(glob, n);
    for (_, covered, _) in BUILTINS
        .iter()
        .filter(|(h, n, _)| *h != harness && covers(n))
    {
        if let Some(instead) = spelling(harness, covered)
            && !glob_match(glob, &instead)
            && !out.iter().any(|(c, _)| c == covered)
        {
            out.push((covered, instead));
        }
    }
    out
}

/// Whether `call`, a tool of this harness, does what its tool `tool` does: the same
/// tool, or another built-in of the same kind (Claude Code's `MultiEdit` beside `Edit`).
pub fn does_the_same(harness: Harness, tool: &str, call: &str) -> bool {
    let roles = |name: &str| {
        BUILTINS
            .iter()
            .find(|(h, n, _)| *h == harness && *n == name)
            .map(|(_, _, r)| *r)
    };
    tool == call || roles(tool).is_some_and(|r| roles(call) == Some(r))
}

/// The names the model calls Codex's shell tool by, whose calls Codex sends to hooks as
/// `Bash`.
const CODEX_SHELL: [&str; 4] = ["exec_command", "shell", "shell_command", "local_shell"];

/// Whether `tool` is a name the model calls Codex's shell tool by, which Codex never
/// sends to hooks (see [`CODEX_SHELL`]).
pub fn is_codex_shell_name(tool: &str) -> bool {
    CODEX_SHELL.contains(&tool)
}

/// Whether a store that names `name` (a tool name or glob) meant the tool a hook of this
/// harness sees called `call`, though the harness never sends a call under `name` and
/// `name` does not cover `call`: the same name in another case (`bash` for Claude Code's
/// `Bash`), a glob that covers one of this harness's built-ins only in another case
/// (`bas*`), or, in Codex, a name the model calls its shell tool by (`exec_command`,
/// `shell`, `shell_command`, `local_shell`, or a glob covering one), whose calls Codex
/// sends to hooks as `Bash`.
pub fn hook_name_of(harness: Harness, name: &str, call: &str) -> bool {
    use crate::record::glob_match;
    if glob_match(name, call) {
        return false;
    }
    let built_in = BUILTINS.iter().any(|(h, n, _)| *h == harness && *n == call);
    // An MCP tool, by a glob of MCP form (`mcp__Billing__*`): the harness keeps the case
    // of a server's and a tool's names.
    let prefix = format!("mcp{}", harness.mcp_separator());
    let mcp = || {
        call.starts_with(&prefix)
            && (name.get(..prefix.len())).is_some_and(|p| p.eq_ignore_ascii_case(&prefix))
    };
    let cased = match name.contains('*') {
        true => (built_in || mcp()) && covers_in_another_case(name, call),
        false => name.eq_ignore_ascii_case(call),
    };
    cased || codex_shell_name(harness, name, call).is_some()
}

/// Whether the glob `glob` covers `name` once case is set aside.
fn covers_in_another_case(glob: &str, name: &str) -> bool {
    crate::record::glob_match(&glob.to_ascii_lowercase(), &name.to_ascii_lowercase())
}

/// The name the model calls Codex's shell tool by that `name` (a tool name or glob)
/// covers, when `call` is Codex's `Bash`.
fn codex_shell_name(harness: Harness, name: &str, call: &str) -> Option<&'static str> {
    use crate::record::glob_match;
    (harness == Harness::Codex && call == "Bash")
        .then(|| CODEX_SHELL.into_iter().find(|s| glob_match(name, s)))
        .flatten()
}

/// For a glob the store names that [`hook_name_of`] says meant `call`, what it covers
/// instead, for messages: "covers `Bash` only in another case", or "covers
/// `exec_command`, the model's name for it". `None` for a name without `*`.
pub fn hook_glob_covers(harness: Harness, glob: &str, call: &str) -> Option<String> {
    if !glob.contains('*') || !hook_name_of(harness, glob, call) {
        return None;
    }
    Some(match codex_shell_name(harness, glob, call) {
        Some(shell) if !covers_in_another_case(glob, call) => {
            format!("covers `{shell}`, the model's name for it")
        }
        _ => format!("covers `{call}` only in another case"),
    })
}

/// Whether `harness` may send a hook a tool name with a `.`: Gemini CLI keeps an MCP
/// tool's; Claude Code and Codex name tools with ASCII letters, digits, `_` and `-` only.
pub fn keeps_dots(harness: Harness) -> bool {
    harness == Harness::GeminiCli
}

/// Whether `harness` may send a hook a tool name that `name` (a name or `*` glob in a
/// store) gives or covers: Claude Code and Codex send names of ASCII letters, digits,
/// `_` and `-` only ([`keeps_dots`]), so there `refunds.create` (the name a plain program
/// may give a call) binds no call. A name written as a pattern of another syntax is
/// [`has_pattern_syntax`]'s, and counts as sendable here.
pub fn may_send(harness: Harness, name: &str) -> bool {
    keeps_dots(harness)
        || has_pattern_syntax(name)
        || name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))
}

/// Whether `name`, a name in a store, is written as a pattern of another syntax that
/// reads as covering `call` (`Bash|Edit` or `mcp__billing__.*` as a matcher's regex,
/// searched in the name, so `(Bash|Edit)` covers `MultiEdit`; `Bas?` or `[Bb]ash` as a
/// shell glob: see [`pattern_globs`]), though as the gate reads it (a name, or a glob
/// whose only wildcard is `*`) it does not: no harness gives a tool a name with those
/// characters, so a rule naming it binds no call.
pub fn pattern_meant(harness: Harness, name: &str, call: &str) -> bool {
    !crate::record::glob_match(name, call)
        && pattern_globs(harness, name)
            .is_some_and(|globs| (globs.iter()).any(|glob| crate::record::glob_match(glob, call)))
}

/// For a name written as a pattern of another syntax (see [`pattern_meant`]), each of
/// its alternatives as a `*` glob that covers at least what it means, searched anywhere
/// in a name unless anchored (`Bash|Edit`: `*Bash*`, `*Edit*`; `^(Bash|Edit)$`: `Bash`,
/// `Edit`; `mcp__billing__.*`: `*mcp__billing__*`); `None` for a name without such
/// syntax.
///
/// A harness's matcher written as a regex is searched in the tool's name, not matched
/// against all of it: Claude Code (2.1.197, its bundle: a matcher of other characters than
/// letters, digits, `_` and `|` goes to `new RegExp(m).test(name)`), Gemini CLI (0.61.0,
/// its bundle: every matcher is `new RegExp(m).test(name)`) and Codex (its source,
/// `hooks/src/events/common.rs`: `Regex::new(m).is_match(name)`). So `(Bash|Edit)`,
/// written as a matcher, selects `MultiEdit` and `NotebookEdit` too; read anchored, a
/// rule scoped so bound no call of them, and the hook passed them. A shell reads a glob
/// (`[Bb]ash`, `Bas?`) against the whole name; the name cannot say which syntax was
/// meant, and the search covers all the whole-name reading does and more, so it is read
/// as searched too: that only denies more calls, under a store that names no tool so,
/// and the denial says how to fix it.
///
/// A name whose only pattern is `.*` (no character of [`has_pattern_syntax`]) may be the
/// gate's own glob (`refunds.*`, a `.` before its `*`) where the harness keeps a `.` in a
/// tool's name (Gemini CLI, an MCP tool's): there it is read against the whole name
/// (`refunds*`), as [`pattern_fixes`] reads it (searched, `*refunds*`, it denied calls of
/// `mcp_billing_refunds_create` under a store scoped `refunds.*`). Claude Code and Codex
/// name no tool with a `.` (see [`keeps_dots`]), so there such a name binds no call as
/// the gate's glob and is read as the matcher it was written as: searched, so `Edit.*`
/// covers `MultiEdit` as Claude Code's matcher `Edit.*` selects it.
pub fn pattern_globs(harness: Harness, name: &str) -> Option<Vec<String>> {
    if !has_pattern_syntax(name) {
        if !name.contains(".*") {
            return None;
        }
        if keeps_dots(harness) {
            return Some(each_alternative(name, loosened));
        }
    }
    let mut globs = each_alternative(name, searched);
    // A glob another one covers says nothing more (`*MultiEdit*` beside `*Edit*`, for
    // `(Multi)?Edit`); past [`MAX_ALTERNATIVES`], they are kept as they are.
    if globs.len() <= MAX_ALTERNATIVES {
        let covered = |at: usize, g: &String| {
            (globs.iter().enumerate()).any(|(other, h)| {
                // Of two that cover each other, the first stays.
                let mutual = || crate::record::glob_match(g, h);
                other != at && crate::record::glob_match(h, g) && (other < at || !mutual())
            })
        };
        let kept: Vec<bool> = (globs.iter().enumerate())
            .map(|(at, g)| !covered(at, g))
            .collect();
        let mut keep = kept.into_iter();
        globs.retain(|_| keep.next().unwrap_or(true));
    }
    Some(globs)
}

/// For a name written as a pattern of another syntax, the `*` globs to suggest writing
/// instead: each alternative read against the whole name, as a shell reads a glob
/// (`Bash|Edit`: `Bash`, `Edit`; `Bas?`: `Bas*`, `Ba`; `mcp__billing__.*`:
/// `mcp__billing__*`); `None` for a name without such syntax. Narrower than
/// [`pattern_globs`], which says what the name reads as covering (`*Ba*` for `Bas?`): a
/// user who copies a suggested glob binds the tools it names, not every tool whose name
/// holds it.
pub fn pattern_fixes(name: &str) -> Option<Vec<String>> {
    (has_pattern_syntax(name) || name.contains(".*")).then(|| each_alternative(name, loosened))
}

/// Each alternative of a pattern of another syntax (its groups spelt out, see
/// [`alternatives`]) as `read` makes it a `*` glob, a glob the one before gives too
/// left out.
fn each_alternative(name: &str, read: fn(&str) -> String) -> Vec<String> {
    let mut chars = name.chars().peekable();
    let mut globs: Vec<String> = (alternatives(&mut chars, 0).iter())
        .map(|a| read(a))
        .collect();
    globs.dedup();
    globs
}

/// One alternative of a pattern of another syntax as [`loosened`] reads it, with a `*`
/// before it unless it starts with `^`, and after it unless it ends with a `$` (not an
/// escaped one): the names a regex search finds it in.
fn searched(alternative: &str) -> String {
    let start = alternative.starts_with('^');
    let end = alternative.strip_suffix('$').is_some_and(|rest| {
        let escapes = rest.chars().rev().take_while(|c| *c == '\\').count();
        escapes % 2 == 0
    });
    let glob = format!(
        "{}{}{}",
        if start { "" } else { "*" },
        loosened(alternative),
        if end { "" } else { "*" }
    );
    // `**` covers what `*` does.
    let mut out = String::with_capacity(glob.len());
    for c in glob.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

/// Whether `name` holds a character of a matcher's regex or a shell's glob that no
/// harness keeps in a tool's name (`Bash|Edit`, `[Bb]ash`, `mcp__billing__(.*)`). A `*`
/// glob with a `.` before its `*` (`refunds.*`) is the gate's own glob, not one.
pub fn has_pattern_syntax(name: &str) -> bool {
    const SYNTAX: [char; 10] = ['|', '?', '[', ']', '(', ')', '^', '$', '+', '\\'];
    name.contains(SYNTAX)
}

/// At most this many alternatives are spelt out; past it, a group stands for `*`.
const MAX_ALTERNATIVES: usize = 64;

/// Groups nested deeper than this stand for `*`, read past without recursing: a store
/// name of a million `(` overflowed the stack, and the hook died with no verdict (a
/// crashed hook lets the call run in Claude Code).
const MAX_GROUP_DEPTH: usize = 16;

/// The alternatives of a pattern of another syntax (up to its end, or, inside a group
/// (`depth` above 0), the `)` that closes it), each with its groups spelt out:
/// `mcp__(billing|pay)__.*` is `mcp__billing__.*` and `mcp__pay__.*`; so is a `[...]` class
/// of the simple form (see [`class_members`]) not followed by a quantifier: `[Bb]ash` is
/// `Bash` and `bash`. Any other class, and an escaped character, are kept as written (for
/// [`loosened`]); a group that would make more than [`MAX_ALTERNATIVES`], or is nested
/// deeper than [`MAX_GROUP_DEPTH`], is `.*`.
fn alternatives(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, depth: usize) -> Vec<String> {
    let nested = depth > 0;
    let mut done = Vec::new();
    let mut current = vec![String::new()];
    let append =
        |current: &mut Vec<String>, s: &str| current.iter_mut().for_each(|c| c.push_str(s));
    while let Some(c) = chars.next() {
        match c {
            '|' => done.append(&mut std::mem::replace(&mut current, vec![String::new()])),
            ')' if nested => break,
            ')' => {}
            '(' => {
                // A non-capturing group's `?:` is not part of what it matches.
                if chars.peek() == Some(&'?') {
                    chars.next();
                    chars.next_if_eq(&':');
                }
                if depth >= MAX_GROUP_DEPTH {
                    skip_group(chars);
                    append(&mut current, ".*");
                    continue;
                }
                let mut inner = alternatives(chars, depth + 1);
                // A group a quantifier may take no times stands for no text too:
                // `(Multi)?Edit` is `MultiEdit` and `Edit`; after a `*` or a count,
                // which is read next as `*`, `(Multi)*Edit` is `Multi*Edit` and `*Edit`.
                let optional = chars.next_if_eq(&'?').is_some() || optional_next(chars);
                if optional && !inner.iter().any(String::is_empty) {
                    inner.push(String::new());
                }
                if current.len() * inner.len() > MAX_ALTERNATIVES {
                    append(&mut current, ".*");
                } else {
                    current = (current.iter())
                        .flat_map(|c| inner.iter().map(move |i| format!("{c}{i}")))
                        .collect();
                }
            }
            '[' => {
                let mut class = String::from('[');
                for d in chars.by_ref() {
                    class.push(d);
                    if d == ']' {
                        break;
                    }
                }
                // A class followed by a quantifier may stand for no character (`[Bb]?ash`
                // is `ash` too): the wide reading covers that.
                let quantified = matches!(chars.peek(), Some('?' | '*' | '+' | '{'));
                match class_members(&class) {
                    Some(set) if !quantified && current.len() * set.len() <= MAX_ALTERNATIVES => {
                        current = (current.iter())
                            .flat_map(|c| set.iter().map(move |m| format!("{c}{m}")))
                            .collect();
                    }
                    _ => append(&mut current, &class),
                }
            }
            '\\' => {
                let escaped: String = ['\\'].into_iter().chain(chars.next()).collect();
                append(&mut current, &escaped);
            }
            // A character a count may take no times (`Edits{0,1}`: `Edit` too): each
            // alternative with it, and without it; the count, read next, widens both.
            // Past the limit, `.*`. (Before a `*`, the gate's own wildcard, it stays.)
            c if chars.peek() == Some(&'{') => {
                if current.len() * 2 > MAX_ALTERNATIVES {
                    append(&mut current, ".*");
                    continue;
                }
                let without = current.clone();
                append(&mut current, c.encode_utf8(&mut [0; 4]));
                current.extend(without);
            }
            // A character made optional (`Edits?`: `Edit` or `Edits` as a regex, `Edits`
            // and one more as a shell glob): each alternative with it as written (which
            // [`loosened`] reads as the glob), and without it; past the limit, `.*`.
            c if chars.peek() == Some(&'?') => {
                chars.next();
                if current.len() * 2 > MAX_ALTERNATIVES {
                    append(&mut current, ".*");
                    continue;
                }
                let without = std::mem::take(&mut current);
                current = (without.iter().map(|a| format!("{a}{c}?")))
                    .chain(without.iter().cloned())
                    .collect();
            }
            c => append(&mut current, c.encode_utf8(&mut [0; 4])),
        }
    }
    done.append(&mut current);
    done
}

/// True when the next character is a quantifier other than `?` that may take what stands
/// before it no times: `*`, or a `{` (of `{0,1}`, or any other count: read as such all
/// the same).
fn optional_next(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    matches!(chars.peek(), Some('*' | '{'))
}

/// The characters a `[...]` class of the simple form names, each a character a tool's
/// name may have (an ASCII letter or digit, `_`, `-`), written one by one or as ranges
/// (`[Bb]`, `[a-c_]`): `[Bb]ash` is `Bash` and `bash`, not every name ending `ash`
/// (which the hook denied, `mcp__x__stash` too). `None` for any other class (negated,
/// escaped, of a POSIX name, unclosed, empty, or naming another character), which
/// [`loosened`] reads as `*`.
fn class_members(class: &str) -> Option<Vec<char>> {
    let inner: Vec<char> = class
        .strip_prefix('[')?
        .strip_suffix(']')?
        .chars()
        .collect();
    if matches!(inner.first(), None | Some('^' | '!')) {
        return None;
    }
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut set: Vec<char> = Vec::new();
    let mut at = 0;
    while let Some(&c) = inner.get(at) {
        let range = match (inner.get(at + 1), inner.get(at + 2)) {
            (Some('-'), Some(&hi)) => Some(hi),
            _ => None,
        };
        // A tool name's characters are ASCII: a range past them is read no further.
        let members: Vec<char> = match range {
            Some(hi) if c <= hi && hi.is_ascii() => (c..=hi).collect(),
            Some(_) => return None,
            None => vec![c],
        };
        if !members.iter().all(|m| name_char(*m)) {
            return None;
        }
        at += if range.is_some() { 3 } else { 1 };
        for m in members {
            if !set.contains(&m) {
                set.push(m);
            }
        }
        if set.len() > MAX_ALTERNATIVES {
            return None;
        }
    }
    Some(set)
}

/// Reads past the rest of a group whose `(` was just read, to the `)` that closes it
/// (or the end), without recursing.
fn skip_group(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    let mut open = 1usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '(' => open += 1,
            ')' => {
                open -= 1;
                if open == 0 {
                    return;
                }
            }
            _ => {}
        }
    }
}

/// One alternative of a pattern of another syntax (its groups spelt out, see
/// [`alternatives`]) as a `*` glob that covers at least what it means: `.*`, `.+`, `?`,
/// `+`, a `[...]` class and a class escape (`\w`, `\d`, ...) each stand for `*`; anchors
/// go, and an escaped punctuation character is that character.
fn loosened(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' if matches!(chars.peek(), Some('*' | '+' | '?')) => {
                chars.next();
                out.push('*');
            }
            '?' | '+' => out.push('*'),
            '[' => {
                chars.by_ref().find(|d| *d == ']');
                out.push('*');
            }
            // A count (`{0,1}`, `{2}`): any number of what stands before it.
            '{' => {
                chars.by_ref().find(|d| *d == '}');
                out.push('*');
            }
            '\\' => match chars.next() {
                Some(d) if d.is_ascii_alphanumeric() => out.push('*'),
                Some(d) => out.push(d),
                None => {}
            },
            '^' | '$' | '(' | ')' => {}
            c => out.push(c),
        }
    }
    out
}

/// The built-ins of this harness that a store naming `name` (a tool name or glob) meant,
/// when no hook call of this harness carries `name` ([`hook_name_of`]: `Bash` for Claude
/// Code's `bash` or `bas*`, or for Codex's `exec_command`); empty for any other name. For
/// a check before a session, which has no call to hold the name against.
pub fn hook_names_for(harness: Harness, name: &str) -> Vec<&'static str> {
    BUILTINS
        .iter()
        .filter(|(h, _, _)| *h == harness)
        .map(|(_, call, _)| *call)
        .filter(|call| hook_name_of(harness, name, call))
        .collect()
}

/// The other built-ins of this harness that do what its built-in `tool` does (`Monitor`
/// and `PowerShell` beside Claude Code's `Bash`, `MultiEdit` beside its `Edit`).
pub fn same_kind(harness: Harness, tool: &str) -> impl Iterator<Item = &'static str> {
    BUILTINS
        .iter()
        .filter(move |(h, n, _)| *h == harness && *n != tool && does_the_same(harness, tool, n))
        .map(|(_, n, _)| *n)
}

/// The built-ins of this harness that `name`, a tool name or glob, covers, each with
/// another that does the same and that `name` does not cover: (`Edit`, `MultiEdit`) for
/// Claude Code's `Edit` or `Edi*`. A rule naming only `name` binds the first's calls and
/// not the second's.
pub fn kin_left_out(
    harness: Harness,
    name: &str,
) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    use crate::record::glob_match;
    BUILTINS
        .iter()
        .filter(move |(h, n, _)| *h == harness && glob_match(name, n))
        .flat_map(move |(_, n, _)| same_kind(harness, n).map(move |kin| (*n, kin)))
        .filter(move |(_, kin)| !glob_match(name, kin))
}

/// This harness's built-ins that change a file named in their input (Claude Code's
/// `Write`, `Edit`, `MultiEdit` and `NotebookEdit`, Codex's `apply_patch`, Gemini CLI's
/// `write_file` and `replace`).
pub fn file_tools(harness: Harness) -> impl Iterator<Item = &'static str> {
    let changes = |roles: &[Role]| {
        (roles.iter()).any(|r| matches!(r, Role::Write | Role::Edit | Role::Notebook))
    };
    BUILTINS
        .iter()
        .filter(move |(h, _, r)| *h == harness && changes(r))
        .map(|(_, n, _)| *n)
}

/// This harness's built-ins that run shell commands, which can change any file too.
pub fn shell_tools(harness: Harness) -> impl Iterator<Item = &'static str> {
    BUILTINS
        .iter()
        .filter(move |(h, _, r)| *h == harness && r.contains(&Role::Shell))
        .map(|(_, n, _)| *n)
}

/// Whose name `tool` is, seen from `harness`, for messages: the other harnesses that
/// give it, with the verb (`Claude Code and Codex name`), and what it names (`the shell
/// tool`; a name of MCP form is `an MCP tool` of the harnesses that spell MCP tools so).
pub fn whose(harness: Harness, tool: &str) -> (String, &'static str) {
    let builtin = other_builtin(harness, tool);
    let owners: Vec<&str> = Harness::ALL
        .into_iter()
        .filter(|h| *h != harness)
        .filter(|h| match builtin {
            Some((_, name, _)) => BUILTINS.iter().any(|(o, n, _)| o == h && n == name),
            None => h.mcp_separator() != harness.mcp_separator(),
        })
        .map(Harness::title)
        .collect();
    let what = match builtin {
        Some((_, _, [Role::Shell])) => "the shell tool",
        Some((_, _, [Role::Write])) => "the file-writing tool",
        Some((_, _, [Role::Edit])) => "the file-editing tool",
        Some((_, _, [Role::Search])) => "the file-search tool",
        Some((_, _, [Role::Notebook])) => "the notebook-editing tool",
        Some(_) => "the file-writing and file-editing tool",
        None => "an MCP tool",
    };
    // Named in another case: say how they spell it.
    let cased = match builtin {
        Some((_, name, _)) if *name != tool => format!(", as `{name}`,"),
        _ => String::new(),
    };
    let owners = match owners.as_slice() {
        [one] => format!("{one} names"),
        more => format!("{} name", more.join(" and ")),
    };
    (format!("{owners}{cased}"), what)
}

/// What a glob covering another harness's built-in `covered` means here, for messages
/// ([`glob_spellings`] gives `covered` and `instead`): "which covers `Write`, how Claude
/// Code names the file-writing tool; Gemini CLI calls it `write_file`".
pub fn glob_covers(harness: Harness, glob: &str, covered: &str, instead: &str) -> String {
    let (owners, what) = whose(harness, covered);
    format!(
        "which covers `{covered}`{}, how {owners} {what}; {} calls it `{instead}`",
        glob_case(glob, covered),
        harness.title()
    )
}

/// For messages: " only in another case" when the glob covers `covered` only so (`BAS*`
/// and `Bash`), else nothing.
pub fn glob_case(glob: &str, covered: &str) -> &'static str {
    match crate::record::glob_match(glob, covered) {
        true => "",
        false => " only in another case",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_maps_each_built_in_to_the_harness_tool_that_does_the_same() {
        type Cases = &'static [(&'static str, Option<&'static str>)];
        let expected: [(Harness, Cases); 3] = [
            (
                Harness::ClaudeCode,
                &[
                    ("Bash", None),
                    ("MultiEdit", None),
                    ("run_shell_command", Some("Bash")),
                    ("write_file", Some("Write")),
                    ("replace", Some("Edit")),
                    ("apply_patch", None),
                    ("mcp_a_b", None),
                    ("deploy", None),
                ],
            ),
            (
                Harness::Codex,
                &[
                    ("Bash", None),
                    ("apply_patch", None),
                    ("run_shell_command", Some("Bash")),
                    ("Write", Some("apply_patch")),
                    ("MultiEdit", Some("apply_patch")),
                    ("replace", Some("apply_patch")),
                    ("mcp__a__b", None),
                ],
            ),
            (
                Harness::GeminiCli,
                &[
                    ("run_shell_command", None),
                    ("Bash", Some("run_shell_command")),
                    ("Write", Some("write_file")),
                    ("Edit", Some("replace")),
                    ("MultiEdit", Some("replace")),
                    ("apply_patch", None),
                    ("mcp__srv__tool", Some("mcp_srv_tool")),
                    ("mcp__srv__*", Some("mcp_srv_*")),
                    ("mcp__srv", None),
                    ("mcp_srv_tool", None),
                ],
            ),
        ];
        for (h, cases) in expected {
            for (tool, instead) in cases {
                assert_eq!(spelling(h, tool).as_deref(), *instead, "{h:?} {tool}");
            }
        }
        // An MCP tool named this harness's way, spelt as the harness sends it.
        let long = format!("mcp_billing_refunds_create_{}_end", "x".repeat(40));
        for (h, tool, sent) in [
            (
                Harness::ClaudeCode,
                "mcp__a.b c__t-1",
                Some("mcp__a_b_c__t-1"),
            ),
            (Harness::ClaudeCode, "mcp__a-b__*", None),
            (Harness::Codex, "mcp__a.b c__t-1", Some("mcp__a_b_c__t_1")),
            (
                Harness::GeminiCli,
                "mcp_a.b c_t-1:x",
                Some("mcp_a.b_c_t-1:x"),
            ),
            (Harness::GeminiCli, "mcp__a b__t", Some("mcp_a_b_t")),
            (
                Harness::GeminiCli,
                &long,
                Some("mcp_billing_refunds_create_xxx...xxxxxxxxxxxxxxxxxxxxxxxxxx_end"),
            ),
            (Harness::GeminiCli, "mcp_a_*", None),
            // A glob over the server's name, Claude Code's form: Gemini CLI's `mcp_` one.
            (Harness::GeminiCli, "mcp__*", Some("mcp_*")),
            (Harness::GeminiCli, "mcp__bill*", Some("mcp_bill*")),
            (Harness::GeminiCli, "mcp__billing", None),
            (Harness::ClaudeCode, "deploy.now", None),
        ] {
            assert_eq!(spelling(h, tool).as_deref(), sent, "{h:?} {tool}");
        }
        // Codex drops the `_`s around the `__` that joins server and tool (the tool
        // `_refund` of `billing_`, `-x` of `a-b.c`), and adds no second `mcp__`.
        for (tool, sent) in [
            ("mcp__billing____refund", Some("mcp__billing__refund")),
            ("mcp__billing___*", Some("mcp__billing__*")),
            ("mcp__a-b.c__-x", Some("mcp__a_b_c__x")),
            ("mcp___lead__t", None),
            ("mcp__srv__trail__", None),
            ("mcp__b____t", Some("mcp__b__t")),
        ] {
            assert_eq!(spelling(Harness::Codex, tool).as_deref(), sent, "{tool}");
        }
        // Where the server ends is not said: each place gives a name.
        assert_eq!(
            sent_forms(Harness::Codex, "mcp__mcp__dup__t"),
            ["mcp__mcp__dup__t", "mcp__dup__t"]
        );
        assert_eq!(spelling(Harness::Codex, "mcp__mcp__dup__t"), None);
        assert_eq!(
            spellings(Harness::Codex, "mcp__mcp__dup__t"),
            ["mcp__dup__t"]
        );
        assert_eq!(
            sent_forms(Harness::Codex, "mcp__a__b___c"),
            ["mcp__a__b___c", "mcp__a__b__c"]
        );
        assert_eq!(sent_forms(Harness::Codex, "mcp__srv"), ["mcp__srv"]);
        assert!(sent_forms(Harness::Codex, "Bash").is_empty());
        assert_eq!(
            sent_forms(Harness::ClaudeCode, "mcp__b____t"),
            ["mcp__b____t"]
        );
        assert_eq!(gemini_mcp_name("mcp_ops", "deploy"), "mcp_ops_deploy");
        assert_eq!(gemini_mcp_name("a b", "t"), "mcp_a_b_t");
        let cut = format!("mcp__s__{}_f04219cc0e1a", "x".repeat(20));
        assert_eq!(
            hashed_stem(Harness::Codex, &cut),
            Some(format!("mcp__s__{}", "x".repeat(20)).as_str())
        );
        assert_eq!(hashed_stem(Harness::Codex, "mcp__s__t_f04219cc0e1A"), None);
        assert_eq!(hashed_stem(Harness::ClaudeCode, &cut), None);
        assert_eq!(hashed_stem(Harness::Codex, "Bash_f04219cc0e1a"), None);
        // A server part ended in a hash: two servers' names came out the same.
        let shared = "mcp__a_b_f04219cc0e1a__refund";
        for (h, call, stem) in [
            (Harness::Codex, shared, Some("mcp__a_b__refund")),
            (Harness::Codex, "mcp__a_b__refund", None),
            (Harness::ClaudeCode, shared, None),
        ] {
            assert_eq!(unhashed_server(h, call).as_deref(), stem, "{h:?} {call}");
        }
        // Cut: the call fills Codex's length; a short call is no cut of a long name.
        let long = format!("mcp__s__{}", "x".repeat(140));
        let cut_long = format!("mcp__s__{}_f04219cc0e1a", "x".repeat(110));
        assert!(hashed_from(Harness::Codex, &long, &cut_long));
        assert!(!hashed_from(Harness::Codex, &long, &cut));
        let short = format!("mcp__s__{}", "x".repeat(30));
        assert!(!hashed_from(Harness::Codex, &short, &cut_long));
        assert!(hashed_from(
            Harness::Codex,
            "mcp__s__t",
            "mcp__s__t_f04219cc0e1a"
        ));
        assert!(!hashed_from(
            Harness::Codex,
            "mcp__s__tool",
            "mcp__s__t_f04219cc0e1a"
        ));
        assert_eq!(
            plugin_pattern(Harness::ClaudeCode, "mcp__billing__refunds_create").as_deref(),
            Some("mcp__plugin_*_billing__refunds_create")
        );
        assert_eq!(plugin_pattern(Harness::Codex, "mcp__billing__x"), None);
        assert_eq!(
            plugin_pattern(Harness::ClaudeCode, "mcp__plugin_p_s__t"),
            None
        );
        assert_eq!(plugin_pattern(Harness::ClaudeCode, "Bash"), None);
        assert!(does_the_same(Harness::ClaudeCode, "Edit", "MultiEdit"));
        assert!(does_the_same(Harness::ClaudeCode, "Bash", "Monitor"));
        let shells: Vec<_> = same_kind(Harness::ClaudeCode, "Bash").collect();
        assert_eq!(shells, ["Monitor", "PowerShell"]);
        assert_eq!(same_kind(Harness::GeminiCli, "replace").count(), 0);
        assert_eq!(
            spelling(Harness::GeminiCli, "Monitor").as_deref(),
            Some("run_shell_command")
        );
        assert!(!does_the_same(Harness::ClaudeCode, "Edit", "Write"));
        // `NotebookEdit` changes files, and does what no other tool does.
        assert!(!does_the_same(Harness::ClaudeCode, "Edit", "NotebookEdit"));
        assert_eq!(spelling(Harness::GeminiCli, "NotebookEdit"), None);
        assert_eq!(spelling(Harness::Codex, "NotebookEdit"), None);
        let files = |h| file_tools(h).collect::<Vec<_>>();
        assert_eq!(
            files(Harness::ClaudeCode),
            ["Write", "Edit", "MultiEdit", "NotebookEdit"]
        );
        assert_eq!(files(Harness::Codex), ["apply_patch"]);
        assert_eq!(files(Harness::GeminiCli), ["write_file", "replace"]);
        assert_eq!(shell_tools(Harness::Codex).collect::<Vec<_>>(), ["Bash"]);
        assert!(!does_the_same(Harness::GeminiCli, "mcp_a_b", "mcp_a_c"));
        // Named as no hook call carries it: the built-in meant.
        for (h, name, call) in [
            (Harness::ClaudeCode, "bash", Some("Bash")),
            (Harness::ClaudeCode, "MULTIEDIT", Some("MultiEdit")),
            (Harness::ClaudeCode, "notebookedit", Some("NotebookEdit")),
            (Harness::ClaudeCode, "read", None),
            (Harness::ClaudeCode, "Bash", None),
            (Harness::ClaudeCode, "exec_command", None),
            (Harness::Codex, "exec_command", Some("Bash")),
            (Harness::Codex, "local_shell", Some("Bash")),
            (Harness::Codex, "Apply_Patch", Some("apply_patch")),
            (
                Harness::GeminiCli,
                "Run_Shell_Command",
                Some("run_shell_command"),
            ),
            (Harness::GeminiCli, "shell", None),
            (Harness::GeminiCli, "mcp_a_b", None),
        ] {
            assert_eq!(
                hook_names_for(h, name),
                Vec::from_iter(call),
                "{h:?} {name}"
            );
        }
        // A glob that covers a built-in only in another case, or (Codex) a name the model
        // calls its shell tool by; a glob that covers the built-in itself binds its calls.
        for (h, glob, calls) in [
            (Harness::ClaudeCode, "bas*", &["Bash"][..]),
            (Harness::ClaudeCode, "*ASH", &["Bash"]),
            (Harness::ClaudeCode, "m*", &["Monitor", "MultiEdit"]),
            (Harness::ClaudeCode, "Bas*", &[]),
            (Harness::ClaudeCode, "*", &[]),
            (Harness::ClaudeCode, "mcp__*", &[]),
            (Harness::Codex, "bas*", &["Bash"]),
            (Harness::Codex, "exec_*", &["Bash"]),
            (Harness::Codex, "APPLY*", &["apply_patch"]),
            (Harness::Codex, "*sh", &[]),
            (Harness::GeminiCli, "RUN_SHELL*", &["run_shell_command"]),
            (Harness::GeminiCli, "exec_*", &[]),
        ] {
            assert_eq!(hook_names_for(h, glob), calls, "{h:?} {glob}");
        }
        assert_eq!(
            hook_glob_covers(Harness::ClaudeCode, "bas*", "Bash").as_deref(),
            Some("covers `Bash` only in another case")
        );
        assert_eq!(
            hook_glob_covers(Harness::Codex, "exec_*", "Bash").as_deref(),
            Some("covers `exec_command`, the model's name for it")
        );
        assert_eq!(hook_glob_covers(Harness::ClaudeCode, "bash", "Bash"), None);
        // A pattern of another syntax, read as covering the call.
        for (name, call, meant) in [
            ("Bash|Edit", "Bash", true),
            ("(Bash|Edit)", "Edit", true),
            ("^Bash$", "Bash", true),
            ("mcp__billing__.*", "mcp__billing__refunds_create", true),
            ("Bas?", "Bash", true),
            // A regex's `?` makes the character before it optional: `Edits?` is `Edit`
            // too (read only as a shell's one character, it was `Edits*`, and a rule
            // scoped so bound `Edit` and was not reported).
            ("Edits?", "Edit", true),
            ("Edits?", "Edits", true),
            ("Edits?", "EditsX", true),
            ("Edits?", "Edi", false),
            (
                "mcp__billing__refunds?_create",
                "mcp__billing__refund_create",
                true,
            ),
            ("Bas.?", "Bash", true),
            ("[Bb]ash", "Bash", true),
            ("Write|Edit", "Bash", false),
            ("notes.*", "notes.append", false),
            ("refunds.create", "refunds_create", false),
            ("Bash", "Bash", false),
            // An alternation inside a group, a non-capturing group, a class escape.
            ("mcp__(billing|pay)__.*", "mcp__pay__refund", true),
            ("mcp__(billing|pay)__.*", "mcp__billing__refund", true),
            ("mcp__(?:billing|pay)__.*", "mcp__pay__refund", true),
            ("mcp__(billing|pay)__.*", "mcp__shop__refund", false),
            ("Bas\\w", "Bash", true),
            ("(Bash|Edit)|Read", "Read", true),
            ("Bash)|Edit", "Edit", true),
            // A class is the set it names (read as `*`, `[Bb]ash` covered `stash`).
            ("[Bb]ash", "bash", true),
            ("[Bb]ash", "mcp__x__stash", false),
            // Searched in the name, as a matcher's regex is: `Bbash` holds `bash`.
            ("[Bb]ash", "Bbash", true),
            ("mcp__[a-c]__x", "mcp__b__x", true),
            ("mcp__[a-c]__x", "mcp__d__x", false),
            ("[-_]x", "-x", true),
            // Past the simple forms, the wide reading: a negated class, a quantified one
            // (`[Bb]?ash` is `ash` too), one of other characters, one left open.
            ("[^x]ash", "Bash", true),
            ("[Bb]?ash", "ash", true),
            ("[Bb]*ash", "ash", true),
            ("[.]ash", "Bash", true),
            ("[0-z]ash", "Bash", true),
            ("Bas[h", "Bash", true),
            ("[\u{0}-\u{10ffff}]ash", "Bash", true),
        ] {
            assert_eq!(
                pattern_meant(Harness::ClaudeCode, name, call),
                meant,
                "{name} {call}"
            );
        }
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "[Bb]ash").unwrap(),
            ["*Bash*", "*bash*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "[Bb]as[hk]")
                .unwrap()
                .len(),
            4
        );
        let wide = pattern_globs(Harness::ClaudeCode, "[a-z][a-z]x").unwrap();
        assert_eq!((wide.len(), wide[0].as_str()), (26, "*a*x*"));
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "mcp__(billing|pay)__.*"),
            Some(vec![
                "*mcp__billing__*".to_string(),
                "*mcp__pay__*".to_string()
            ])
        );
        // An MCP tool by a glob of MCP form that covers it only in another case.
        let mcp = "mcp__billing__refunds_create";
        assert!(hook_name_of(Harness::ClaudeCode, "mcp__Billing__*", mcp));
        assert!(hook_name_of(Harness::ClaudeCode, "MCP__billing__*", mcp));
        assert!(!hook_name_of(Harness::ClaudeCode, "mcp__billing__*", mcp));
        assert!(!hook_name_of(Harness::ClaudeCode, "*_CREATE", mcp));
        assert!(hook_name_of(
            Harness::GeminiCli,
            "mcp_Billing_*",
            "mcp_billing_x"
        ));
        // Another harness's built-in in another case: this harness's name for it.
        assert_eq!(
            spelling(Harness::GeminiCli, "bash").as_deref(),
            Some("run_shell_command")
        );
        assert_eq!(
            spelling(Harness::ClaudeCode, "WRITE_FILE").as_deref(),
            Some("Write")
        );
        assert_eq!(spelling(Harness::Codex, "bash"), None);
        assert_eq!(
            glob_spellings(Harness::GeminiCli, "BAS*"),
            [("Bash", "run_shell_command".to_string())]
        );
        assert_eq!(
            whose(Harness::GeminiCli, "bash"),
            (
                "Claude Code and Codex name, as `Bash`,".to_string(),
                "the shell tool"
            )
        );
        // Named both ways, nothing is misnamed.
        let both = |n: &str| ["Bash", "run_shell_command"].contains(&n);
        assert!(misnamed(Harness::GeminiCli, "Bash", both).is_empty());
        assert_eq!(
            misnamed(Harness::GeminiCli, "Bash", |n| n == "Bash"),
            ["run_shell_command"]
        );
        // Gemini CLI answers to `search_file_content` as to `grep_search`.
        assert!(does_the_same(
            Harness::GeminiCli,
            "grep_search",
            "search_file_content"
        ));
        assert_eq!(spelling(Harness::ClaudeCode, "grep_search"), None);
        assert_eq!(
            whose(Harness::ClaudeCode, "grep_search"),
            ("Gemini CLI names".to_string(), "the file-search tool")
        );
        assert_eq!(
            whose(Harness::Codex, "replace"),
            ("Gemini CLI names".to_string(), "the file-editing tool")
        );
        assert_eq!(
            whose(Harness::GeminiCli, "Bash"),
            ("Claude Code and Codex name".to_string(), "the shell tool")
        );
        assert_eq!(
            whose(Harness::Codex, "mcp_a_b"),
            ("Gemini CLI names".to_string(), "an MCP tool")
        );
    }

    /// A group that a regex's `?`, `*` or `{0,...}` makes optional (or a character, by a
    /// count) stands for no text too: `(Multi)?Edit` is `Edit`. Read as `Multi*Edit`, a
    /// rule scoped so bound no call of `Edit`, and the hook passed it.
    #[test]
    fn a_group_or_character_a_quantifier_makes_optional_may_be_left_out() {
        for (name, call, meant) in [
            ("(Multi)?Edit", "Edit", true),
            ("(Multi)?Edit", "MultiEdit", true),
            ("(Multi)*Edit", "Edit", true),
            ("(Multi){0,1}Edit", "Edit", true),
            ("(Multi)+Edit", "MultiEdit", true),
            ("Bash|Edits{0,1}", "Edit", true),
            ("(mcp__)?Bash", "Bash", true),
            ("(Multi)?Edit", "Bash", false),
            ("Bash|Edits{0,1}", "Read", false),
        ] {
            assert_eq!(
                pattern_meant(Harness::ClaudeCode, name, call),
                meant,
                "{name} {call}"
            );
        }
        // A group made optional by `?` is the names with and without it, each searched
        // in the name (`*MultiEdit*` says nothing `*Edit*` does not); anchored, the
        // names themselves.
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "(Multi)?Edit").unwrap(),
            ["*Edit*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "^(Multi)?Edit$").unwrap(),
            ["MultiEdit", "Edit"]
        );
        assert!(!pattern_meant(
            Harness::ClaudeCode,
            "^(Multi)?Edit$",
            "NotebookEdit"
        ));
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "^(Multi)*Edit").unwrap(),
            ["*Edit*"]
        );
    }

    /// A harness searches a matcher written as a regex in the tool's name (Claude Code's
    /// `new RegExp(m).test(name)`, Gemini CLI's too, Codex's `Regex::is_match`): the
    /// user who writes `(Bash|Edit)` into a store as they write matchers means a rule
    /// that binds `MultiEdit` and `NotebookEdit` too. Read anchored, the hook passed their
    /// calls unjudged. Anchored by `^` and `$`, an alternative covers only whole names.
    #[test]
    fn a_pattern_is_searched_in_the_name_unless_anchored() {
        for (name, call, meant) in [
            ("(Bash|Edit)", "MultiEdit", true),
            ("(Bash|Edit)", "NotebookEdit", true),
            ("Edi(t)", "MultiEdit", true),
            ("Edit.*|Write", "MultiEdit", true),
            ("Bash|Edit", "mcp__x__Bash_run", true),
            ("(Multi)?Edit", "NotebookEdit", true),
            ("mcp__(billing)__.*", "mcp__x__mcp__billing__y", true),
            // A name whose only pattern is `.*`: Claude Code names no tool with a `.`, so
            // it is no glob of the gate's here, and is searched as the matcher it reads as
            // (read against the whole name, `Edit.*` passed `MultiEdit` unjudged).
            ("Edit.*", "MultiEdit", true),
            ("mcp__billing__.*", "mcp__x__mcp__billing__y", true),
            ("mcp__billing__.*", "mcp__billing__refunds_create", true),
            ("refunds.*", "mcp__billing__refunds_create", true),
            ("refunds.*", "refunds_create", true),
            // An empty alternative is found in every name.
            ("Bash|", "Read", true),
            // Anchored at both ends: the whole name only.
            ("^(Bash|Edit)$", "MultiEdit", false),
            ("^Bash$|^Edit$", "NotebookEdit", false),
            ("^(Bash|Edit)$", "Edit", true),
            // Anchored at one end: the name starts, or ends, so.
            ("^Edit", "MultiEdit", false),
            ("^Edit", "EditX", true),
            ("Edit$", "MultiEdit", true),
            ("Edit$", "EditX", false),
            ("(^Bash|Edit)$", "Bashful", false),
            ("(^Bash|Edit)$", "MultiEdit", true),
            // An escaped `$` is the character, not an anchor.
            ("Edit\\$", "MultiEdit$x", true),
            ("Edit\\\\$", "MultiEdit\\", true),
            ("Edit\\\\$", "MultiEdit\\x", false),
            // What covers nothing more, searched, still does not.
            ("Write|Edit", "Bash", false),
        ] {
            assert_eq!(
                pattern_meant(Harness::ClaudeCode, name, call),
                meant,
                "{name} {call}"
            );
        }
        // Gemini CLI keeps an MCP tool's `.`, so there `refunds.*` may be the gate's own
        // glob: read against the whole name (searched, it denied
        // `mcp_billing_refunds_create` under a store scoped `refunds.*`).
        for (name, call, meant) in [
            ("refunds.*", "mcp_billing_refunds_create", false),
            ("refunds.*", "refunds_create", true),
            ("(Bash|Edit)", "MultiEdit", true),
        ] {
            assert_eq!(
                pattern_meant(Harness::GeminiCli, name, call),
                meant,
                "{name} {call}"
            );
        }
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "(Bash|Edit)").unwrap(),
            ["*Bash*", "*Edit*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "^Bas?$").unwrap(),
            ["Bas*", "Ba"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "Edit\\$").unwrap(),
            ["*Edit$*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, ".*Bash.*").unwrap(),
            ["*Bash*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "Bash||Edit").unwrap(),
            ["*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "Edits?").unwrap(),
            ["*Edit*"]
        );
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, "^(Multi)*Edit$").unwrap(),
            ["*Edit"]
        );
    }

    #[test]
    fn a_pattern_nested_past_the_depth_is_read_without_recursing() {
        // A million `(` overflowed the stack: the hook died, and Claude Code ran the call.
        let deep = format!("{}Bash{}", "(".repeat(1_000_000), ")".repeat(1_000_000));
        assert!(pattern_meant(Harness::ClaudeCode, &deep, "Bash"));
        let globs = pattern_globs(Harness::ClaudeCode, &deep).unwrap();
        assert_eq!(globs, ["*"]);
        // Within the depth, groups are spelt out as before.
        let shallow = format!("{}Bash|Edit{}", "(".repeat(16), ")".repeat(16));
        assert_eq!(
            pattern_globs(Harness::ClaudeCode, &shallow).unwrap(),
            ["*Bash*", "*Edit*"]
        );
        // An escaped `)` inside a skipped group does not close it.
        let escaped = format!("{}a\\)b)|Write", "(".repeat(17));
        let read = alternatives(&mut escaped.chars().peekable(), 0);
        assert!(read.contains(&"Write".to_string()), "{read:?}");
    }
}
