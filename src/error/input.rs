//! What the loaders (`input`) refuse in the input's form.

use thiserror::Error;

use crate::text::clean;

/// What is wrong with the input's form (the loaders', `input`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputProblem {
    /// Nothing but white space.
    #[error("empty input: expected a document or JSON Lines records")]
    Empty,
    /// A bare JSON array of records.
    #[error(
        "a JSON array is neither input form: wrap the records as a document, `{{\"records\": [...]}}`, or write one record object per line (JSON Lines)"
    )]
    Array,
    /// The first JSON value is an object that is neither a record (it has none of `id`,
    /// `seq`, `kind`) nor a document (it has no `records`): read as JSON Lines, it was
    /// refused as a record without an `id`. Its keys, and the one that nearly names
    /// `records` (a misspelt document key), if any.
    #[error(
        "an object with {} where a record (with `id`, `seq` and `kind`) or a document (with `records`) was expected: {}",
        keys_part(.keys),
        near_part(.near.as_deref())
    )]
    NeitherForm {
        /// The object's keys, as many as a message shows.
        keys: Vec<String>,
        /// The key that nearly names `records`.
        near: Option<String>,
    },
    /// A line of JSON Lines that is an object of a document's keys alone (`kept`,
    /// `action`, `tools`, `records`, `meta`): a stream holds records only. Its first key.
    #[error(
        "a line with the document key `{}` and no record: a JSON Lines store holds records only, one a line: {}",
        clean(.0),
        document_key_fix(.0)
    )]
    DocumentKeyLine(String),
    /// A document that is not an object.
    #[error("expected an object")]
    NotObject,
    /// A document key the format does not have (the key is the place).
    #[error("unknown document key (a document takes records, kept, action, tools, meta)")]
    UnknownKey,
    /// A document's `records` that is not an array.
    #[error("must be an array of record objects")]
    RecordsNotArray,
    /// `check` with neither a document `action` nor `--action`.
    #[error("check needs an action: a document `action` key or --action")]
    NoAction,
    /// `check` of a JSON Lines store without `--action`: a stream has no `action` key.
    #[error("check needs an action, and a JSON Lines store holds records only: give --action")]
    NoStreamAction,
    /// Retention `given` of a JSON Lines store without kept ids: a stream has no `kept`
    /// key.
    #[error(
        "retention=given needs the kept ids, and a JSON Lines store holds records only: give --kept (or have them computed from the harness's transcript: check --transcript FILE, hook --kept-from transcript)"
    )]
    NoStreamKept,
    /// `sweep` of a document without its own `action` (sweep takes no `--action`).
    #[error(
        "sweep judges each document's own action, and this one has no `action` key: add one, or judge it with check --action"
    )]
    NoSweepAction,
    /// `sweep` of a JSON Lines store, which holds records only: no action to judge.
    #[error(
        "sweep judges each input's own action, and a JSON Lines store holds records only (sweep takes no --action): put the records in a document with an `action` key, or judge it with check --action"
    )]
    NoSweepStreamAction,
    /// `sweep` under retention `given` of a document without its own `kept` (sweep takes
    /// no `--kept`).
    #[error(
        "sweep judges each document under retention given by its own `kept`, and this one has no `kept` key (sweep takes no --kept): add one, give --retention head_tail:K or recency:K, or judge it with check --kept"
    )]
    NoSweepKept,
    /// `sweep` under retention `given` of a JSON Lines store, which cannot hold kept ids
    /// (sweep takes no `--kept`).
    #[error(
        "sweep judges each input under retention given by a document's own `kept`, and a JSON Lines store holds records only (sweep takes no --kept): give --retention head_tail:K or recency:K, put the records in a document with a `kept` key, or judge it with check --kept"
    )]
    NoSweepStreamKept,
    /// `--kept VALUE` whose ids name no record, where `VALUE` is a file: the value.
    #[error(
        "kept id `{}` names no record (did you mean `@{}`? a file of ids is read with @)",
        clean(.0),
        clean(.0)
    )]
    KeptIsAFile(String),
    /// `--tools VALUE` or `--action VALUE` (no `@`) where `VALUE` names a file, or (for
    /// `--tools`) has a name that looks like a file's: the flag and the value. Read as
    /// written, `--tools tools.json` guards one tool named `tools.json`, so precheck
    /// passed and pin pinned nothing whatever the store held.
    #[error("{}", flag_is_a_file(.flag, .value, .seen.as_deref()))]
    FlagIsAFile {
        /// `--tools` or `--action`.
        flag: &'static str,
        /// The value as given.
        value: String,
        /// The name in it that looks like a file's, when that is what was seen (else
        /// the value names a file that is there).
        seen: Option<String>,
    },
    /// A hook's plain `--tools` value of Claude Code or Codex with a name that has a `.`,
    /// which no tool of theirs has: the harness and the name.
    #[error(
        "`{}` has a `.`, and {harness} gives no tool a name with one (its tool names are ASCII letters, digits, `_` and `-`), so as written it guards no tool the hook sees; --tools reads a file only as `@FILE`: write --tools @{} for the file",
        clean(.name),
        clean(.name)
    )]
    DottedTool {
        /// The harness the hook answers.
        harness: &'static str,
        /// The name with a `.`.
        name: String,
    },
    /// An inline `--kept` list in which a record's id with commas is spelt across commas:
    /// the id.
    #[error(
        "record `{}` has a comma in its id, so an inline --kept list cannot tell it from the ids around its commas: give --kept as a JSON array or as a file of ids, one per line",
        clean(.0)
    )]
    KeptSplitsAnId(String),
    /// A `--kept` value read as a JSON array whose plain reading (ids per line in a file,
    /// else between commas) names a record too: the id.
    #[error(
        "record `{}` is also named by this --kept value read as ids one per line (or between commas), which also parses as a JSON array of ids: the gate cannot tell which the compactor meant; give a JSON array of the kept ids in which no line, or part between commas, is a record's id (spaced, `[ \"a\" ]`; a record `[\"a\"]` is `[\"[\\\"a\\\"]\"]` there)",
        clean(.0)
    )]
    KeptReadsTwoWays(String),
    /// A hook's store names a tool as another harness names it, and not as the
    /// harness answered names it, so no rule naming only that name binds its calls.
    #[error(
        "`{}` is how {owners} {what}; {harness} calls it `{}`, so a rule that names only `{}` never binds this call: name `{}` too wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
        clean(.tool),
        clean(.instead),
        clean(.tool),
        clean(.instead),
        clean(.tool)
    )]
    OtherHarnessTool {
        /// The name the store gives.
        tool: String,
        /// The harnesses that give it, as users know them, with the verb: `Claude Code
        /// names`, `Claude Code and Codex name`.
        owners: String,
        /// What it names.
        what: &'static str,
        /// The harness answered.
        harness: &'static str,
        /// The harness's own name for it.
        instead: String,
    },
    /// A hook's store names a glob that covers another harness's built-in and not this
    /// harness's name for it, so no rule naming only the glob binds the call.
    #[error(
        "`{}` covers `{covered}`{}, which is how {owners} {what}; {harness} calls it `{}`, so a rule that names only `{}` never binds this call: name `{}` too wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
        clean(.tool),
        crate::harness::glob_case(.tool, .covered),
        clean(.instead),
        clean(.tool),
        clean(.instead),
        clean(.tool)
    )]
    OtherHarnessGlob {
        /// The glob the store gives.
        tool: String,
        /// The other harness's built-in it covers.
        covered: &'static str,
        /// The harnesses that give that name, with the verb.
        owners: String,
        /// What it names.
        what: &'static str,
        /// The harness answered.
        harness: &'static str,
        /// The harness's own name for it.
        instead: String,
    },
    /// A hook's store names an MCP tool this harness's way, but not as the harness sends
    /// it (characters it replaces, a long name it cuts), and not as it sends it too.
    #[error(
        "{harness} sends the MCP tool the store names `{}` as `{}` ({how}), so a rule that names only `{}` never binds this call: name `{}` too wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
        clean(.tool),
        clean(.instead),
        clean(.tool),
        clean(.instead),
        clean(.tool)
    )]
    NotSentAs {
        /// The name the store gives.
        tool: String,
        /// The harness answered.
        harness: &'static str,
        /// How it changes an MCP tool's name ([`crate::harness::Harness::mcp_name_change`]).
        how: &'static str,
        /// The name the harness sends.
        instead: String,
    },
    /// A hook's guarded tools name a tool otherwise than the harness calls it (another
    /// harness's name, a built-in that does the same, an MCP name it changes), and not as
    /// it calls it: the call is not guarded.
    #[error(
        "the guarded tools name `{}` and not `{}`, which covers this call of `{}` in {harness}, so the call would go unjudged: name `{}` too",
        clean(.tool),
        clean(.instead),
        clean(.call),
        clean(.instead)
    )]
    UnguardedSpelling {
        /// The name the list gives.
        tool: String,
        /// The harness answered.
        harness: &'static str,
        /// The tool being called.
        call: String,
        /// The name to list too.
        instead: String,
    },
    /// A hook's store names the tool being called otherwise than the harness sends it to
    /// hooks, and never as it sends it: in another case (`bash` for `Bash`, or a glob
    /// that covers it only so, `bas*`), or by the name the model calls it (Codex's
    /// `exec_command` for `Bash`, or a glob covering that name).
    #[error("{}", not_hook_name(harness, tool, covers.as_deref(), instead))]
    NotHookName {
        /// The name the store gives.
        tool: String,
        /// The harness answered.
        harness: &'static str,
        /// For a glob, what it covers instead (see
        /// `harness::hook_glob_covers`); `None` for a name.
        covers: Option<String>,
        /// The name the harness sends to hooks.
        instead: String,
    },
    /// A hook's store names the tool being called by a pattern of another syntax
    /// (`Bash|Edit`, `mcp__billing__.*`, `Bas?`), which the gate reads as a name (or a
    /// `*` glob) that no harness gives a tool, so no rule naming it binds the call.
    #[error(
        "no tool is called `{}`: the store's names are tool names or globs whose only wildcard is `*` (`|`, `?`, `[...]` and `.*` are read as written), so a rule that names only `{}` never binds this call of `{}`: name `{}` wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
        clean(.tool),
        clean(.tool),
        clean(.call),
        clean(.call),
        clean(.tool)
    )]
    PatternName {
        /// The name the store gives.
        tool: String,
        /// The tool being called.
        call: String,
    },
    /// A hook's store names a built-in tool of this harness (or a glob covering it), and
    /// not another built-in that does the same (`Edit`, not `MultiEdit`), whose calls no
    /// rule would bind.
    #[error(
        "`{}` does what `{kin}` does in {harness}, so a rule that names `{}` and not `{}` never binds this call: name `{}` too wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
        clean(.instead),
        clean(.tool),
        clean(.instead),
        clean(.instead),
        clean(.tool)
    )]
    SameKindTool {
        /// The name the store gives.
        tool: String,
        /// The built-in it names or covers.
        kin: &'static str,
        /// The harness answered.
        harness: &'static str,
        /// The built-in being called, which the store does not name.
        instead: String,
    },
}

/// The keys of [`InputProblem::NeitherForm`]: `key `a``, `keys `a`, `b``, or none.
fn keys_part(keys: &[String]) -> String {
    let named: Vec<String> = keys.iter().map(|k| format!("`{}`", clean(k))).collect();
    match named.len() {
        0 => "no keys".to_string(),
        1 => format!("key {}", named.join("")),
        _ => format!("keys {}", named.join(", ")),
    }
}

/// The fix of [`InputProblem::NeitherForm`]: the key to use for a misspelt one, else
/// what each form looks like.
fn near_part(near: Option<&str>) -> String {
    match near {
        Some(key) => format!("rename `{}` to `records`", clean(key)),
        None => "put the records in a document, `{\"records\": [...]}`, or write one record object per line (JSON Lines)".to_string(),
    }
}

/// The fix of [`InputProblem::DocumentKeyLine`]: the flag that gives what the key
/// would, or the document that holds it.
fn document_key_fix(key: &str) -> String {
    match key {
        "kept" => "give the kept ids with --kept (a hook with --kept-from transcript needs none), or put the records in a document, `{\"records\": [...], \"kept\": [...]}`".to_string(),
        "action" => "give the call with --action, or put the records in a document, `{\"records\": [...], \"action\": {...}}`".to_string(),
        "tools" => "give the tools with --tools, or put the records in a document, `{\"records\": [...], \"tools\": [...]}`".to_string(),
        _ => "put the records in one document, `{\"records\": [...]}`, or write each record on its own line".to_string(),
    }
}

/// The message of [`InputProblem::NotHookName`]: the name, or the glob and what it
/// covers, and the name to write beside it.
fn not_hook_name(harness: &str, tool: &str, covers: Option<&str>, instead: &str) -> String {
    let (tool, instead) = (clean(tool), clean(instead));
    let (named, too) = match covers {
        Some(covers) => (format!("and the store's `{tool}` {covers}"), " too"),
        None => (format!("never as `{tool}`"), ""),
    };
    format!(
        "{harness} sends this call to its hooks as `{instead}`, {named}, so a rule that names `{tool}` and not `{instead}` never binds this call: name `{instead}`{too} wherever the store names `{tool}` (beside it in a policy's scope, or in an effect record with the same `match`)"
    )
}

/// The message of [`InputProblem::FlagIsAFile`]: the file, and the flag written with `@`.
fn flag_is_a_file(flag: &str, value: &str, seen: Option<&str>) -> String {
    if let Some(name) = seen {
        let name = clean(name);
        return format!(
            "`{name}` looks like a file's name (a tool's name has no `/` and no ending such as `.json`), and {flag} reads a file only as `@FILE`, whether or not the file is there; as written it names a tool `{name}`: write {flag} @{name} for the file (or, for a tool of that name, give the list as a JSON array, {flag} '[\"{name}\"]')"
        );
    }
    let value = clean(value);
    let named = match flag {
        "--tools" => format!(
            "; as written it names one tool, `{value}`: write {flag} @{value} (or, for a tool of that name, give it as a JSON array, {flag} '[\"{value}\"]')"
        ),
        _ => format!(": write {flag} @{value}"),
    };
    format!("`{value}` is a file, and {flag} reads a file only as `@{value}`{named}")
}
