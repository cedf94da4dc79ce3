//! Turning input bytes into a validated store plus the document's `kept`, `action` and
//! `tools` (SPEC 2). Two forms, told apart by the first JSON value: a document object
//! with `records`, or a JSON Lines record stream. Flag values (`--kept`, `--action`,
//! `--tools`) are parsed here too, from text the CLI has already read.

use serde_json::Value;

use crate::action::{Action, Tool};
use crate::compaction::Compaction;
use crate::document::{Member, Positional};
use crate::error::InputError;
use crate::json;
use crate::record::{Limits, Place, Record, Store, parse_record};
use crate::stream::{Batch, Fallback, Plan};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a document or stream supplied.
#[derive(Debug, Clone)]
pub struct Input {
    /// The validated records.
    pub store: Store,
    /// The document's `kept` ids, if any.
    pub kept: Option<Vec<String>>,
    /// The document's `action`, if any.
    pub action: Option<Action>,
    /// The document's `tools`, if any.
    pub tools: Option<Vec<Tool>>,
}

impl Input {
    /// The tools precheck and pin consider when no `--tools` is given: the document's
    /// `tools`, else every tool name a policy scope or an effect spells out exactly, with
    /// no schema (SPEC 2.3).
    pub fn tools_or_named(&self) -> Vec<Tool> {
        match &self.tools {
            Some(tools) => tools.clone(),
            None => self
                .store
                .named_tools()
                .into_iter()
                .map(|name| Tool {
                    name: name.to_string(),
                    input_schema: None,
                })
                .collect(),
        }
    }
}

/// Which of the two input forms a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// One JSON object with `records`.
    Document,
    /// One record object per line.
    Stream,
}

const DOCUMENT_KEYS: [&str; 5] = ["records", "kept", "action", "tools", "meta"];

/// Reads an input in either form. `origin` names it in messages (a path or `<stdin>`).
/// A leading UTF-8 byte-order mark is skipped.
pub fn load(origin: &str, bytes: &[u8], limits: Limits) -> Result<Input, InputError> {
    check_size(origin, bytes.len() as u64, limits)?;
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError::at(
            origin,
            "input",
            "empty input: expected a document or JSON Lines records",
        ));
    }
    let (first, end) = json::parse_first(bytes).map_err(|e| InputError::syntax(origin, e, 0))?;
    match first {
        Value::Object(obj) if obj.contains_key("records") => {
            let rest = bytes.get(end..).unwrap_or(&[]);
            if !rest.iter().all(u8::is_ascii_whitespace) {
                // Parse the whole input again for the exact position of the trailing data.
                let err = json::parse(bytes).err().unwrap_or(json::SyntaxError {
                    line: 1,
                    column: 1,
                    message: "trailing data after the document".into(),
                });
                return Err(InputError::syntax(origin, err, 0));
            }
            load_document(origin, &Value::Object(obj), limits)
        }
        _ => load_stream(origin, bytes, limits),
    }
}

/// Refuses an input larger than `limits.max_input_bytes`. The CLI checks the size
/// before reading too; this keeps the library's own entry point bounded.
pub fn check_size(origin: &str, len: u64, limits: Limits) -> Result<(), InputError> {
    if len > limits.max_input_bytes {
        return Err(InputError::at(
            origin,
            "input",
            format!(
                "larger than the input limit of {} bytes (raise it with --max-input-bytes)",
                limits.max_input_bytes
            ),
        ));
    }
    Ok(())
}

fn load_document(origin: &str, doc: &Value, limits: Limits) -> Result<Input, InputError> {
    let Value::Object(obj) = doc else {
        return Err(InputError::at(origin, "document", "expected an object"));
    };
    if let Some(k) = obj.keys().find(|k| !DOCUMENT_KEYS.contains(&k.as_str())) {
        return Err(InputError::at(
            origin,
            format!("key `{}`", crate::report::clean(k)),
            "unknown document key (a document takes records, kept, action, tools, meta)",
        ));
    }
    let Some(Value::Array(items)) = obj.get("records") else {
        return Err(InputError::at(
            origin,
            "key `records`",
            "must be an array of record objects",
        ));
    };
    let records = items
        .iter()
        .enumerate()
        .map(|(i, v)| parse_record(origin, &Place::Index(i), v, limits))
        .collect::<Result<Vec<Record>, _>>()?;
    let store = Store::new(origin, records)?;
    let kept = obj
        .get("kept")
        .map(|v| kept_from_json(v).map_err(|m| InputError::at(origin, "key `kept`", m)))
        .transpose()?;
    let action = obj
        .get("action")
        .map(|v| Action::from_json(v).map_err(|m| InputError::at(origin, "key `action`", m)))
        .transpose()?;
    let tools = obj
        .get("tools")
        .map(|v| Tool::list_from_json(v).map_err(|m| InputError::at(origin, "key `tools`", m)))
        .transpose()?;
    Ok(Input {
        store,
        kept,
        action,
        tools,
    })
}

fn load_stream(origin: &str, bytes: &[u8], limits: Limits) -> Result<Input, InputError> {
    let mut records = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value = json::parse(line).map_err(|e| InputError::syntax(origin, e, i))?;
        records.push(parse_record(origin, &Place::Line(i + 1), &value, limits)?);
    }
    Ok(Input {
        store: Store::new(origin, records)?,
        kept: None,
        action: None,
        tools: None,
    })
}

/// A `check` read by the lean loader ([`crate::stream`]): the input, and the compaction
/// it was loaded for.
pub struct Lean {
    /// The lean store and the document's `action` and `tools` (see [`LeanFor`]).
    pub input: Input,
    /// The `given` compaction.
    pub compaction: Compaction,
    /// The action to judge: the flag's, else the document's.
    pub action: Action,
}

/// Loads an input for one `check` with retention `given`, leanly (see [`crate::stream`]).
/// `first` is the start of the input and `rest` the remaining chunks, each ending at a line
/// end; `kept` is the `--kept` flag's text (and whether it came from a file) and `action`
/// the `--action` flag's, both already read. Any problem at all, including every error
/// the exact path would report, is [`Fallback`]: run [`load`] instead.
pub fn load_lean(
    origin: &str,
    first: Vec<u8>,
    rest: impl Iterator<Item = Result<Vec<u8>, Fallback>> + Send,
    kept: Option<(&str, bool)>,
    action: Option<Action>,
    limits: Limits,
) -> Result<Lean, Fallback> {
    load_lean_then(origin, first, rest, kept, action, limits, Ok)
}

/// [`load_lean`], handing the load to `then` while the input's last checks run beside it
/// (see [`crate::stream::load`]): `then`'s result once they pass, else [`Fallback`].
pub fn load_lean_then<R>(
    origin: &str,
    first: Vec<u8>,
    rest: impl Iterator<Item = Result<Vec<u8>, Fallback>> + Send,
    kept: Option<(&str, bool)>,
    action: Option<Action>,
    limits: Limits,
    then: impl FnOnce(Lean) -> Result<R, Fallback>,
) -> Result<R, Fallback> {
    let purpose = Purpose::Check(action);
    load_lean_with(origin, first, rest, None, kept, purpose, limits, |lean| {
        then(Lean {
            input: lean.input,
            compaction: lean.compaction,
            action: lean.action.ok_or(Fallback)?,
        })
    })
}

/// What a lean load is for: it holds only what that command reads.
pub enum Purpose {
    /// `check` of one action: `--action`'s, else the document's.
    Check(Option<Action>),
    /// `check --precheck` of the `--tools` given, else the document's `tools`, else every
    /// tool the records name.
    Precheck(Option<Vec<Tool>>),
    /// `pin` of the `--tools` given, else as for precheck. Reads no kept ids.
    Pin(Option<Vec<Tool>>),
    /// `pin --budget`, as `Pin`, gathering every record's tokens too.
    PinBudget(Option<Vec<Tool>>),
}

/// A lean load for some [`Purpose`].
pub struct LeanFor {
    /// The lean store and the document's `action` and `tools` (not its `kept`: the
    /// compaction is what those ids were read for).
    pub input: Input,
    /// The `given` compaction (keeping nothing for `pin`).
    pub compaction: Compaction,
    /// For `check`, the action to judge.
    pub action: Option<Action>,
    /// For precheck and pin, the tools to judge (as [`Input::tools_or_named`] resolves
    /// them when no `--tools` was given).
    pub tools: Vec<Tool>,
    /// For `pin --budget`, every record's tokens (see [`lean_digests`]).
    pub budget: Option<crate::stream::Budget>,
}

/// The second pass of `pin --budget` over the same input as [`load_lean_for`] (its
/// chunks given again the same way): the id and digest of each record whose `seq` is in
/// `wanted`.
pub fn lean_digests(
    origin: &str,
    first: Vec<u8>,
    rest: impl Iterator<Item = Result<Vec<u8>, Fallback>> + Send,
    budget: &crate::stream::Budget,
    wanted: &std::collections::BTreeSet<u64>,
    limits: Limits,
) -> Result<std::collections::BTreeMap<u64, (String, [u8; 32])>, Fallback> {
    lean_digests_with(origin, first, rest, None, budget, wanted, limits)
}

/// [`lean_digests`] after a [`load_lean_with`] given `whole`: a document is read again
/// by position, in the same chunks.
pub fn lean_digests_with<'w>(
    origin: &str,
    first: Vec<u8>,
    rest: impl Iterator<Item = Result<Vec<u8>, Fallback>> + Send,
    whole: Option<&mut (dyn Positional<'w> + 'w)>,
    budget: &crate::stream::Budget,
    wanted: &std::collections::BTreeSet<u64>,
    limits: Limits,
) -> Result<std::collections::BTreeMap<u64, (String, [u8; 32])>, Fallback> {
    let mut first = first;
    let bom = first.starts_with(BOM);
    if bom {
        first.drain(..BOM.len());
    }
    let plan = Plan::new(origin, std::iter::empty(), None, limits);
    let document = |src: &mut dyn Positional<'_>, start: u64| {
        let layout = crate::document::layout(src, start)?;
        crate::stream::digests(&plan, budget, wanted, crate::document::spans(src, &layout))
    };
    match crate::stream::is_document(&first) {
        Some(false) => {
            let batches = std::iter::once(Ok(first))
                .chain(rest)
                .map(|chunk| chunk.map(Batch::Lines));
            crate::stream::digests(&plan, budget, wanted, batches)
        }
        Some(true) => match whole {
            Some(whole) => document(whole, if bom { BOM.len() as u64 } else { 0 }),
            None => {
                let mut bytes = first;
                for chunk in rest {
                    bytes.extend_from_slice(&chunk?);
                }
                document(&mut bytes.as_slice(), 0)
            }
        },
        None => Err(Fallback),
    }
}

/// [`load_lean`] for any [`Purpose`]. `kept` is ignored for `pin`.
pub fn load_lean_for(
    origin: &str,
    first: Vec<u8>,
    rest: impl Iterator<Item = Result<Vec<u8>, Fallback>> + Send,
    kept: Option<(&str, bool)>,
    purpose: Purpose,
    limits: Limits,
) -> Result<LeanFor, Fallback> {
    load_lean_with(origin, first, rest, None, kept, purpose, limits, Ok)
}

/// [`load_lean_for`], given also the whole input read by position (`whole`: the file,
/// or stdin's bytes), which a document is read from: its head, then its tail, then its
/// records in chunks (see [`crate::document`]), never all at once. Without it, a document's
/// chunks are put together in memory first.
#[allow(clippy::too_many_arguments)]
pub fn load_lean_with<'w, R>(
    origin: &str,
    first: Vec<u8>,
    rest: impl Iterator<Item = Result<Vec<u8>, Fallback>> + Send,
    whole: Option<&mut (dyn Positional<'w> + 'w)>,
    kept: Option<(&str, bool)>,
    purpose: Purpose,
    limits: Limits,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Result<R, Fallback> {
    let mut first = first;
    let bom = first.starts_with(BOM);
    if bom {
        first.drain(..BOM.len());
    }
    let pin = matches!(purpose, Purpose::Pin(_) | Purpose::PinBudget(_));
    let owned_kept = match kept {
        _ if pin => KeptIds::Owned(Vec::new()),
        Some((text, from_file)) if !kept_is_json(text) => {
            let sep = if from_file { '\n' } else { ',' };
            KeptIds::Plain(text.trim_start_matches('\u{feff}'), sep)
        }
        Some((text, from_file)) => {
            KeptIds::Owned(kept_from_flag("--kept", text, from_file).map_err(|_| Fallback)?)
        }
        None => KeptIds::None,
    };
    match crate::stream::is_document(&first) {
        Some(false) => {
            let ids = owned_kept.ids().ok_or(Fallback)?;
            let plan = purpose.plan(origin, ids, purpose.scope(None, None)?, limits);
            let batches = std::iter::once(Ok(first))
                .chain(rest)
                .map(|chunk| chunk.map(Batch::Lines));
            crate::stream::load(&plan, batches, |store, compaction, budget| {
                let input = Input {
                    store,
                    kept: None,
                    action: None,
                    tools: None,
                };
                then(purpose.lean_for(input, compaction, budget))
            })?
        }
        Some(true) => match whole {
            Some(whole) => {
                // Read by position from here on: the chunks (and their carry) go.
                drop(rest);
                let start = if bom { BOM.len() as u64 } else { 0 };
                lean_document(origin, whole, start, &owned_kept, purpose, limits, then)
            }
            None => {
                let mut bytes = first;
                for chunk in rest {
                    bytes.extend_from_slice(&chunk?);
                }
                let src = &mut bytes.as_slice();
                lean_document(origin, src, 0, &owned_kept, purpose, limits, then)
            }
        },
        None => Err(Fallback),
    }
}

impl Purpose {
    /// What a lean load for this purpose gives: the action (`check`: the flag's, else
    /// the document's) or the tools (the flag's, else as [`Input::tools_or_named`]).
    fn lean_for(
        self,
        input: Input,
        compaction: Compaction,
        budget: Option<crate::stream::Budget>,
    ) -> LeanFor {
        let (action, tools) = match self {
            Purpose::Check(a) => (a.or_else(|| input.action.clone()), Vec::new()),
            Purpose::Precheck(t) | Purpose::Pin(t) | Purpose::PinBudget(t) => {
                (None, t.unwrap_or_else(|| input.tools_or_named()))
            }
        };
        LeanFor {
            input,
            compaction,
            action,
            tools,
            budget,
        }
    }

    /// The tools a plan holds policies and effects for (`None`: every one), given the
    /// document's action and tools.
    fn scope(
        &self,
        doc_action: Option<&Action>,
        doc_tools: Option<&Vec<Tool>>,
    ) -> Result<Option<Vec<String>>, Fallback> {
        match self {
            Purpose::Check(a) => a
                .as_ref()
                .or(doc_action)
                .map(|a| Some(vec![a.tool.clone()]))
                .ok_or(Fallback),
            Purpose::Precheck(t) | Purpose::Pin(t) | Purpose::PinBudget(t) => Ok(t
                .as_ref()
                .or(doc_tools)
                .map(|ts| ts.iter().map(|t| t.name.clone()).collect())),
        }
    }

    /// The plan of a lean load for this purpose.
    fn plan<'a>(
        &self,
        origin: &str,
        ids: impl IntoIterator<Item = &'a str>,
        tools: Option<Vec<String>>,
        limits: Limits,
    ) -> Plan<'a> {
        let plan = Plan::new(origin, ids, tools, limits);
        match self {
            Purpose::PinBudget(_) => plan.for_pin().counting_tokens(),
            Purpose::Pin(_) => plan.for_pin(),
            Purpose::Check(_) | Purpose::Precheck(_) => plan,
        }
    }
}

/// The document branch of [`load_lean_with`]: a document read from `src`, its JSON
/// starting at `start`.
fn lean_document<R>(
    origin: &str,
    src: &mut dyn Positional<'_>,
    start: u64,
    owned_kept: &KeptIds<'_>,
    purpose: Purpose,
    limits: Limits,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Result<R, Fallback> {
    let mut layout = crate::document::layout(src, start)?;
    // The exact path reads these whatever the flags say, so they must be valid;
    // and it refuses an unknown key or one given twice. (Each value is let go once read.)
    let (mut doc_kept, mut doc_action, mut doc_tools) = (None, None, None);
    let mut seen = std::collections::BTreeSet::new();
    for (key, value) in std::mem::take(&mut layout.keys) {
        match (key.as_str(), value) {
            ("kept", Member::Kept(ids)) => doc_kept = Some(ids),
            ("action", Member::Value(v)) => {
                doc_action = Some(Action::from_json(&v).map_err(|_| Fallback)?);
            }
            ("tools", Member::Value(v)) => {
                doc_tools = Some(Tool::list_from_json(&v).map_err(|_| Fallback)?);
            }
            ("meta", _) => {}
            _ => return Err(Fallback),
        }
        if !seen.insert(key) {
            return Err(Fallback);
        }
    }
    let tools = purpose.scope(doc_action.as_ref(), doc_tools.as_ref())?;
    if owned_kept.ids().is_none() && doc_kept.is_none() {
        return Err(Fallback);
    }
    let ids: Box<dyn Iterator<Item = &str>> = match owned_kept.ids() {
        Some(ids) => ids,
        None => Box::new(doc_kept.iter().flatten().map(String::as_str)),
    };
    let plan = purpose.plan(origin, ids, tools, limits);
    crate::stream::load(
        &plan,
        crate::document::spans(src, &layout),
        |store, compaction, budget| {
            // The plan reads the document's kept ids: the input holds none (as for JSON
            // Lines), the compaction is what they were read for.
            let input = Input {
                store,
                kept: None,
                action: doc_action,
                tools: doc_tools,
            };
            then(purpose.lean_for(input, compaction, budget))
        },
    )?
}

/// Kept ids from a flag, read straight from its text where that is plain.
enum KeptIds<'a> {
    None,
    /// [`kept_from_flag`]'s plain form (ids per line, or comma separated): its text with
    /// any BOM removed, and the separator.
    Plain(&'a str, char),
    Owned(Vec<String>),
}

impl KeptIds<'_> {
    fn ids(&self) -> Option<Box<dyn Iterator<Item = &str> + '_>> {
        match self {
            KeptIds::None => None,
            KeptIds::Plain(text, sep) => Some(Box::new(PlainIds {
                ids: text.split(*sep),
                // One id per separator at most, plus one: an upper bound the plan sizes
                // its index by (blank entries are passed over).
                most: text.bytes().filter(|&b| char::from(b) == *sep).count() + 1,
            })),
            KeptIds::Owned(v) => Some(Box::new(v.iter().map(String::as_str))),
        }
    }
}

/// The ids of a plain `--kept` text, trimmed, blanks passed over; `most` bounds how many
/// are left.
struct PlainIds<'a> {
    ids: std::str::Split<'a, char>,
    most: usize,
}

impl<'a> Iterator for PlainIds<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            let id = self.ids.next()?.trim();
            self.most = self.most.saturating_sub(1);
            if !id.is_empty() {
                return Some(id);
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.most))
    }
}

fn kept_is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('[')
}

/// Reads kept ids from a JSON array of strings.
pub fn kept_from_json(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err("must be an array of record ids".into());
    };
    items
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!(
                "expected a record id string, found {}",
                crate::report::json_text(other)
            )),
        })
        .collect()
}

/// Reads `--kept`: inline `a,b,c`, or the contents of an `@FILE` (a JSON array, or one
/// id per line). An empty inline value keeps nothing.
pub fn kept_from_flag(
    origin: &str,
    text: &str,
    from_file: bool,
) -> Result<Vec<String>, InputError> {
    let trimmed = text.trim_start_matches('\u{feff}');
    if trimmed.trim_start().starts_with('[') {
        let v = json::parse(trimmed.as_bytes()).map_err(|e| InputError::syntax(origin, e, 0))?;
        return kept_from_json(&v).map_err(|m| InputError::at(origin, "--kept", m));
    }
    let sep = if from_file { '\n' } else { ',' };
    Ok(trimmed
        .split(sep)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect())
}

/// Reads `--action`: a JSON object, inline or from a file.
pub fn action_from_flag(origin: &str, text: &str) -> Result<Action, InputError> {
    let v = json::parse(text.trim_start_matches('\u{feff}').as_bytes())
        .map_err(|e| InputError::syntax(origin, e, 0))?;
    Action::from_json(&v).map_err(|m| InputError::at(origin, "--action", m))
}

/// Reads `--tools`: inline names `a,b`, or a JSON array (inline or from a file).
pub fn tools_from_flag(origin: &str, text: &str) -> Result<Vec<Tool>, InputError> {
    let trimmed = text.trim_start_matches('\u{feff}');
    let value = if trimmed.trim_start().starts_with('[') {
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
    Tool::list_from_json(&value).map_err(|m| InputError::at(origin, "--tools", m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::Compaction;

    fn load_str(text: &str) -> Result<Input, InputError> {
        load("in.json", text.as_bytes(), Limits::default())
    }

    #[test]
    fn forms_are_told_apart_by_the_first_value() {
        let doc =
            load_str(r#"{"records":[{"id":"a","seq":1,"kind":"chatter"}],"kept":["a"]}"#).unwrap();
        assert_eq!(doc.store.len(), 1);
        assert_eq!(doc.kept, Some(vec!["a".to_string()]));
        let stream = load_str("{\"id\":\"a\",\"seq\":2,\"kind\":\"chatter\"}\n\n{\"id\":\"b\",\"seq\":1,\"kind\":\"chatter\"}\n").unwrap();
        assert_eq!(stream.store.len(), 2);
        assert_eq!(stream.store.get(0).unwrap().id, "b");
    }

    #[test]
    fn stream_errors_name_the_line() {
        let err = load_str("{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}\n{\"id\":\"b\",\n")
            .unwrap_err();
        assert!(err.to_string().starts_with("in.json:2:"), "{err}");
        let err = load_str("{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}\n\n[1]\n").unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn empty_and_bom_inputs() {
        assert!(load_str("").is_err());
        assert!(load_str(" \n ").is_err());
        assert!(load("x", b"\xEF\xBB\xBF{\"records\":[]}", Limits::default()).is_ok());
    }

    #[test]
    fn unknown_document_keys_and_trailing_data_are_refused() {
        assert!(load_str(r#"{"records":[],"kpet":[]}"#).is_err());
        let err = load_str("{\"records\":[]}\n{}").unwrap_err();
        assert!(err.to_string().starts_with("in.json:2:"), "{err}");
    }

    #[test]
    fn kept_flag_forms() {
        assert_eq!(
            kept_from_flag("--kept", "a, b,,c", false).unwrap(),
            ["a", "b", "c"]
        );
        assert_eq!(
            kept_from_flag("k.txt", "a\nb\r\n\n", true).unwrap(),
            ["a", "b"]
        );
        assert_eq!(kept_from_flag("k.json", "[\"a\"]", true).unwrap(), ["a"]);
        assert!(kept_from_flag("k.json", "[1]", true).is_err());
        assert!(kept_from_flag("--kept", "", false).unwrap().is_empty());
    }

    fn lean(text: &str, kept: Option<&str>, action: Option<&str>) -> Result<Lean, Fallback> {
        // Three-byte chunks cut lines anywhere but at line ends only, as the CLI's do.
        let bytes = text.as_bytes();
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        let mut start = 0;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'\n' && i + 1 - start >= 3 {
                chunks.push(bytes[start..=i].to_vec());
                start = i + 1;
            }
        }
        chunks.push(bytes[start..].to_vec());
        let mut chunks = chunks.into_iter().filter(|c| !c.is_empty());
        let first = chunks.next().unwrap_or_default();
        let action = action.map(|a| action_from_flag("--action", a).unwrap());
        load_lean(
            "in.jsonl",
            first,
            chunks.map(Ok),
            kept.map(|k| (k, false)),
            action,
            Limits::default(),
        )
    }

    fn exact_report(text: &str, kept: Option<&str>, action: &str) -> Vec<u8> {
        let input = load_str(text).unwrap();
        let kept = match kept {
            Some(k) => kept_from_flag("--kept", k, false).unwrap(),
            None => input.kept.clone().unwrap(),
        };
        let c = Compaction::new(
            &input.store,
            crate::compaction::Retention::Given,
            Some(&kept),
            "in.json",
        )
        .unwrap();
        let a = action_from_flag("--action", action).unwrap();
        let outcome = crate::gate::check(&input.store, &c, &a, Default::default());
        crate::report::Report::check(&a, &c, outcome).render(crate::report::Format::Json)
    }

    fn lean_report(l: &Lean) -> Vec<u8> {
        let outcome =
            crate::gate::check(&l.input.store, &l.compaction, &l.action, Default::default());
        crate::report::Report::check(&l.action, &l.compaction, outcome)
            .render(crate::report::Format::Json)
    }

    const STORE: &str = concat!(
        "{\"id\":\"c1\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"hello \\t there\"}\n",
        "{\"id\":\"f1\",\"seq\":2,\"kind\":\"fact\",\"field\":\"limit\",\"value\":100}\n",
        "{\"id\":\"p1\",\"seq\":3,\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{\"field\":\"amount\",\"op\":\"gt\",\"value\":{\"x\":1}},\"effect\":\"deny\"}\n",
        "{\"id\":\"p2\",\"seq\":4,\"kind\":\"policy\",\"scope\":\"other\",\"predicate\":{\"all\":[]},\"effect\":\"deny\"}\n",
        "\n",
        "{\"id\":\"f2\",\"seq\":5,\"kind\":\"fact\",\"field\":\"limit\",\"value\":50,\"supersedes\":\"f1\",\"depends_on\":[\"p1\"]}\n",
        "{\"id\":\"p3\",\"seq\":6,\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{\"field\":\"amount\",\"op\":\"gt\",\"value\":\"limit\"},\"effect\":\"require_approval\",\"depends_on\":[\"f2\"]}\n",
        "{\"id\":\"s1\",\"seq\":7,\"kind\":\"summary\",\"text\":\"earlier\"}\n",
        "{\"id\":\"e1\",\"seq\":8,\"kind\":\"effect\",\"tool\":\"pay\",\"match\":{\"amount\":5}}\n",
        "{\"id\":\"c2\",\"seq\":9,\"kind\":\"chatter\",\"meta\":{\"a\":[1,2]}}\n",
        "{\"id\":\"c\\u0033\",\"seq\":10,\"kind\":\"chatter\",\"tokens\":4}\n",
    );

    #[test]
    fn lean_load_gives_the_exact_report() {
        let action = r#"{"tool":"pay","params":{"amount":5}}"#;
        for kept in ["c1,p3,c2,c3", "f1,p1,s1", "", "c3,e1,f2,p3,c1"] {
            let l = lean(STORE, Some(kept), Some(action)).unwrap();
            assert_eq!(
                lean_report(&l),
                exact_report(STORE, Some(kept), action),
                "kept {kept}"
            );
            assert_eq!(l.compaction.records(), 10);
        }
    }

    #[test]
    fn facts_whose_field_names_look_alike_stay_on_the_lean_path() {
        // Regression: `field_1181` and `field_1971` shared an id hash, and the load fell
        // back to the exact path (same report, seconds slower on a large store).
        let store = concat!(
            "{\"id\":\"record_0000001\",\"seq\":1,\"kind\":\"fact\",\"field\":\"field_1181\",\"value\":1}\n",
            "{\"id\":\"record_0000002\",\"seq\":2,\"kind\":\"fact\",\"field\":\"field_1971\",\"value\":2}\n",
            "{\"id\":\"record_0000003\",\"seq\":3,\"kind\":\"chatter\"}\n",
        );
        let action = r#"{"tool":"pay","params":{"amount":5}}"#;
        let l = lean(store, Some("record_0000003"), Some(action)).unwrap();
        assert_eq!(
            lean_report(&l),
            exact_report(store, Some("record_0000003"), action)
        );
    }

    #[test]
    fn a_fact_superseding_the_last_one_met_is_linked_only_when_that_is_earlier() {
        // f1 is met first but has the later seq: f2 cannot supersede it, whatever the
        // input order, and the lean load must not take the link on trust.
        let action = r#"{"tool":"pay","params":{"amount":5}}"#;
        let bad = concat!(
            "{\"id\":\"f1\",\"seq\":2,\"kind\":\"fact\",\"field\":\"x\",\"value\":1}\n",
            "{\"id\":\"f2\",\"seq\":1,\"kind\":\"fact\",\"field\":\"x\",\"value\":2,\"supersedes\":\"f1\"}\n",
        );
        assert!(load_str(bad).is_err());
        assert!(lean(bad, Some("f1"), Some(action)).is_err());
        // g2 names f2, the fact met just before it, but of another field: refused too.
        let mixed = concat!(
            "{\"id\":\"f1\",\"seq\":1,\"kind\":\"fact\",\"field\":\"x\",\"value\":1}\n",
            "{\"id\":\"g1\",\"seq\":2,\"kind\":\"fact\",\"field\":\"y\",\"value\":1}\n",
            "{\"id\":\"f2\",\"seq\":3,\"kind\":\"fact\",\"field\":\"x\",\"value\":2,\"supersedes\":\"f1\"}\n",
            "{\"id\":\"g2\",\"seq\":4,\"kind\":\"fact\",\"field\":\"y\",\"value\":2,\"supersedes\":\"f2\"}\n",
        );
        assert!(load_str(mixed).is_err());
        assert!(lean(mixed, Some("f1"), Some(action)).is_err());
        // Without g2's link, f2's (past a fact of another field) holds.
        let good = mixed.replace(",\"supersedes\":\"f2\"}", "}");
        let l = lean(&good, Some("f1"), Some(action)).unwrap();
        assert_eq!(lean_report(&l), exact_report(&good, Some("f1"), action));
    }

    fn lean_for(text: &str, kept: Option<&str>, purpose: Purpose) -> Result<LeanFor, Fallback> {
        let bytes = text.as_bytes();
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        let mut start = 0;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'\n' && i + 1 - start >= 3 {
                chunks.push(bytes[start..=i].to_vec());
                start = i + 1;
            }
        }
        chunks.push(bytes[start..].to_vec());
        let mut chunks = chunks.into_iter().filter(|c| !c.is_empty());
        let first = chunks.next().unwrap_or_default();
        load_lean_for(
            "in.jsonl",
            first,
            chunks.map(Ok),
            kept.map(|k| (k, false)),
            purpose,
            Limits::default(),
        )
    }

    fn tools_of(names: Option<&str>) -> Option<Vec<Tool>> {
        names.map(|n| tools_from_flag("--tools", n).unwrap())
    }

    #[test]
    fn lean_precheck_gives_the_exact_report() {
        let options = crate::precheck::PrecheckOptions::default();
        for tools in [Some("pay"), Some("other,pay"), Some("nothing"), None] {
            for kept in ["c1,p3,c2,c3", "f1,p1,s1", "", "c3,e1,f2,p3,c1"] {
                let l = lean_for(STORE, Some(kept), Purpose::Precheck(tools_of(tools))).unwrap();
                let lean =
                    crate::precheck::precheck(&l.input.store, &l.compaction, &l.tools, options);
                let lean = crate::report::Report::precheck(&l.tools, &l.compaction, lean)
                    .render(crate::report::Format::Json);
                let input = load_str(STORE).unwrap();
                let ids = kept_from_flag("--kept", kept, false).unwrap();
                let c = Compaction::new(
                    &input.store,
                    crate::compaction::Retention::Given,
                    Some(&ids),
                    "in.json",
                )
                .unwrap();
                let t = tools_of(tools).unwrap_or_else(|| input.tools_or_named());
                let exact = crate::precheck::precheck(&input.store, &c, &t, options);
                let exact = crate::report::Report::precheck(&t, &c, exact)
                    .render(crate::report::Format::Json);
                assert_eq!(
                    String::from_utf8(lean).unwrap(),
                    String::from_utf8(exact).unwrap(),
                    "tools {tools:?} kept {kept}"
                );
            }
        }
    }

    #[test]
    fn lean_pin_gives_the_exact_report() {
        // A chain of derivations: the pinned rule p3 needs f2, which needs p1.
        let store = format!(
            "{STORE}{}\n{}\n",
            r#"{"id":"f3","seq":20,"kind":"fact","field":"other","value":1,"depends_on":["p2"]}"#,
            r#"{"id":"p4","seq":21,"kind":"policy","scope":"pa*","predicate":{"field":"other","op":"eq","value":1},"effect":"deny","depends_on":["f3"]}"#
        );
        for tools in [
            Some("pay"),
            Some("p*"),
            Some("other"),
            Some("nothing"),
            None,
        ] {
            let l = lean_for(&store, None, Purpose::Pin(tools_of(tools))).unwrap();
            let lean = crate::pin::report(&l.input.store, &l.tools, None, 64)
                .render(crate::report::Format::Json);
            let input = load_str(&store).unwrap();
            let t = tools_of(tools).unwrap_or_else(|| input.tools_or_named());
            let exact =
                crate::pin::report(&input.store, &t, None, 64).render(crate::report::Format::Json);
            assert_eq!(
                String::from_utf8(lean).unwrap(),
                String::from_utf8(exact).unwrap(),
                "tools {tools:?}"
            );
        }
    }

    #[test]
    fn lean_store_holds_only_what_a_check_reads() {
        let l = lean(STORE, Some("c1"), Some(r#"{"tool":"pay"}"#)).unwrap();
        let held: Vec<&str> = l
            .input
            .store
            .records()
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        // p2 is out of scope; f1 and f2 are facts of `limit`, which no held policy reads
        // (f1 is not even the newest); chatter is counted.
        assert_eq!(held, ["p1", "p3", "s1", "e1"]);
        assert_eq!(l.input.store.total(), 10);
        assert_eq!(
            l.input.store.named_tools().into_iter().collect::<Vec<_>>(),
            ["other", "pay"]
        );
    }

    #[test]
    fn lean_store_holds_the_newest_fact_of_a_field_a_held_policy_reads() {
        let store = STORE.replace(
            r#""predicate":{"field":"amount","op":"gt","value":"limit"}"#,
            r#""predicate":{"field":"limit","op":"gt","value":1}"#,
        );
        let l = lean(&store, Some("c1"), Some(r#"{"tool":"pay"}"#)).unwrap();
        let held: Vec<&str> = l
            .input
            .store
            .records()
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(held, ["p1", "f2", "p3", "s1", "e1"]);
        let action = r#"{"tool":"pay","params":{"amount":5}}"#;
        let l = lean(&store, Some("c1"), Some(action)).unwrap();
        assert_eq!(lean_report(&l), exact_report(&store, Some("c1"), action));
    }

    #[test]
    fn lean_load_of_a_document_gives_the_exact_report() {
        let records: Vec<&str> = STORE.lines().filter(|l| !l.is_empty()).collect();
        let doc = format!(
            "{{\"records\":[\n{}\n],\"action\":{{\"tool\":\"pay\",\"params\":{{\"amount\":7}}}},\"kept\":[\"p1\",\"c3\"]}}",
            records.join(",\n")
        );
        let l = lean(&doc, None, None).unwrap();
        let exact = exact_report(&doc, None, r#"{"tool":"pay","params":{"amount":7}}"#);
        assert_eq!(lean_report(&l), exact);
    }

    #[test]
    fn lean_load_falls_back_where_the_exact_path_must_speak() {
        let action = Some(r#"{"tool":"pay"}"#);
        let with = |line: &str| format!("{STORE}{line}\n");
        for (what, text, kept) in [
            (
                "duplicate key in chatter",
                with(r#"{"id":"c9","seq":99,"kind":"chatter","text":"a","text":"b"}"#),
                "c1",
            ),
            (
                "nested duplicate key in chatter",
                with(r#"{"id":"c9","seq":99,"kind":"chatter","meta":{"k":1,"k":1}}"#),
                "c1",
            ),
            (
                "duplicate id",
                with(r#"{"id":"c1","seq":99,"kind":"chatter"}"#),
                "c1",
            ),
            (
                "duplicate seq",
                with(r#"{"id":"c9","seq":9,"kind":"chatter"}"#),
                "c1",
            ),
            (
                "dangling supersedes",
                with(
                    r#"{"id":"f9","seq":99,"kind":"fact","field":"limit","value":1,"supersedes":"c1"}"#,
                ),
                "c1",
            ),
            (
                "depends_on a chatter record",
                with(
                    r#"{"id":"f9","seq":99,"kind":"fact","field":"x","value":1,"depends_on":["c1"]}"#,
                ),
                "c1",
            ),
            ("syntax error", with(r#"{"id":"c9","#), "c1"),
            (
                "an older fact with an unknown key",
                with(concat!(
                    r#"{"id":"f8","seq":98,"kind":"fact","field":"z","value":1,"valeu":2}"#,
                    "\n",
                    r#"{"id":"f9","seq":99,"kind":"fact","field":"z","value":1}"#
                )),
                "c1",
            ),
            (
                "an older fact with a duplicate key in its value",
                with(concat!(
                    r#"{"id":"f8","seq":98,"kind":"fact","field":"z","value":{"a":1,"a":2}}"#,
                    "\n",
                    r#"{"id":"f9","seq":99,"kind":"fact","field":"z","value":1}"#
                )),
                "c1",
            ),
            ("kept id naming nothing", STORE.to_string(), "c1,ghost"),
            (
                "duplicate key in a summary",
                with(r#"{"id":"s9","seq":99,"kind":"summary","text":"a","text":"a"}"#),
                "c1",
            ),
            (
                "raw control character in a summary",
                with("{\"id\":\"s9\",\"seq\":99,\"kind\":\"summary\",\"text\":\"a\u{1}\"}"),
                "c1",
            ),
            (
                "leading zero in a summary's seq",
                with(r#"{"id":"s9","seq":099,"kind":"summary"}"#),
                "c1",
            ),
            (
                "trailing comma in a summary",
                with(r#"{"id":"s9","seq":99,"kind":"summary",}"#),
                "c1",
            ),
            (
                "summary with a duplicate id",
                with(r#"{"id":"c1","seq":99,"kind":"summary"}"#),
                "c1",
            ),
        ] {
            assert!(lean(&text, Some(kept), action).is_err(), "{what}");
        }
        assert!(lean(STORE, None, action).is_err(), "no kept ids");
        assert!(lean(STORE, Some("c1"), None).is_err(), "no action");
    }

    #[test]
    fn summaries_read_by_the_simple_scan_give_the_exact_report() {
        // Kept and dropped, with and without tokens, escapes that are canonical as written
        // and ones that are not (`\/`, `\u`), other unevaluable kinds, odd spacing.
        let store = concat!(
            "{\"id\":\"c1\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"x\"}\n",
            "{\"id\":\"s1\",\"seq\":2,\"kind\":\"summary\",\"text\":\"tab\\there \\\\ \\\"q\\\" d\u{e9}j\u{e0}\"}\n",
            "{\"id\":\"s2\",\"seq\":3,\"kind\":\"summary\",\"text\":\"a\\/b\",\"tokens\":9}\n",
            "{\"id\":\"s3\",\"seq\":4,\"kind\":\"summary\",\"text\":\"\\u00e9\\n\"}\n",
            " { \"tokens\" : 0 , \"kind\" : \"note\" , \"seq\" : 5 , \"id\" : \"n1\" }\r\n",
            "{\"id\":\"s4\",\"seq\":6,\"kind\":\"summary\"}\n",
            "{\"id\":\"s5\",\"seq\":7,\"kind\":\"summary\",\"text\":\"\",\"meta\":{\"k\":1}}\n",
            "{\"id\":\"p1\",\"seq\":8,\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{\"field\":\"amount\",\"op\":\"gt\",\"value\":1},\"effect\":\"deny\",\"depends_on\":[\"s2\"]}\n",
        );
        let action = r#"{"tool":"pay","params":{"amount":5}}"#;
        for kept in ["c1", "s1,s2,s3,n1,s4,s5", "s2,n1", "c1,s1,s3,s5,p1"] {
            let l = lean(store, Some(kept), Some(action)).unwrap();
            assert_eq!(
                String::from_utf8(lean_report(&l)).unwrap(),
                String::from_utf8(exact_report(store, Some(kept), action)).unwrap(),
                "kept {kept}"
            );
            // The records it holds are the exact loader's (digests aside: zeros when not
            // kept), text and tokens included.
            let exact = load_str(store).unwrap();
            let mut held = 0;
            for r in l.input.store.records() {
                let mut e = exact
                    .store
                    .records()
                    .iter()
                    .find(|e| e.id == r.id)
                    .unwrap()
                    .clone();
                if r.digest == [0; 32] {
                    e.digest = [0; 32];
                }
                assert_eq!(*r, e, "kept {kept}");
                held += usize::from(matches!(r.kind, crate::record::Kind::Unevaluable(_)));
            }
            let dropped = ["s1", "s2", "s3", "n1", "s4", "s5"];
            let dropped = dropped
                .iter()
                .filter(|id| !kept.split(',').any(|k| k == **id));
            assert_eq!(held, dropped.count(), "kept {kept}");
        }
    }

    #[test]
    fn duplicate_keys_inside_chatter_keep_their_exact_position() {
        let text = format!(
            "{STORE}{}\n",
            r#"{"id":"c9","seq":99,"kind":"chatter","text":"a","text":"b"}"#
        );
        let err = load_str(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "in.json:12:59: duplicate key `text` in one object"
        );
    }
}
