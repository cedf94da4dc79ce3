//! The compactor's side (SPEC 6): which records must be kept so that no reachable call
//! of the tools can be blocked, whatever else is kept; and, for a token budget, which
//! records to keep.
//!
//! Pinned: every unevaluable record; every active restrictive rule in scope of a tool
//! that some reachable call makes TRUE (found by the same enumeration precheck uses, so a
//! rule precheck cannot decide is pinned); every policy that revokes an in-scope policy;
//! the newest fact for each field an active in-scope rule reads, where some reachable
//! call leaves that field to facts; every effect a reachable call can replay; then,
//! transitively, every record a pinned record was derived from (`depends_on`). With a
//! schema that rules a rule or an effect out, pin does not spend budget on it. Pure: no
//! I/O.

use std::collections::BTreeMap;

use crate::action::Tool;
use crate::compaction::{Compaction, Retention, Totals};
use crate::gate::{self, Code, Finding, Outcome, View};
use crate::harness::Harness;
use crate::json::json_text;
use crate::precheck::{self, Domain, PolicyScan, Target};
use crate::predicate::Tri;
use crate::record::{Kind, Named, Store};
use crate::report::{CompactionSummary, Mode, Pinned, Report, TokenSummary, action_text};
use crate::text::clean;

/// Why one record is pinned; several reasons can hold at once.
#[derive(Debug, Default)]
struct Why {
    reasons: Vec<String>,
    /// Field -> ids of the rules that read it (for a newest fact).
    readers: BTreeMap<String, Vec<String>>,
    /// Ids of the pinned records derived from this one.
    inputs_of: Vec<String>,
}

impl Why {
    fn render(&self) -> String {
        let some = |ids: &[String]| match ids {
            [one] => format!("'{}'", clean(one)),
            [first, rest @ ..] => format!("'{}' and {} more", clean(first), rest.len()),
            [] => String::new(),
        };
        let mut parts = self.reasons.clone();
        for (field, ids) in &self.readers {
            parts.push(format!(
                "newest fact for `{}`, read by policy {}",
                clean(field),
                some(ids)
            ));
        }
        if !self.inputs_of.is_empty() {
            parts.push(format!("depends_on input of {}", some(&self.inputs_of)));
        }
        parts.join("; ")
    }
}

/// The protected set.
#[derive(Debug, Clone, PartialEq)]
pub struct Pins {
    /// Store positions of the pinned records, in `seq` order.
    pub positions: Vec<usize>,
    /// The pinned records and why, in `seq` order.
    pub pinned: Vec<Pinned>,
    /// How each tool's schema was read ([`precheck::schema_notes`]), for the report.
    pub notes: Vec<Finding>,
}

/// Options for pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinOptions {
    /// The most calls tried per rule and tool before a rule is pinned as undecided
    /// (`--max-calls`).
    pub max_calls: usize,
    /// The harness that runs the calls, when known (`--harness`): as in precheck, under
    /// one that runs a call outside the tool's schema no schema bounds the calls.
    pub harness: Option<Harness>,
}

impl Default for PinOptions {
    fn default() -> PinOptions {
        PinOptions {
            max_calls: precheck::DEFAULT_MAX_CALLS,
            harness: None,
        }
    }
}

/// Computes the records a compactor must keep for `tools`. A tool name may be a `*` glob
/// standing for every tool it covers (the hook adapters guard `*`, every tool a harness
/// has, named in the store or not), read as [`PinOptions`] say. Beside `tools`, every
/// name or glob of `named` (the names the input's records give) that none of them covers
/// is judged as a tool with no schema ([`precheck::judged`]).
pub fn pin(store: &Store, named: &Named, tools: &[Tool], options: PinOptions) -> Pins {
    let max_calls = options.max_calls;
    let domains = precheck::judged(named, tools, options.harness);
    let live: Vec<&Domain> = domains.iter().filter(|d| d.has_calls()).collect();
    // Pin asks about the full records only; the agent view of this compaction is unused.
    let everything = Compaction::from_mask(store, Retention::Given, vec![true; store.len()]);
    let full = View::full(store);
    let mut why: BTreeMap<usize, Why> = BTreeMap::new();
    for (pos, record) in store.records().iter().enumerate() {
        match &record.kind {
            Kind::Unevaluable(kind) => {
                why.entry(pos).or_default().reasons.push(format!(
                    "unevaluable record of kind `{}`: the gate can prove nothing about it",
                    clean(kind)
                ));
            }
            Kind::Policy(policy) => {
                let in_scope: Vec<&Domain> = Target::all_of(policy, &live)
                    .into_iter()
                    .map(|t| t.domain)
                    .collect();
                if in_scope.is_empty() {
                    continue;
                }
                for &r in store.revokers_of(pos) {
                    why.entry(r)
                        .or_default()
                        .reasons
                        .push(format!("revokes in-scope policy '{}'", clean(&record.id)));
                }
                if !full.active(pos) {
                    continue;
                }
                let Some(scan) = PolicyScan::new(store, &everything, pos) else {
                    continue;
                };
                if policy.effect.is_restrictive() {
                    let Some(reason) = fires(store, &scan, pos, &in_scope, max_calls) else {
                        // No reachable call makes it TRUE: it can never block.
                        continue;
                    };
                    why.entry(pos)
                        .or_default()
                        .reasons
                        .push(format!("active {} rule {reason}", policy.effect.as_str()));
                }
                for field in scan.fields() {
                    if !in_scope.iter().any(|d| d.may_leave_unset(field)) {
                        continue;
                    }
                    if let Some(fact) = full.newest_fact(field) {
                        why.entry(fact)
                            .or_default()
                            .readers
                            .entry(field.to_string())
                            .or_default()
                            .push(record.id.clone());
                    }
                }
            }
            Kind::Effect(effect) => {
                // An effect whose replay some covering tool cannot rule out is pinned.
                let replayable = live.iter().any(|d| {
                    precheck::effect_meets(effect, d)
                        && !matches!(precheck::effect_witness(d, effect), Ok(None))
                });
                if replayable {
                    why.entry(pos).or_default().reasons.push(format!(
                        "effect ledger entry of {}: a reachable call can replay it",
                        clean(&effect.tool)
                    ));
                }
            }
            _ => {}
        }
    }
    close_over_inputs(store, &mut why);
    let positions: Vec<usize> = why.keys().copied().collect();
    let pinned = why
        .iter()
        .filter_map(|(&pos, w)| {
            store.get(pos).map(|r| Pinned {
                id: r.id.clone(),
                why: w.render(),
            })
        })
        .collect();
    let notes = domains.iter().flat_map(precheck::schema_notes).collect();
    Pins {
        positions,
        pinned,
        notes,
    }
}

/// Why an active restrictive rule can fire: `in scope of T: TRUE for T {...}`, or that
/// it could not be decided; `None` when no reachable call makes it TRUE.
fn fires(
    store: &Store,
    scan: &PolicyScan<'_>,
    pos: usize,
    in_scope: &[&Domain],
    max_calls: usize,
) -> Option<String> {
    let full = View::full(store);
    let mut undecided = None;
    for domain in in_scope {
        // Whether the calls skipped may hide one `check` takes is asked only where no
        // call tried fires (it walks every call).
        let why = match scan.calls_unsampled(&domain.name, domain, max_calls) {
            Ok(calls) => {
                let mut witness = None;
                calls.try_each(|action| {
                    let fired = gate::policy_truth(store, full, action, pos) == Some(Tri::True);
                    if fired {
                        witness = Some(action.clone());
                    }
                    fired
                });
                if let Some(action) = witness {
                    let call = if domain.name.contains('*') {
                        format!(
                            "a call with {}",
                            json_text(&serde_json::Value::Object(action.params))
                        )
                    } else {
                        action_text(&action)
                    };
                    return Some(format!(
                        "in scope of {}: TRUE for {call}",
                        clean(&domain.name)
                    ));
                }
                scan.sampled(&calls).err()
            }
            Err(why) => Some(why),
        };
        if let Some(why) = why {
            undecided.get_or_insert(format!(
                "in scope of {}: whether a reachable call makes it TRUE is undecided, because {}",
                clean(&domain.name),
                why.describe()
            ));
        }
    }
    undecided
}

/// Adds, transitively, every record a pinned record was derived from.
fn close_over_inputs(store: &Store, why: &mut BTreeMap<usize, Why>) {
    let mut queue: Vec<usize> = why.keys().copied().collect();
    while let Some(pos) = queue.pop() {
        let Some(record) = store.get(pos) else {
            continue;
        };
        for dep in record.depends_on() {
            let Some(d) = store.position(dep) else {
                continue;
            };
            let fresh = !why.contains_key(&d);
            let entry = why.entry(d).or_default();
            if !entry.inputs_of.contains(&record.id) {
                entry.inputs_of.push(record.id.clone());
            }
            if fresh {
                queue.push(d);
            }
        }
    }
    for w in why.values_mut() {
        w.inputs_of.sort_by_key(|id| store.position(id));
    }
}

/// The `pin` report: the pinned records with why, their tokens, and with `budget` the
/// ids to keep (and the kept set's fingerprint, as `check --kept` will print it), or
/// ERROR `ledger-exceeds-budget` when the pinned records alone do not fit; with a
/// `not-listed` note when `tools` leave out some name of `named` (the names the input's
/// records give, which a lean store may not all hold).
pub fn report(
    store: &Store,
    named: &Named,
    tools: &[Tool],
    budget: Option<u64>,
    options: PinOptions,
) -> Report {
    let pins = pin(store, named, tools, options);
    let kept = budget.map(|budget| {
        fill(store, &pins.positions, budget).map(|f| {
            let mut mask = vec![false; store.len()];
            for &p in &f.kept {
                if let Some(slot) = mask.get_mut(p) {
                    *slot = true;
                }
            }
            let ids: Vec<String> = f
                .kept
                .iter()
                .filter_map(|&p| store.get(p).map(|r| r.id.clone()))
                .collect();
            let compaction = Compaction::from_mask(store, Retention::Given, mask);
            Kept {
                ids,
                compaction: CompactionSummary::new(&compaction, &Totals::of(store)),
                kept_tokens: f.kept_tokens,
            }
        })
    });
    assemble(store, named, tools, budget, pins, kept)
}

/// The kept set a budget gives, as the report states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The kept ids, in `seq` order.
    pub ids: Vec<String>,
    /// The compaction they make.
    pub compaction: CompactionSummary,
    /// Tokens of every kept record, the pinned ones included.
    pub kept_tokens: u64,
}

/// The `pin` report from the pins and, with `budget`, the fill (see [`report`]). The
/// lean path computes the fill from every record's tokens and gives it here.
pub fn assemble(
    store: &Store,
    named: &Named,
    tools: &[Tool],
    budget: Option<u64>,
    mut pins: Pins,
    kept: Option<Result<Kept, OverBudget>>,
) -> Report {
    let mut findings: Vec<Finding> = std::mem::take(&mut pins.notes);
    findings.extend(precheck::not_listed(named, tools));
    let mut tokens = TokenSummary {
        budget,
        pinned_records: pins.positions.len(),
        pinned_tokens: tokens_of(store, &pins.positions),
        kept_records: None,
        kept_tokens: None,
    };
    let mut chosen = None;
    match (budget, kept) {
        (Some(_), Some(Ok(k))) => {
            tokens.kept_records = Some(k.ids.len());
            tokens.kept_tokens = Some(k.kept_tokens);
            chosen = Some(k);
        }
        (Some(budget), Some(Err(over))) => findings.push(Finding::new(
            Code::LedgerExceedsBudget,
            None,
            format!(
                "the pinned records alone need {} tokens, over the budget of {budget}: raise the budget or defer the compaction (a full window is a recoverable failure; a silently dropped rule is not)",
                over.pinned_tokens
            ),
        )),
        _ => {}
    }
    let mut report = Report::from_outcome(Mode::Pin, Outcome::from_findings(findings));
    report.tools = Some(tools.iter().map(|t| t.name.clone()).collect());
    report.pinned = Some(pins.pinned);
    report.tokens = Some(tokens);
    if let Some(k) = chosen {
        report.compaction = Some(k.compaction);
        report.kept = Some(k.ids);
    }
    report
}

/// [`fill`] over `(seq, tokens)` of every record of the input (in `seq` order), with the
/// `seq`s of the pinned records: the `seq`s kept (in order) and the kept tokens.
pub fn fill_seqs(
    all: &[(u64, u64)],
    pinned: &[u64],
    budget: u64,
) -> Result<(Vec<u64>, u64), OverBudget> {
    let is_pinned = |seq: &u64| pinned.binary_search(seq).is_ok();
    let pinned_tokens = sum_tokens(all.iter().filter(|(s, _)| is_pinned(s)).map(|&(_, t)| t));
    let mut left = room(pinned_tokens, budget)?;
    let mut kept: Vec<u64> = Vec::new();
    for &(seq, t) in all.iter().rev() {
        if is_pinned(&seq) {
            kept.push(seq);
        } else if t <= left {
            kept.push(seq);
            left -= t;
        }
    }
    kept.reverse();
    Ok((kept, budget - left))
}

fn tokens_of(store: &Store, positions: &[usize]) -> u128 {
    sum_tokens(
        positions
            .iter()
            .filter_map(|&p| store.get(p))
            .map(|r| r.tokens),
    )
}

/// The exact sum of token counts: each is below 2^64 and there are fewer than 2^64 of
/// them, so 128 bits hold it (64 bits saturated, and records of 2^64 tokens in all fitted
/// a budget of 2^64 - 1).
fn sum_tokens(tokens: impl Iterator<Item = u64>) -> u128 {
    tokens.map(u128::from).fold(0, u128::saturating_add)
}

/// What `budget` leaves beside the pinned tokens, or [`OverBudget`] when they exceed it.
fn room(pinned_tokens: u128, budget: u64) -> Result<u64, OverBudget> {
    u128::from(budget)
        .checked_sub(pinned_tokens)
        .and_then(|left| u64::try_from(left).ok())
        .ok_or(OverBudget { pinned_tokens })
}

/// A kept set that fits a token budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fill {
    /// Store positions of the kept records, in `seq` order.
    pub kept: Vec<usize>,
    /// Tokens of the pinned records.
    pub pinned_tokens: u128,
    /// Tokens of every kept record, the pinned ones included.
    pub kept_tokens: u64,
}

/// The pinned records alone exceed the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// Tokens of the pinned records.
    pub pinned_tokens: u128,
}

/// Keeps the pinned records, then the most recent other records that fit in what is
/// left of `budget`, newest first (a record too large for what is left is skipped and
/// older, smaller ones may still fit).
pub fn fill(store: &Store, pinned: &[usize], budget: u64) -> Result<Fill, OverBudget> {
    let pinned_tokens = tokens_of(store, pinned);
    let mut left = room(pinned_tokens, budget)?;
    let mut kept = vec![false; store.len()];
    for &p in pinned {
        if let Some(slot) = kept.get_mut(p) {
            *slot = true;
        }
    }
    for (pos, record) in store.records().iter().enumerate().rev() {
        let slot = kept.get_mut(pos);
        if let Some(slot) = slot
            && !*slot
            && record.tokens <= left
        {
            *slot = true;
            left -= record.tokens;
        }
    }
    Ok(Fill {
        kept: (0..store.len())
            .filter(|&p| kept.get(p) == Some(&true))
            .collect(),
        pinned_tokens,
        kept_tokens: budget - left,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Limits;

    fn store(lines: &[&str]) -> Store {
        crate::input::load("t", lines.join("\n").as_bytes(), Limits::default())
            .unwrap()
            .store
    }

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.into(),
            input_schema: None,
        }
    }

    #[test]
    fn fill_keeps_the_pinned_then_the_newest_that_fit() {
        let s = store(&[
            r#"{"id":"a","seq":1,"kind":"chatter","tokens":4}"#,
            r#"{"id":"b","seq":2,"kind":"chatter","tokens":6}"#,
            r#"{"id":"c","seq":3,"kind":"chatter","tokens":50}"#,
            r#"{"id":"d","seq":4,"kind":"chatter","tokens":3}"#,
        ]);
        let f = fill(&s, &[0], 14).unwrap();
        assert_eq!(f.kept, [0, 1, 3]);
        assert_eq!((f.pinned_tokens, f.kept_tokens), (4, 13));
        assert_eq!(fill(&s, &[0, 2], 53), Err(OverBudget { pinned_tokens: 54 }));
        assert_eq!(fill(&s, &[], 0).unwrap().kept, Vec::<usize>::new());
    }

    #[test]
    fn why_merges_readers_and_dependents() {
        let w = Why {
            reasons: vec!["revokes in-scope policy 'p'".into()],
            readers: BTreeMap::from([("tier".into(), vec!["p1".into(), "p2".into()])]),
            inputs_of: vec!["x".into()],
        };
        assert_eq!(
            w.render(),
            "revokes in-scope policy 'p'; newest fact for `tier`, read by policy 'p1' and 1 more; depends_on input of 'x'"
        );
    }

    #[test]
    fn facts_only_pinned_for_rules_that_can_matter() {
        let s = store(&[
            r#"{"id":"f1","seq":1,"kind":"fact","field":"tier","value":"gold"}"#,
            r#"{"id":"f2","seq":2,"kind":"fact","field":"tier","value":"standard","supersedes":"f1"}"#,
            r#"{"id":"p3","seq":3,"kind":"policy","scope":"t","effect":"deny","predicate":{"field":"tier","op":"eq","value":"suspended"}}"#,
            r#"{"id":"f4","seq":4,"kind":"fact","field":"region","value":"eu"}"#,
            r#"{"id":"p5","seq":5,"kind":"policy","scope":"t","effect":"allow","predicate":{"field":"region","op":"eq","value":"eu"}}"#,
            r#"{"id":"p6","seq":6,"kind":"policy","scope":"other","effect":"deny","predicate":{"all":[]}}"#,
            r#"{"id":"f7","seq":7,"kind":"fact","field":"zone","value":"a"}"#,
            r#"{"id":"p8","seq":8,"kind":"policy","scope":"t","effect":"deny","predicate":{"all":[{"field":"zone","op":"eq","value":"a"},{"field":"zone","op":"eq","value":"b"}]}}"#,
        ]);
        let named = Totals::of(&s).named;
        let ids: Vec<String> = pin(
            &s,
            &named,
            &[tool("t")],
            crate::PinOptions {
                max_calls: 1000,
                ..Default::default()
            },
        )
        .pinned
        .into_iter()
        .map(|p| p.id)
        .collect();
        // p3 can fire (a call may set tier to "suspended"), so it and its newest fact
        // are pinned; the allow rule's fact is pinned; p6, of a tool the list leaves
        // out, is judged all the same (SPEC 2.3) and always fires; p8 is never TRUE, so
        // neither it nor the fact it reads is pinned.
        assert_eq!(ids, ["f2", "p3", "f4", "p6"]);
    }
}
