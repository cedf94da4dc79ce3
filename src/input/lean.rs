//! The lean loader's entry points for large inputs: a load for one command (`check`,
//! precheck, `pin`, the second pass of `pin --budget`) given its kept ids and tools up
//! front, by [`crate::stream`] over JSON Lines chunks or a document read by position.
//! [`Fallback`] sends the caller to the exact loader.

use std::borrow::Cow;

use super::*;
use crate::compaction::Retention;

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
    /// `check`, as `Check`, under a retention that keeps the ends of the `seq` order
    /// (`head_tail:K`, `recency:K`): the kept ids given are the ones it keeps as read from
    /// the input's first and last records, and the load falls back unless every record's
    /// `seq` bears them out.
    CheckUnder(Retention, Option<Action>),
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
    /// For `pin --budget`, every record's tokens (see [`lean_digests_from`]).
    pub budget: Option<crate::stream::Budget>,
}

/// The first chunk without a byte-order mark, and whether it had one.
fn without_bom(first: Cow<'_, [u8]>) -> (Cow<'_, [u8]>, bool) {
    if !first.starts_with(BOM) {
        return (first, false);
    }
    let first = match first {
        Cow::Borrowed(b) => Cow::Borrowed(b.get(BOM.len()..).unwrap_or_default()),
        Cow::Owned(mut v) => {
            v.drain(..BOM.len());
            Cow::Owned(v)
        }
    };
    (first, true)
}

/// [`load_lean_with`] of the input at `path` (`stdin`'s bytes instead, when given),
/// read in chunks or, for a document, by position, with the kept ids given (see
/// [`KeptIds::flag`] for the `--kept` flag's). An input too small for the lean loader to
/// pay, or one that cannot be opened, is [`Fallback`] too.
pub fn load_lean_from<R>(
    path: &str,
    stdin: Option<&[u8]>,
    kept: KeptIds<'_>,
    purpose: Purpose,
    limits: Limits,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Result<R, Fallback> {
    let (first, rest, mut whole) = source::lean_chunks(path, stdin, limits).ok_or(Fallback)?;
    load_lean_with(first, rest, &mut *whole, kept, purpose, limits, then)
}

/// The second pass of `pin --budget` over the input at `path` (`stdin`'s bytes instead,
/// when given), read as [`load_lean_from`] read it for `budget`: the id and digest of each
/// record whose `seq` is in `wanted`.
pub fn lean_digests_from(
    path: &str,
    stdin: Option<&[u8]>,
    budget: &crate::stream::Budget,
    wanted: &std::collections::BTreeSet<u64>,
    limits: Limits,
) -> Result<std::collections::BTreeMap<u64, (String, [u8; 32])>, Fallback> {
    let (first, rest, mut whole) = source::lean_chunks(path, stdin, limits).ok_or(Fallback)?;
    let (first, bom) = without_bom(first);
    let plan = Plan::new(std::iter::empty(), None, limits);
    match crate::stream::is_document(&first) {
        Some(false) => {
            let batches = std::iter::once(Ok(first))
                .chain(rest)
                .map(|chunk| chunk.map(Batch::Lines));
            crate::stream::digests(&plan, budget, wanted, batches)
        }
        Some(true) => {
            drop(rest);
            let start = if bom { BOM.len() as u64 } else { 0 };
            let layout = crate::stream::layout(&mut *whole, start)?;
            let spans = crate::stream::spans(&mut *whole, &layout);
            crate::stream::digests(&plan, budget, wanted, spans)
        }
        None => Err(Fallback),
    }
}

/// Loads an input for one [`Purpose`], leanly (see [`crate::stream`]), and hands the load
/// to `then` while the input's last checks run beside it (see [`crate::stream::load`]):
/// `then`'s result once they pass. `first` is the start of the input and `rest` the
/// remaining chunks, each ending at a line end; a document is read from `whole`, the same
/// input read by position (see [`crate::stream::spans`]). `kept` is ignored for `pin`.
/// Any problem at all, including every error the exact path would report, is
/// [`Fallback`]: run [`load`] instead.
pub fn load_lean_with<'a, 'w, R>(
    first: Cow<'a, [u8]>,
    rest: impl Iterator<Item = Result<Cow<'a, [u8]>, Fallback>> + Send,
    whole: &mut (dyn Positional<'w> + 'w),
    kept: KeptIds<'_>,
    purpose: Purpose,
    limits: Limits,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Result<R, Fallback> {
    let (first, bom) = without_bom(first);
    let kept = match purpose {
        Purpose::Pin(_) | Purpose::PinBudget(_) => KeptIds::Owned(Vec::new()),
        _ => kept,
    };
    match crate::stream::is_document(&first) {
        Some(false) => {
            let ids = kept.ids().ok_or(Fallback)?;
            let mut plan = purpose.plan(ids, purpose.scope(None)?, limits);
            plan.kept_json = matches!(kept, KeptIds::Json(_));
            let batches = std::iter::once(Ok(first))
                .chain(rest)
                .map(|chunk| chunk.map(Batch::Lines));
            crate::stream::load(&plan, batches, |store, totals, compaction, budget| {
                let input = Input {
                    store,
                    totals,
                    kept: None,
                    action: None,
                    tools: None,
                    stream: true,
                };
                then(purpose.lean_for(input, compaction, budget))
            })?
        }
        Some(true) => {
            // Read by position from here on: the chunks (and their carry) go.
            drop(rest);
            let start = if bom { BOM.len() as u64 } else { 0 };
            lean_document(whole, start, &kept, purpose, limits, then)
        }
        None => Err(Fallback),
    }
}

impl Purpose {
    /// What a lean load for this purpose gives: the action (`check`: the flag's, else
    /// the document's) or the tools (the flag's, else as [`Input::tools_or_named`]).
    pub(super) fn lean_for(
        self,
        input: Input,
        compaction: Compaction,
        budget: Option<crate::stream::Budget>,
    ) -> LeanFor {
        let (action, tools) = match self {
            Purpose::Check(a) | Purpose::CheckUnder(_, a) => {
                (a.or_else(|| input.action.clone()), Vec::new())
            }
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
    /// document's action.
    pub(super) fn scope(
        &self,
        doc_action: Option<&Action>,
    ) -> Result<Option<Vec<String>>, Fallback> {
        match self {
            Purpose::Check(a) | Purpose::CheckUnder(_, a) => a
                .as_ref()
                .or(doc_action)
                .map(|a| Some(vec![a.tool.clone()]))
                .ok_or(Fallback),
            // Precheck and pin judge every tool a rule names, listed or not
            // (`precheck::judged`): every policy and effect is held.
            Purpose::Precheck(_) | Purpose::Pin(_) | Purpose::PinBudget(_) => Ok(None),
        }
    }

    /// The plan of a lean load for this purpose.
    pub(super) fn plan<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
        tools: Option<Vec<String>>,
        limits: Limits,
    ) -> Plan<'a> {
        let plan = Plan::new(ids, tools, limits);
        match self {
            Purpose::PinBudget(_) => plan.for_pin().counting_tokens(),
            Purpose::Pin(_) => plan.for_pin(),
            Purpose::Precheck(_) => plan.for_patterns(),
            Purpose::Check(_) => plan,
            Purpose::CheckUnder(retention, _) => plan.under(*retention),
        }
    }
}

/// The document branch of [`load_lean_with`]: a document read from `src`, its JSON
/// starting at `start`.
pub(super) fn lean_document<R>(
    src: &mut dyn Positional<'_>,
    start: u64,
    owned_kept: &KeptIds<'_>,
    purpose: Purpose,
    limits: Limits,
    then: impl FnOnce(LeanFor) -> Result<R, Fallback>,
) -> Result<R, Fallback> {
    let mut layout = crate::stream::layout(src, start)?;
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
    let tools = purpose.scope(doc_action.as_ref())?;
    if owned_kept.ids().is_none() && doc_kept.is_none() {
        return Err(Fallback);
    }
    // Under a retention that keeps the ends, or with `--kept`, the kept ids are the ends
    // read or the flag's, not the document's; yet each of those must name a record (as
    // the exact loader checks it whatever decides the kept set), which it tells.
    if (matches!(purpose, Purpose::CheckUnder(..)) || owned_kept.ids().is_some())
        && doc_kept.as_ref().is_some_and(|k| !k.is_empty())
    {
        return Err(Fallback);
    }
    let ids: Box<dyn Iterator<Item = &str>> = match owned_kept.ids() {
        Some(ids) => ids,
        None => Box::new(doc_kept.iter().flatten().map(String::as_str)),
    };
    let mut plan = purpose.plan(ids, tools, limits);
    plan.kept_json = matches!(owned_kept, KeptIds::Json(_));
    crate::stream::load(
        &plan,
        crate::stream::spans(src, &layout),
        |store, totals, compaction, budget| {
            // The plan reads the document's kept ids: the input holds none (as for JSON
            // Lines), the compaction is what they were read for.
            let input = Input {
                store,
                totals,
                kept: None,
                action: doc_action,
                tools: doc_tools,
                stream: false,
            };
            then(purpose.lean_for(input, compaction, budget))
        },
    )?
}

/// Kept ids from a flag, read straight from its text where that is plain.
pub enum KeptIds<'a> {
    /// No `--kept` flag.
    None,
    /// [`kept_from_flag`]'s plain form (ids per line in a file, else comma separated):
    /// its text, and whether it came from a file.
    Plain(&'a str, bool),
    /// Ids read already.
    Owned(Vec<String>),
    /// [`kept_from_flag`]'s JSON form, read: the text could also be read as plain ids,
    /// each with a `[`, `]` or `"`, which the exact loader refuses when one names a
    /// record (see `kept_reads_two_ways`), so the load falls back on meeting a record
    /// whose id has one of them.
    Json(Vec<String>),
    /// Ids listed already, held elsewhere (the records in view of a transcript).
    Listed(Vec<&'a str>),
}

impl<'a> KeptIds<'a> {
    /// The ids of the `--kept` flag's text (and whether it came from a file), if given.
    pub fn flag(kept: Option<(&'a str, bool)>) -> Result<KeptIds<'a>, Fallback> {
        Ok(match kept {
            Some((text, from_file)) if kept_json(text).is_none() => KeptIds::Plain(text, from_file),
            Some((text, from_file)) => {
                KeptIds::Json(kept_from_flag("--kept", text, from_file).map_err(|_| Fallback)?)
            }
            None => KeptIds::None,
        })
    }

    pub(super) fn ids(&self) -> Option<Box<dyn Iterator<Item = &str> + '_>> {
        match self {
            KeptIds::None => None,
            KeptIds::Plain(text, from_file) => {
                let sep = if *from_file { b'\n' } else { b',' };
                Some(Box::new(PlainIds {
                    ids: plain_kept_ids(text, *from_file),
                    // One id per separator at most, plus one: an upper bound the plan
                    // sizes its index by (empty entries are passed over).
                    most: text.bytes().filter(|&b| b == sep).count() + 1,
                }))
            }
            KeptIds::Owned(v) | KeptIds::Json(v) => Some(Box::new(v.iter().map(String::as_str))),
            KeptIds::Listed(v) => Some(Box::new(v.iter().copied())),
        }
    }
}

/// The ids of a plain `--kept` text (as [`plain_kept_ids`] reads them), with `most`
/// bounding how many are left.
pub(super) struct PlainIds<I> {
    pub(super) ids: I,
    pub(super) most: usize,
}

impl<'a, I: Iterator<Item = &'a str>> Iterator for PlainIds<I> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let id = self.ids.next()?;
        self.most = self.most.saturating_sub(1);
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.most))
    }
}
