//! The one loader entry. A command says what it needs (a [`Request`]: the input, the
//! kept ids, the retention, the limits; and the action, the call or the tools it judges) and [`load_check`] decides how to read it, as [`load_precheck`] does for
//! a precheck, [`pin_report`] for `pin` and [`load_store`] for a hook adapter. A large input (1 MiB or more) with retention
//! `given` is read by the lean loader ([`crate::stream`]) for that command alone: in
//! chunks on two threads, holding only the records the command can consult. Whatever the
//! lean loader cannot prove fine goes to the exact loader ([`load`]), which reads every
//! record and reports exactly what it always did. Both give the same report, or the same
//! error; the caller never learns which one ran.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::lean::{KeptIds, LeanFor, Purpose, lean_digests_from, load_lean_from};
use super::*;
use crate::compaction::Retention;
use crate::pin::PinOptions;
use crate::record::glob_match;
use crate::report::{CompactionSummary, Report};
use crate::view::{Haystack, Sought};

/// A flag's value as read: where it came from (the flag, or the file after `@`), its
/// text, and whether it came from a file. An `@FILE` may be a pipe, which can be read
/// only once, so each flag is read once and its text passed on.
pub type FlagText = (String, String, bool);

/// Where an input is.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A file, read by the loader (`-`: standard input).
    Path(&'a str),
    /// The input's bytes, already read (standard input, which can be read only once).
    Bytes(&'a [u8]),
}

impl<'a> Source<'a> {
    /// The path the loaders read (`-` for bytes already read) and those bytes, if any.
    fn parts(self) -> (&'a str, Option<&'a [u8]>) {
        match self {
            Source::Path(path) => (path, None),
            Source::Bytes(bytes) => ("-", Some(bytes)),
        }
    }
}

/// An input and how its kept set is obtained: what every command hands the loader.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The input's name in messages (a path, `<stdin>`).
    pub origin: &'a str,
    /// Where the input is.
    pub source: Source<'a>,
    /// The `--kept` flag as read; `None`: the document's `kept`.
    pub kept: Option<&'a FlagText>,
    /// How the kept set is obtained.
    pub retention: Retention,
    /// The input limits.
    pub limits: Limits,
}

/// An input loaded for a command, with its kept set.
#[derive(Debug)]
pub struct Loaded {
    /// The store and the document's `action` and `tools`. A lean load holds only the
    /// records the command can consult, and not the document's `kept`: the compaction
    /// is what they were read for.
    pub input: Input,
    /// The kept set under the request's retention.
    pub compaction: Compaction,
}

/// Loads the input for `check` of one action (the `--action` flag's as read, else the
/// document's) and hands it and the action to `judge`, which returns what the command
/// makes of them (a report, its rendered bytes). On the lean path `judge` runs while the
/// input's last checks do, and runs again on the exact load if those fail: it must only
/// compute. Errors are the exact loader's, in its order: the input, the kept ids, the
/// compaction, then the action.
pub fn load_check<R>(
    request: &Request<'_>,
    action: Option<&FlagText>,
    mut judge: impl FnMut(Loaded, &Action) -> R,
) -> Result<R, InputError> {
    let parsed = action
        .map(|(o, text, _)| action_from_flag(o, text))
        .transpose()
        .ok();
    let lean = parsed.and_then(|parsed| {
        lean_check(request, parsed, |lean| {
            let action = lean.action.ok_or(Fallback)?;
            let loaded = Loaded {
                input: lean.input,
                compaction: lean.compaction,
            };
            Ok(judge(loaded, &action))
        })
    });
    if let Some(r) = lean {
        return Ok(r);
    }
    let loaded = load_exact(request)?;
    let action = action_of(&loaded.input, action, request.origin)?;
    Ok(judge(loaded, &action))
}

/// [`load_check`] for `check --precheck` of the tools: the `--tools` flag's as read (or
/// why it could not be), else the document's `tools`, else every tool the records name.
pub fn load_precheck<R>(
    request: &Request<'_>,
    tools: Option<&Result<FlagText, InputError>>,
    mut judge: impl FnMut(Loaded, &[Tool]) -> R,
) -> Result<R, InputError> {
    let purpose = lean_tools(tools).map(Purpose::Precheck);
    let lean = lean_given(request, purpose, |lean| {
        // No tools: the exact path says whether that is a list given empty.
        if lean.tools.is_empty() {
            return Err(Fallback);
        }
        let loaded = Loaded {
            input: lean.input,
            compaction: lean.compaction,
        };
        Ok(judge(loaded, &lean.tools))
    });
    if let Some(r) = lean {
        return Ok(r);
    }
    let loaded = load_exact(request)?;
    let tools = tools_of(&loaded.input, tools, request.origin)?;
    Ok(judge(loaded, &tools))
}

/// Loads every record of the input, with its kept set.
fn load_exact(request: &Request<'_>) -> Result<Loaded, InputError> {
    let input = read_exact(request)?;
    let compaction = exact_compaction(request, &input)?;
    Ok(Loaded { input, compaction })
}

/// Loads every record of the input, and its kept set when it has one (the `--kept`
/// flag's ids or the document's `kept`): for `validate`, which reads every record and
/// looks at the kept ones only when it is told which they are.
pub fn load_all(request: &Request<'_>) -> Result<(Input, Option<Compaction>), InputError> {
    let input = read_exact(request)?;
    if request.kept.is_none() && input.kept.is_none() {
        return Ok((input, None));
    }
    let compaction = exact_compaction(request, &input)?;
    Ok((input, Some(compaction)))
}

/// A store loaded for a hook adapter, which judges the payload's call (or, for
/// PreCompact, what to keep) itself.
#[derive(Debug)]
pub struct Stored {
    /// The store and the document's `kept`, `action` and `tools` (a lean load: only the
    /// records the call can consult, and no `kept`).
    pub input: Input,
    /// The `--kept` flag's ids, read (the exact load).
    pub kept: Option<Vec<String>>,
    /// The kept set for the call (the lean load, which holds only the records the call
    /// can consult, so the ids cannot be matched against it again); `None`: compute it
    /// from `kept` and the retention.
    pub compaction: Option<Compaction>,
}

/// Loads a hook's store: for the payload's `call` when there is one (the lean loader,
/// as for [`load_check`]), else every record.
pub fn load_store(request: &Request<'_>, call: Option<Action>) -> Result<Stored, InputError> {
    let lean = call.and_then(|call| {
        lean_check(request, Some(call), |lean| {
            Ok(Stored {
                input: lean.input,
                kept: None,
                compaction: Some(lean.compaction),
            })
        })
    });
    if let Some(stored) = lean {
        return Ok(stored);
    }
    let input = read_exact(request)?;
    let kept = request
        .kept
        .map(|flag| kept_of(request, &input, flag))
        .transpose()?;
    Ok(Stored {
        input,
        kept,
        compaction: None,
    })
}

/// A large JSON Lines store read lightly for transcript mode (retention
/// `transcript:H`): each record's id and text, the texts ready to be looked for in a
/// live context, and the tools the store's rules name. Which records are in view
/// depends on every record's text, and the lean loader wants its kept ids before it
/// reads: [`store_texts`] reads the texts (a caller can read the transcript meanwhile),
/// then [`StoreTexts::load_in_view`] hands the records in view to the lean loader.
pub struct StoreTexts {
    /// The store's bytes, read once for both passes (a file of up to
    /// [`source::HOLD_UP_TO`] bytes): the records in view are then those of the very
    /// bytes judged, whatever happens to the file meanwhile.
    pub(super) held: Option<crate::memory::Pages>,
    /// The file's stamp before the light pass when it is read twice (a larger file),
    /// which the lean load must find again after it: the two passes read one file.
    pub(super) stamp: Option<source::Stamp>,
    /// The ids of the records that have a text, in the store's order, one after another.
    ids: String,
    /// Where each of those ids ends in `ids`.
    id_ends: Vec<usize>,
    /// Their texts, as sought.
    sought: Sought,
    /// The tool names and globs the store's policies and effects give (`None`: one
    /// could not be read).
    named: Option<Vec<String>>,
}

/// The light pass of transcript mode over the request's input (see `texts`): `None`
/// when it is not a JSON Lines input of 1 MiB or more that the pass can read plainly,
/// and the caller loads every record ([`load_store`], [`load_check`]).
pub fn store_texts(request: &Request<'_>) -> Option<StoreTexts> {
    store_texts_holding(request, source::HOLD_UP_TO, &AtomicBool::new(false))
}

/// The light pass over a store file (see [`store_texts`]), begun on a thread of its own
/// before its texts are needed: a hook begins it before it reads its payload. Dropped
/// unused, it stops at its next line.
pub struct LightPass {
    thread: Option<std::thread::JoinHandle<Option<StoreTexts>>>,
    stop: Arc<AtomicBool>,
}

impl LightPass {
    /// Begins the light pass over the store at `path` (read under `retention`), when it
    /// is a regular file: a pipe's bytes read early would be gone for the read that
    /// counts. `None` otherwise, or when no thread could be had.
    pub fn begin(path: &str, retention: Retention, limits: Limits) -> Option<LightPass> {
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let path = path.to_string();
        let thread = std::thread::Builder::new()
            .spawn(move || {
                let request = Request {
                    origin: &path,
                    source: Source::Path(&path),
                    kept: None,
                    retention,
                    limits,
                };
                store_texts_holding(&request, source::HOLD_UP_TO, &stopped)
            })
            .ok()?;
        Some(LightPass {
            thread: Some(thread),
            stop,
        })
    }

    /// Whether its texts are ready.
    fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Runs `meanwhile` while the pass runs, then takes its texts: as
    /// [`store_texts_beside`], the pass begun already.
    pub fn beside<T>(
        self,
        meanwhile: impl FnOnce(&dyn Fn() -> bool) -> T,
    ) -> (Option<StoreTexts>, T) {
        let other = meanwhile(&|| self.is_finished());
        (self.texts(), other)
    }

    /// Its texts, once it is done, as [`store_texts`] gives them. A panic in it is raised
    /// here, where the caller's own handling of a panic (a deny, for a hook) applies.
    pub fn texts(mut self) -> Option<StoreTexts> {
        match self.thread.take()?.join() {
            Ok(texts) => texts,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for LightPass {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// [`store_texts`] on a thread of its own while `meanwhile` runs (reading the transcript,
/// say), which is told by the function it is given whether the light pass is done
/// already. `None` for the texts when the pass gave none, or when no second thread could
/// be had (a resource limit): the caller then loads every record.
pub fn store_texts_beside<T>(
    request: &Request<'_>,
    meanwhile: impl FnOnce(&dyn Fn() -> bool) -> T,
) -> (Option<StoreTexts>, T) {
    std::thread::scope(|scope| {
        let texts = std::thread::Builder::new()
            .spawn_scoped(scope, || store_texts(request))
            .ok();
        let done = || texts.as_ref().is_none_or(|t| t.is_finished());
        let other = meanwhile(&done);
        // A panic in the light pass is raised here, as if it had run on this thread.
        let texts = texts.and_then(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (texts, other)
    })
}

/// [`store_texts`], holding a file of up to `most` bytes for both passes; `None` too
/// once `stop` is set (checked at each record).
pub(crate) fn store_texts_holding(
    request: &Request<'_>,
    most: u64,
    stop: &AtomicBool,
) -> Option<StoreTexts> {
    let (path, bytes) = request.source.parts();
    let held = match bytes {
        None => source::hold(path, request.limits, most),
        Some(_) => None,
    };
    let stamp = match (bytes, &held) {
        (None, None) => Some(source::stamp(path)?),
        _ => None,
    };
    let mut ids = String::new();
    let mut id_ends = Vec::new();
    let mut sought = Sought::default();
    let whole = held.as_deref().or(bytes);
    // The texts are at most the bytes they are written in.
    if let Some(bytes) = whole {
        sought.reserve(bytes.len());
    }
    // A text written as an earlier one in the bytes held is that one's: it is not
    // decoded nor normalised again (most of a store's chatter repeats its texts).
    let mut repeats = Repeats::default();
    let mut decoded = String::new();
    let named = record_texts(path, whole, request.limits, |id, text| {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let record = id_ends.len();
        ids.push_str(id);
        id_ends.push(ids.len());
        if let (Text::Written { raw, .. }, Some(whole)) = (text, whole)
            && let Some(earlier) = repeats.earlier(whole, raw, record)
            && sought.push_same(earlier)
        {
            return Some(());
        }
        sought.push(Some(text.decoded(&mut decoded)?));
        Some(())
    })?;
    // Indexed here, on the thread of the light pass, while the live context may still
    // be being read.
    sought.prepare();
    Some(StoreTexts {
        held,
        stamp,
        ids,
        id_ends,
        sought,
        named,
    })
}

impl StoreTexts {
    /// Whether a call of `tool` may be in the gate's charge: it is among `tools` (the
    /// guarded tools; `None`: every tool is), or a rule of the store names it, or some
    /// rule's names could not be read. The store as loaded decides in the end; this only
    /// spares reading a transcript for a call the gate will not judge.
    pub fn may_guard(&self, tools: Option<&[String]>, tool: &str) -> bool {
        let names = |names: &[String]| names.iter().any(|t| glob_match(t, tool));
        match (tools, &self.named) {
            (None, _) | (_, None) => true,
            (Some(tools), Some(by_records)) => names(tools) || names(by_records),
        }
    }

    /// Loads the store for `call` with the records in view of `haystack` kept, under the
    /// request's retention (`transcript:H`). `None` when the lean loader cannot decide:
    /// the caller then loads every record and computes the kept set from the context.
    pub fn load_in_view(
        self,
        request: &Request<'_>,
        call: Action,
        haystack: &Haystack,
    ) -> Option<Stored> {
        let StoreTexts {
            held,
            stamp,
            ids,
            id_ends,
            sought,
            named: _,
        } = self;
        let in_view = sought.in_view(haystack);
        // The texts and their index are done with: let the lean load have their memory.
        drop(sought);
        // The ids of the records in view, as slices of `ids`: no string of its own each.
        let mut kept = Vec::new();
        let mut start = 0;
        for (&end, seen) in id_ends.iter().zip(in_view) {
            if seen {
                kept.push(ids.get(start..end)?);
            }
            start = end;
        }
        let (path, bytes) = request.source.parts();
        let bytes = held.as_deref().or(bytes);
        let purpose = Purpose::Check(Some(call));
        let kept = KeptIds::Listed(kept);
        let lean = load_lean_from(path, bytes, kept, purpose, request.limits, Ok).ok()?;
        // Read twice and rewritten between the passes: the texts in view may not be this
        // file's.
        if stamp.is_some() && source::stamp(path) != stamp {
            return None;
        }
        let mut compaction = lean.compaction;
        compaction.retention = request.retention;
        Some(Stored {
            input: lean.input,
            kept: None,
            compaction: Some(compaction),
        })
    }
}

/// The `pin` report (SPEC 6) of the input for the tools (the `--tools` flag's as read,
/// else the document's, else every tool the records name), with `budget` the ids to
/// keep. A large input is read by the lean loader; with a budget, in two passes: the
/// first gathers every record's tokens, the fill runs on those, and the second reads the
/// id and digest of the records kept (only in the chunks that hold one). A file that
/// changes between the passes is read again, exactly.
pub fn pin_report(
    request: &Request<'_>,
    tools: Option<&Result<FlagText, InputError>>,
    budget: Option<u64>,
    options: PinOptions,
) -> Result<Report, InputError> {
    if let Some(report) = lean_pin(request, tools, budget, options) {
        return Ok(report);
    }
    let input = read_exact(request)?;
    let tools = tools_of(&input, tools, request.origin)?;
    Ok(crate::pin::report(
        &input.store,
        &input.totals.named,
        &tools,
        budget,
        options,
    ))
}

/// A lean load for `purpose` under retention `given` (the lean loader's only one);
/// `None` for another retention, flags it cannot read (`purpose` is `None`), or when it
/// falls back.
fn lean_given<R>(
    request: &Request<'_>,
    purpose: Option<Purpose>,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Option<R> {
    if request.retention != Retention::Given {
        return None;
    }
    lean(request, request.kept, purpose?, then)
}

/// A lean `check` of `action` (`None`: the document's), under the request's retention:
/// `given`, or one that keeps the ends of the `seq` order, whose kept ids are read from
/// the input's first and last lines (see [`ends_of`]) and borne out by the load.
fn lean_check<R>(
    request: &Request<'_>,
    action: Option<Action>,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Option<R> {
    if request.retention == Retention::Given {
        return lean(request, request.kept, Purpose::Check(action), then);
    }
    // The exact loader reads a `--kept` value under any retention (and refuses a bad one).
    if request.kept.is_some() {
        return None;
    }
    let ids = ends_of(request)?;
    let kept = (
        "--kept".to_string(),
        serde_json::to_string(&ids).ok()?,
        false,
    );
    let purpose = Purpose::CheckUnder(request.retention, action);
    lean(request, Some(&kept), purpose, then)
}

/// Bytes read at each end of an input for [`ends_of`].
const ENDS_READ: usize = 1 << 18;

/// The ids of the records a retention that keeps the ends of the `seq` order would keep
/// if the input were JSON Lines in `seq` order (as a harness appends them): its first
/// `head` and last `tail` lines, each a record object with an `id` and a `seq`. Only a
/// guess, which the lean load checks against every record's `seq`; `None` when the lines
/// are not there to read (a document, a retention that keeps many).
fn ends_of(request: &Request<'_>) -> Option<Vec<String>> {
    let (head, tail) = request.retention.ends()?;
    let (start, end) = match request.source {
        Source::Bytes(bytes) => (
            bytes.get(..ENDS_READ.min(bytes.len()))?.to_vec(),
            bytes.get(bytes.len().saturating_sub(ENDS_READ)..)?.to_vec(),
        ),
        Source::Path(path) => source::ends(path, ENDS_READ)?,
    };
    let whole = |text: &[u8], at_start: bool| -> Vec<Vec<u8>> {
        let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        // A line cut by the window is not read: the last of the start, the first of the end.
        if at_start {
            lines.pop();
        } else if text.len() == ENDS_READ {
            lines.remove(0);
        }
        lines
            .into_iter()
            .filter(|l| !json::is_blank(l))
            .map(<[u8]>::to_vec)
            .collect()
    };
    let first = whole(&start, true);
    let last = whole(&end, false);
    let lines = first
        .get(..head)?
        .iter()
        .chain(last.get(last.len().checked_sub(tail)?..)?);
    lines
        .map(|line| {
            let Value::Object(record) = json::parse(line).ok()? else {
                return None;
            };
            record.get("seq")?.as_u64()?;
            Some(record.get("id")?.as_str()?.to_string())
        })
        .collect()
}

/// The `--tools` flag's tools for a lean load: `Some(None)` when it was not given,
/// `None` when it cannot be read or parsed.
fn lean_tools(flag: Option<&Result<FlagText, InputError>>) -> Option<Option<Vec<Tool>>> {
    match flag {
        Some(Ok((o, text, _))) => Some(Some(tools_from_flag(o, text).ok()?)),
        Some(Err(_)) => None,
        None => Some(None),
    }
}

/// A lean load for `purpose`, handing it to `then`; `None` when the input is too small
/// for the lean loader to pay, or it falls back.
fn lean<R>(
    request: &Request<'_>,
    kept: Option<&FlagText>,
    purpose: Purpose,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Option<R> {
    // An inline list of several ids: whether some record's id spans its commas is the
    // exact loader's to say (see `inline_kept_splits_an_id`).
    if let Some((_, text, false)) = kept
        && kept_json(text).is_none()
        && text.contains(',')
    {
        return None;
    }
    let (path, bytes) = request.source.parts();
    let kept = KeptIds::flag(kept.map(|(_, text, from_file)| (text.as_str(), *from_file))).ok()?;
    load_lean_from(path, bytes, kept, purpose, request.limits, then).ok()
}

/// The input read and loaded by the exact loader.
fn read_exact(request: &Request<'_>) -> Result<Input, InputError> {
    match request.source {
        Source::Bytes(bytes) => load(request.origin, bytes, request.limits),
        Source::Path(path) => {
            let bytes = source::read(path, "input", request.limits)?;
            load(request.origin, &bytes, request.limits)
        }
    }
}

/// The kept set of an exact load under the request's retention: the `--kept` flag's
/// ids, else the document's.
fn exact_compaction(request: &Request<'_>, input: &Input) -> Result<Compaction, InputError> {
    let (kept, origin) = match request.kept {
        Some(flag) => (Some(kept_of(request, input, flag)?), "--kept"),
        None => (input.kept.clone(), request.origin),
    };
    Compaction::new(&input.store, request.retention, kept.as_deref())
        .map_err(|e| input.kept_error(origin, e))
}

/// The ids of the `--kept` flag as read. Under retention `given`, an inline value whose
/// ids name no record but which is a file is refused: the user meant `@VALUE`.
fn kept_of(
    request: &Request<'_>,
    input: &Input,
    flag: &FlagText,
) -> Result<Vec<String>, InputError> {
    let (origin, text, from_file) = flag;
    let ids = kept_from_flag(origin, text, *from_file)?;
    kept_reads_two_ways(&input.store, text, *from_file)?;
    if request.retention == Retention::Given && !from_file {
        inline_kept_splits_an_id(&input.store, text)?;
        inline_kept_names_a_file(&input.store, &ids, text)?;
    }
    Ok(ids)
}

/// Refuses an inline `--kept` list (ids between commas) in which some record's id,
/// which has commas of its own, is spelt across commas: `--kept 'a,b'` beside records
/// `a`, `b` and `a,b` would keep `a` and `b` where the compactor kept `a,b`, and judge a
/// dropped rule kept. A JSON array or a file of ids says which.
fn inline_kept_splits_an_id(store: &Store, text: &str) -> Result<(), InputError> {
    if kept_json(text).is_some() || !text.contains(',') {
        return Ok(());
    }
    let list = format!(",{text},");
    let spans = |id: &str| id.contains(',') && list.contains(&format!(",{id},"));
    match store.records().iter().find(|r| spans(&r.id)) {
        None => Ok(()),
        Some(r) => {
            let problem = InputProblem::KeptSplitsAnId(r.id.clone());
            Err(InputError::invalid("--kept", "kept", problem))
        }
    }
}

/// Refuses a `--kept` value read as a JSON array that, read as plain ids (one per line in
/// a file, else between commas), names a record: a compactor that wrote the id `["p"]`
/// on a line of its own kept that record, and the array reading would judge `p` kept.
/// Every plain id of such a value has a `[`, `]` or `"` (the lean loader falls back when
/// a record's id has one, see [`crate::stream::Plan`]'s `kept_json`).
fn kept_reads_two_ways(store: &Store, text: &str, from_file: bool) -> Result<(), InputError> {
    if kept_json(text).is_none() {
        return Ok(());
    }
    match plain_kept_ids(text, from_file).find(|id| store.position(id).is_some()) {
        None => Ok(()),
        Some(id) => {
            let problem = InputProblem::KeptReadsTwoWays(id.to_string());
            Err(InputError::invalid("--kept", "kept", problem))
        }
    }
}

/// Refuses `--kept VALUE` (no `@`) whose ids name no record when `VALUE` is a file: the
/// user meant `@VALUE`, and the message says so rather than suggesting a record id.
fn inline_kept_names_a_file(store: &Store, ids: &[String], value: &str) -> Result<(), InputError> {
    if ids.iter().all(|id| store.position(id).is_some()) || !std::path::Path::new(value).is_file() {
        return Ok(());
    }
    let problem = InputProblem::KeptIsAFile(value.to_string());
    Err(InputError::invalid("--kept", "kept", problem))
}

/// The action to check: the `--action` flag's, else the document's.
pub fn action_of(
    input: &Input,
    flag: Option<&FlagText>,
    origin: &str,
) -> Result<Action, InputError> {
    match flag {
        Some((o, text, _)) => action_from_flag(o, text),
        None => (input.action.clone()).ok_or_else(|| {
            let problem = if input.stream {
                InputProblem::NoStreamAction
            } else {
                InputProblem::NoAction
            };
            InputError::invalid(origin, "action", problem)
        }),
    }
}

/// The tools for precheck and pin: the `--tools` flag's as read, else the document's
/// `tools`, else every tool a policy scope or an effect names exactly (SPEC 2.3). A list
/// given that names no tool (`--tools ""` from an unset variable, an empty file, `[]`)
/// is refused: precheck and pin would judge no call, and pass a compaction that drops
/// every rule.
pub fn tools_of(
    input: &Input,
    flag: Option<&Result<FlagText, InputError>>,
    origin: &str,
) -> Result<Vec<Tool>, InputError> {
    let (tools, origin, place) = match flag {
        Some(Ok((o, text, _))) => (tools_from_flag(o, text)?, o.as_str(), "tools"),
        Some(Err(e)) => return Err(e.clone()),
        None if input.tools.is_some() => (input.tools_or_named(), origin, "key `tools`"),
        None => return Ok(input.tools_or_named()),
    };
    names_a_tool(&tools, origin, place)?;
    Ok(tools)
}

/// Refuses a list of tools, given (by a flag, a caller or a document's `tools`), that
/// names no tool: precheck and pin would judge no call.
pub fn names_a_tool(tools: &[Tool], origin: &str, place: &str) -> Result<(), InputError> {
    if tools.is_empty() {
        let problem = crate::action::ToolError::Empty;
        return Err(InputError::invalid(origin, place, problem));
    }
    Ok(())
}

/// `pin` by the lean loader, when it can decide (see [`pin_report`]).
fn lean_pin(
    request: &Request<'_>,
    tools: Option<&Result<FlagText, InputError>>,
    budget: Option<u64>,
    options: PinOptions,
) -> Option<Report> {
    let tools = lean_tools(tools)?;
    let Some(budget) = budget else {
        return lean(request, None, Purpose::Pin(tools), |lean| {
            // No tools: the exact path says whether that is a list given empty.
            if lean.tools.is_empty() {
                return Err(Fallback);
            }
            Ok(crate::pin::report(
                &lean.input.store,
                &lean.input.totals.named,
                &lean.tools,
                None,
                options,
            ))
        });
    };
    // The file must not change between the two passes.
    let stamp = source::stamp;
    let (path, bytes) = request.source.parts();
    let before = match bytes {
        None => Some(stamp(path)?),
        Some(_) => None,
    };
    let lean = lean(request, None, Purpose::PinBudget(tools), Ok)?;
    if lean.tools.is_empty() {
        return None;
    }
    let store = &lean.input.store;
    let info = lean.budget.as_ref()?;
    let pins = crate::pin::pin(store, &lean.input.totals.named, &lean.tools, options);
    let pinned: Vec<u64> = pins
        .positions
        .iter()
        .filter_map(|&p| store.get(p).map(|r| r.seq))
        .collect();
    let kept = match crate::pin::fill_seqs(&info.tokens, &pinned, budget) {
        Err(over) => Err(over),
        Ok((seqs, kept_tokens)) => {
            // Held records carry their digest: the second pass reads only the others.
            let held: BTreeMap<u64, &Record> = store.records().iter().map(|r| (r.seq, r)).collect();
            let wanted: BTreeSet<u64> = seqs
                .iter()
                .copied()
                .filter(|s| !held.contains_key(s))
                .collect();
            let mut found = lean_digests_from(path, bytes, info, &wanted, request.limits).ok()?;
            if bytes.is_none() && stamp(path) != before {
                return None;
            }
            for s in &seqs {
                if let Some(r) = held.get(s) {
                    found.insert(*s, (r.id.clone(), r.digest?));
                }
            }
            let kept: Vec<(&String, &[u8; 32])> = seqs
                .iter()
                .filter_map(|s| found.get(s).map(|(id, d)| (id, d)))
                .collect();
            let total = lean.input.totals.records;
            let summary = CompactionSummary {
                records: total,
                kept: kept.len(),
                dropped: total.checked_sub(kept.len())?,
                retention: Retention::Given.to_string(),
                kept_sha256: crate::compaction::fingerprint_of(
                    kept.iter().map(|(id, d)| (id.as_str(), *d)),
                ),
            };
            Ok(crate::pin::Kept {
                ids: kept.iter().map(|(id, _)| (*id).clone()).collect(),
                compaction: summary,
                kept_tokens,
            })
        }
    };
    Some(crate::pin::assemble(
        store,
        &lean.input.totals.named,
        &lean.tools,
        Some(budget),
        pins,
        Some(kept),
    ))
}
