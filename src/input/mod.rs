//! Turning input bytes into a validated store plus the document's `kept`, `action` and
//! `tools` (SPEC 2). Two forms, told apart by the first JSON value: a document object
//! with `records`, or a JSON Lines record stream. Flag values (`--kept`, `--action`,
//! `--tools`) are parsed here too, from text the CLI has already read. Commands load
//! through the one entry in `entry` ([`load_check`], [`load_precheck`], [`pin_report`],
//! [`load_store`]), which picks the lean loader (`lean`, over the crate-private
//! `stream`) or the exact one ([`load`]).

use serde_json::Value;

use crate::action::{Action, Tool};
use crate::compaction::KeptError;
use crate::compaction::{Compaction, Totals};
use crate::error::{InputError, InputProblem, ReadProblem, Reason};
use crate::json;
use crate::record::{Limits, Place, Record, Store, parse_record};
use crate::stream::{Batch, Member, Plan, Positional};

mod entry;
pub(crate) mod lean;
mod source;
mod texts;

pub use entry::{
    FlagText, LightPass, Loaded, Request, Source, action_of, load_all, load_check, load_precheck,
    load_store, names_a_tool, pin_report, store_texts, store_texts_beside, tools_of,
};
pub use source::{io_reason, read};

use crate::stream::Fallback;

use texts::{Repeats, Text, record_texts};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a document or stream supplied.
#[derive(Debug, Clone)]
pub struct Input {
    /// The validated records: every record of the input from the exact loader ([`load`]),
    /// only those a command can consult from the lean one.
    pub(crate) store: Store,
    /// What the load knows of the whole input beside the records `store` holds.
    pub totals: Totals,
    /// The document's `kept` ids, if any.
    pub kept: Option<Vec<String>>,
    /// The document's `action`, if any.
    pub action: Option<Action>,
    /// The document's `tools`, if any.
    pub tools: Option<Vec<Tool>>,
    /// Read from JSON Lines, which holds records only: its kept ids, action and tools
    /// can come only from flags (the messages for their absence say so).
    pub(crate) stream: bool,
}

impl Input {
    /// The error for a kept set that could not be made: `origin` gave the kept ids (or
    /// would have). Missing ids of JSON Lines, which has no `kept` key to give them in,
    /// are told so.
    pub(crate) fn kept_error(&self, origin: &str, e: KeptError) -> InputError {
        match e {
            KeptError::Missing if self.stream => {
                InputError::invalid(origin, "kept", InputProblem::NoStreamKept)
            }
            e => InputError::invalid(origin, "kept", e),
        }
    }

    /// The tools precheck and pin consider when no `--tools` is given: the document's
    /// `tools`, else every tool name or glob a policy scope or an effect gives, with no
    /// schema (SPEC 2.3), so that no rule is out of their sight.
    pub fn tools_or_named(&self) -> Vec<Tool> {
        match &self.tools {
            Some(tools) => tools.clone(),
            None => self
                .totals
                .named
                .iter()
                .map(|name| Tool {
                    name: name.to_string(),
                    input_schema: None,
                })
                .collect(),
        }
    }
}

const DOCUMENT_KEYS: [&str; 5] = ["records", "kept", "action", "tools", "meta"];

/// Reads an input in either form. `origin` names it in messages (a path or `<stdin>`).
/// A leading UTF-8 byte-order mark is skipped.
pub fn load(origin: &str, bytes: &[u8], limits: Limits) -> Result<Input, InputError> {
    check_size(origin, bytes.len() as u64, limits)?;
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    if json::is_blank(bytes) {
        return Err(InputError::invalid(origin, "input", InputProblem::Empty));
    }
    let (first, end) = json::parse_first(bytes)
        .map_err(|e| InputError::syntax(origin, with_comment_hint(bytes, e), 0))?;
    match first {
        Value::Object(obj) if obj.contains_key("records") => {
            let rest = bytes.get(end..).unwrap_or(&[]);
            if !json::is_blank(rest) {
                // Parse the whole input again for the exact position of the trailing data.
                let err = json::parse(bytes).err().unwrap_or(json::SyntaxError {
                    line: 1,
                    column: 1,
                    message: "trailing data after the document".into(),
                });
                return Err(InputError::syntax(origin, with_comment_hint(bytes, err), 0));
            }
            load_document(origin, &Value::Object(obj), limits)
        }
        Value::Array(_) => Err(InputError::invalid(origin, "input", InputProblem::Array)),
        first => load_stream(origin, bytes, limits).map_err(|e| {
            match neither_form(origin, bytes, &first) {
                // A first line of a document's keys alone, such as `kept`, says that a
                // stream holds records only.
                Some(neither) if !is_document_key_line(&e) => neither,
                _ => e,
            }
        }),
    }
}

/// `err`, with a hint when it is at a comment (`#`, `//` or `/*` where JSON expects a
/// value or a key): JSON has none, and "expected value" did not say so.
fn with_comment_hint(bytes: &[u8], mut err: json::SyntaxError) -> json::SyntaxError {
    let line = bytes
        .split(|&b| b == b'\n')
        .nth(err.line.saturating_sub(1))
        .unwrap_or_default();
    // serde_json's column is 1-based, in bytes; at the end of a line it may point one past.
    let at = line.get(err.column.saturating_sub(1)..).unwrap_or_default();
    if [&b"#"[..], b"//", b"/*"].iter().any(|c| at.starts_with(c)) {
        err.message
            .push_str(" (JSON has no comments: delete it, or say it in a record's `text`)");
    }
    err
}

/// Whether `e` refuses a line of JSON Lines with a document's key.
fn is_document_key_line(e: &InputError) -> bool {
    matches!(e, InputError::Invalid { reason, .. }
        if matches!(**reason, Reason::Input(InputProblem::DocumentKeyLine(_))))
}

/// The keys a message about an object names at most.
const MOST_KEYS_SHOWN: usize = 5;

/// When the input's first JSON value is an object with none of a record's `id`, `seq`
/// and `kind`, the refusal that says so, naming its keys and the document key one of
/// them nearly names: read as JSON Lines, a document with a misspelt `records` was
/// refused as a record without an `id`. What input means is unchanged: only the error
/// path calls this, after the stream was refused.
fn neither_form(origin: &str, bytes: &[u8], first: &Value) -> Option<InputError> {
    let Value::Object(obj) = first else {
        return None;
    };
    if ["id", "seq", "kind"].iter().any(|k| obj.contains_key(*k)) {
        return None;
    }
    let records: Vec<char> = "records".chars().collect();
    let near = obj
        .keys()
        .find(|k| {
            k.eq_ignore_ascii_case("records")
                || crate::text::edit_distance(&records, k.trim(), 2).is_some()
        })
        .cloned();
    let keys = obj.keys().take(MOST_KEYS_SHOWN).cloned().collect();
    // The line the object starts on (after blank lines, if any).
    let start = bytes
        .iter()
        .position(|&b| !json::is_whitespace(b))
        .unwrap_or(0);
    let line = 1 + bytes.iter().take(start).filter(|&&b| b == b'\n').count();
    Some(InputError::invalid(
        origin,
        format!("line {line}"),
        InputProblem::NeitherForm { keys, near },
    ))
}

/// Refuses an input larger than `limits.max_input_bytes`. The CLI checks the size
/// before reading too; this keeps the library's own entry point bounded.
pub fn check_size(origin: &str, len: u64, limits: Limits) -> Result<(), InputError> {
    check_size_of(origin, "input", len, limits)
}

/// [`check_size`] for a file that plays `role` (`input`, `action file`...).
pub fn check_size_of(origin: &str, role: &str, len: u64, limits: Limits) -> Result<(), InputError> {
    if len > limits.max_input_bytes {
        let limit = limits.max_input_bytes;
        return Err(InputError::invalid(
            origin,
            role,
            ReadProblem::TooLarge(limit),
        ));
    }
    Ok(())
}

fn load_document(origin: &str, doc: &Value, limits: Limits) -> Result<Input, InputError> {
    let Value::Object(obj) = doc else {
        return Err(InputError::invalid(
            origin,
            "document",
            InputProblem::NotObject,
        ));
    };
    if let Some(k) = obj.keys().find(|k| !DOCUMENT_KEYS.contains(&k.as_str())) {
        let key = format!("key `{}`", crate::text::clean(k));
        return Err(InputError::invalid(origin, key, InputProblem::UnknownKey));
    }
    let Some(Value::Array(items)) = obj.get("records") else {
        let problem = InputProblem::RecordsNotArray;
        return Err(InputError::invalid(origin, "key `records`", problem));
    };
    let records = items
        .iter()
        .enumerate()
        .map(|(i, v)| parse_record(&Place::Index(i), v, limits))
        .collect::<Result<Vec<Record>, _>>()
        .map_err(|e| InputError::record(origin, e))?;
    let store = Store::new(records).map_err(|e| InputError::record(origin, e))?;
    let kept = obj
        .get("kept")
        .map(|v| kept_from_json(v).map_err(|e| InputError::invalid(origin, "key `kept`", e)))
        .transpose()?;
    let action = obj
        .get("action")
        .map(|v| Action::from_json(v).map_err(|e| InputError::invalid(origin, "key `action`", e)))
        .transpose()?;
    let tools = obj
        .get("tools")
        .map(|v| Tool::list_from_json(v).map_err(|e| InputError::invalid(origin, "key `tools`", e)))
        .transpose()?;
    // Every id of the document's `kept` names a record, whatever decides the kept set.
    if let Some(ids) = &kept {
        crate::compaction::document_kept_ids_name_records(&store, ids)
            .map_err(|e| InputError::invalid(origin, "kept", e))?;
    }
    Ok(Input {
        totals: Totals::of(&store),
        store,
        kept,
        action,
        tools,
        stream: false,
    })
}

fn load_stream(origin: &str, bytes: &[u8], limits: Limits) -> Result<Input, InputError> {
    let mut records = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if json::is_blank(line) {
            continue;
        }
        let value = json::parse(line).map_err(|e| {
            let mut e = with_comment_hint(line, e);
            if e.message.starts_with("EOF while parsing") {
                e.message.push_str(
                    " (in JSON Lines each record is one line: join its lines, or put the records in a document, `{\"records\": [...]}`)",
                );
            }
            InputError::syntax(origin, e, i)
        })?;
        // A line of a document's keys alone (`{"kept": [...]}`): a stream holds records only.
        if let Value::Object(obj) = &value
            && obj.keys().all(|k| DOCUMENT_KEYS.contains(&k.as_str()))
            && let Some(key) = obj.keys().next()
        {
            return Err(InputError::invalid(
                origin,
                format!("line {}", i + 1),
                InputProblem::DocumentKeyLine((*key).to_string()),
            ));
        }
        let record = parse_record(&Place::Line(i + 1), &value, limits)
            .map_err(|e| InputError::record(origin, e))?;
        records.push(record);
    }
    let store = Store::new(records).map_err(|e| InputError::record(origin, e))?;
    Ok(Input {
        totals: Totals::of(&store),
        store,
        kept: None,
        action: None,
        tools: None,
        stream: true,
    })
}

/// Reads kept ids from a JSON array of strings.
pub fn kept_from_json(value: &Value) -> Result<Vec<String>, KeptError> {
    let Value::Array(items) = value else {
        return Err(KeptError::NotArray);
    };
    items
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(KeptError::NotId(other.clone())),
        })
        .collect()
}

/// Reads `--kept`: inline `a,b,c`, or the contents of an `@FILE` (a JSON array, or one
/// id per line). Ids are taken exactly as written (SPEC 2): nothing is trimmed, only a
/// `\n` or `\r\n` line terminator (in a file) or a comma (inline) ends one, and an empty
/// entry is passed over (no record has an empty id). An empty inline value keeps
/// nothing.
pub fn kept_from_flag(
    origin: &str,
    text: &str,
    from_file: bool,
) -> Result<Vec<String>, InputError> {
    if let Some(array) = kept_json(text) {
        let v = json::parse(array.as_bytes()).map_err(|e| InputError::syntax(origin, e, 0))?;
        return kept_from_json(&v).map_err(|e| InputError::invalid(origin, "--kept", e));
    }
    Ok(plain_kept_ids(text, from_file)
        .map(str::to_string)
        .collect())
}

/// Refuses a plain `--kept` value that names no id (`--kept "$KEPT"` with the variable
/// unset, an empty file). Read as keeping nothing, it judged a compaction other than the
/// compactor's: an allow rule the agent still reads, on a value a dropped fact retracted,
/// went unseen and the call passed. A JSON array (`[]`) says that nothing was kept.
pub fn kept_names_an_id(origin: &str, text: &str, from_file: bool) -> Result<(), InputError> {
    if kept_json(text).is_some() || plain_kept_ids(text, from_file).next().is_some() {
        return Ok(());
    }
    let place = if from_file { "kept file" } else { "kept" };
    Err(InputError::invalid(origin, place, KeptError::NamesNone))
}

/// The JSON array a `--kept` value holds (after a file's byte-order mark), if it is
/// one: JSON whitespace, then `[`. Anything else is plain ids.
fn kept_json(text: &str) -> Option<&str> {
    let json = text.strip_prefix('\u{feff}').unwrap_or(text);
    json.trim_start_matches(json::is_whitespace_char)
        .starts_with('[')
        .then_some(json)
}

/// The ids of a plain `--kept` value, exactly as written: split at commas (inline) or
/// line ends (a file, where a `\r` before the `\n` belongs to the terminator), empty
/// entries passed over.
fn plain_kept_ids(text: &str, from_file: bool) -> impl Iterator<Item = &str> {
    let sep = if from_file { b'\n' } else { b',' };
    // `text.split(sep)`, with the separators found by `memchr` (a file may name a
    // hundred thousand ids, each a few bytes long, and a lean load waits for them).
    let mut start = 0;
    memchr::memchr_iter(sep, text.as_bytes())
        .chain(std::iter::once(text.len()))
        .map(move |end| {
            let id = text.get(start..end).unwrap_or_default();
            start = end + 1;
            // A `\r` ends an id only before a `\n`: the last id of a file that ends in a
            // `\r` keeps it (`p1\r` is not `p1`, which may be another record).
            match from_file && end < text.len() {
                true => id.strip_suffix('\r').unwrap_or(id),
                false => id,
            }
        })
        .filter(|id| !id.is_empty())
}

/// Reads `--action`: a JSON object, inline or from a file.
pub fn action_from_flag(origin: &str, text: &str) -> Result<Action, InputError> {
    let text = text.trim_start_matches('\u{feff}');
    let v = json::parse(text.as_bytes()).map_err(|mut e| {
        e.message.push_str(&action_shape(text));
        InputError::syntax(origin, e, 0)
    })?;
    Action::from_json(&v).map_err(|e| InputError::invalid(origin, "--action", e))
}

/// The hint for an action that is not JSON: its shape, with the value as the tool when it
/// looks like a bare tool name (`--action deploy.run`).
fn action_shape(text: &str) -> String {
    let name = text.trim();
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '/'));
    let tool = if bare {
        crate::text::clean(name).into_owned()
    } else {
        "TOOL".to_string()
    };
    format!(" (an action is one JSON object: `{{\"tool\":\"{tool}\",\"params\":{{}}}}`)")
}

/// Reads `--tools`: inline names `a,b`, or JSON (inline or from a file): an array, or
/// an object (Gemini's `{"functionDeclarations": [...]}`; any other is refused rather
/// than split into names at its commas).
pub fn tools_from_flag(origin: &str, text: &str) -> Result<Vec<Tool>, InputError> {
    let trimmed = text.trim_start_matches('\u{feff}');
    let value = if trimmed.trim_start().starts_with(['[', '{']) {
        json::parse(trimmed.as_bytes()).map_err(|e| InputError::syntax(origin, e, 0))?
    } else {
        Value::Array(
            trimmed
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
                .collect(),
        )
    };
    Tool::list_from_json(&value).map_err(|e| InputError::invalid(origin, "--tools", e))
}

#[cfg(test)]
mod lean_tests;
#[cfg(test)]
mod tests;
