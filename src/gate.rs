//! The gate: does a dropped record bind this action? (SPEC 4)
//!
//! Each in-scope policy is evaluated in two views, the full record set and the agent's
//! kept set, and the pair of truth values picks a row of the firing table (`fire`).
//! Effects, unevaluable records and derivation inputs add their own findings. Everything
//! here is a pure function of the store, the compaction and the action.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::action::Action;
use crate::compaction::{Compaction, Totals};
use crate::json::{json_brief, json_text};
use crate::predicate::{Resolve, Tri, TypeMismatch, json_eq};
use crate::record::{Effect, Kind, Policy, PolicyEffect, Record, Store, glob_match};
use crate::text::{clean, clean_brief};

/// How much a finding weighs in the verdict. Ordered: errors first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The gate cannot decide.
    Error,
    /// A dropped record binds the action.
    Block,
    /// Worth knowing; never changes the verdict.
    Note,
}

/// Every kind of finding the tool reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// Bad input (SPEC 9).
    InvalidInput,
    /// A restrictive in-scope rule reads a field that resolves nowhere.
    UnresolvedField,
    /// A comparison of values that cannot be compared.
    TypeMismatch,
    /// A dropped restrictive rule is TRUE for this action.
    DroppedBindingConstraint,
    /// A kept restrictive rule is FALSE in the view only because a newer fact was dropped.
    DroppedSupersederStaleKept,
    /// A kept restrictive rule is UNKNOWN in the view because the fact it reads was dropped.
    DroppedBindingFact,
    /// A kept allow rule is TRUE in the view on a retracted value, or is revoked.
    DroppedSupersederStalePermit,
    /// A dropped effect entry says this call already ran.
    DroppedEffectReplay,
    /// A dropped record of a kind the gate cannot evaluate.
    DroppedUnevaluableRecord,
    /// Precheck: some reachable call would be blocked.
    MayBindSomeAction,
    /// Pin: the pinned records alone exceed the budget.
    LedgerExceedsBudget,
    /// Precheck: whether some reachable call makes `check` fail closed could not be
    /// decided within the bound. Check: whether the call replays a dropped effect could
    /// not be decided (a field of its `match` meets an array or a string in the params).
    Undecided,
    /// Note: a restrictive rule fires in the view on a stale value (the safe direction).
    StaleValueSafeDirection,
    /// Note: a permission was lost, which cannot license anything.
    Permissive,
    /// Note: a kept effect entry says this call already ran; the agent can see it.
    KeptEffectReplay,
    /// Note: a kept derived record lost some of the inputs it was computed from.
    DerivationInputDropped,
    /// Note: how precheck read a tool's schema (keywords it ignores, no reachable call).
    ToolSchema,
    /// Note: a dropped record binds calls the tool's schema rules out, and no other.
    RuledOutBySchema,
    /// Precheck note: `check` fails closed on some reachable call whatever is kept (it
    /// omits or mistypes a param a rule reads), so not through this compaction.
    FailsWhateverKept,
    /// Note: a record's kind is not one the gate evaluates but looks like a misspelling
    /// of one (`Policy`, `facts`).
    MisspeltKind,
    /// Precheck and pin note: a tool name or glob that a policy scopes to or an effect
    /// gives is covered by no tool of the list given, so it was judged beside them as a
    /// tool that takes any params.
    NotListed,
}

impl Code {
    /// The code as printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidInput => "invalid-input",
            Code::UnresolvedField => "unresolved-field",
            Code::TypeMismatch => "type-mismatch",
            Code::DroppedBindingConstraint => "dropped-binding-constraint",
            Code::DroppedSupersederStaleKept => "dropped-superseder-stale-kept",
            Code::DroppedBindingFact => "dropped-binding-fact",
            Code::DroppedSupersederStalePermit => "dropped-superseder-stale-permit",
            Code::DroppedEffectReplay => "dropped-effect-replay",
            Code::DroppedUnevaluableRecord => "dropped-unevaluable-record",
            Code::MayBindSomeAction => "may-bind-some-action",
            Code::LedgerExceedsBudget => "ledger-exceeds-budget",
            Code::Undecided => "undecided",
            Code::StaleValueSafeDirection => "stale-value-safe-direction",
            Code::Permissive => "permissive",
            Code::KeptEffectReplay => "kept-effect-replay",
            Code::DerivationInputDropped => "derivation-input-dropped",
            Code::ToolSchema => "tool-schema",
            Code::RuledOutBySchema => "ruled-out-by-schema",
            Code::FailsWhateverKept => "fails-closed-whatever-kept",
            Code::MisspeltKind => "misspelt-kind",
            Code::NotListed => "not-listed",
        }
    }

    /// The severity a finding of this code has by default.
    pub fn severity(self) -> Severity {
        match self {
            Code::InvalidInput
            | Code::UnresolvedField
            | Code::TypeMismatch
            | Code::LedgerExceedsBudget
            | Code::Undecided => Severity::Error,
            Code::DroppedBindingConstraint
            | Code::DroppedSupersederStaleKept
            | Code::DroppedBindingFact
            | Code::DroppedSupersederStalePermit
            | Code::DroppedEffectReplay
            | Code::DroppedUnevaluableRecord
            | Code::MayBindSomeAction => Severity::Block,
            Code::StaleValueSafeDirection
            | Code::Permissive
            | Code::KeptEffectReplay
            | Code::DerivationInputDropped
            | Code::ToolSchema
            | Code::RuledOutBySchema
            | Code::FailsWhateverKept
            | Code::MisspeltKind
            | Code::NotListed => Severity::Note,
        }
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One thing the gate found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What kind of finding.
    pub code: Code,
    /// Its weight in the verdict.
    pub severity: Severity,
    /// The id of the record it is about, where one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// One line for a person.
    pub message: String,
    /// Dropped records whose restoration removes this finding (block findings).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restore: Vec<String>,
    /// A concrete call for which `check` reports what the finding says (precheck
    /// findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Action>,
    /// Where the record sits, for ordering; not printed.
    #[serde(skip)]
    pub seq: Option<u64>,
}

impl Finding {
    /// A finding with the code's default severity.
    pub(crate) fn new(code: Code, record: Option<&Record>, message: String) -> Finding {
        Finding {
            code,
            severity: code.severity(),
            record: record.map(|r| r.id.clone()),
            message,
            restore: Vec::new(),
            witness: None,
            seq: record.map(|r| r.seq),
        }
    }

    fn sort_key(&self) -> (Severity, Option<u64>, Code, &str) {
        (self.severity, self.seq, self.code, &self.message)
    }
}

/// PASS, BLOCK or ERROR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Nothing dropped binds the action.
    Pass,
    /// A dropped (or stale-kept) record binds the action.
    Block,
    /// The gate cannot decide.
    Error,
}

/// How a run ends, as the process exit status: the one place verdicts, errors and hook
/// answers become exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// PASS, or a command that did what it was asked (a hook's answer on stdout
    /// included): 0.
    Success,
    /// BLOCK: 1.
    Block,
    /// Something to fix that is not a verdict: `validate`'s warnings, `doctor`'s problems,
    /// a report whose seal does not verify: 1.
    Problems,
    /// ERROR: invalid input, a usage error, a report that could not be written: 2.
    Error,
    /// A pre-tool hook's deny, the reason on stderr: 2, which the harnesses read as a
    /// block.
    Deny,
    /// A hook failure that must not block (Claude Code `PreCompact`, where 2 would block
    /// the compaction): 1.
    NonBlocking,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Block | Exit::Problems | Exit::NonBlocking => 1,
            Exit::Error | Exit::Deny => 2,
        }
    }
}

impl From<Verdict> for Exit {
    fn from(verdict: Verdict) -> Exit {
        match verdict {
            Verdict::Pass => Exit::Success,
            Verdict::Block => Exit::Block,
            Verdict::Error => Exit::Error,
        }
    }
}

impl Verdict {
    /// The verdict as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Block => "BLOCK",
            Verdict::Error => "ERROR",
        }
    }

    /// ERROR if any finding is an error, else BLOCK if any blocks, else PASS.
    pub fn of(findings: &[Finding]) -> Verdict {
        findings.iter().fold(Verdict::Pass, |v, f| {
            v.max(match f.severity {
                Severity::Error => Verdict::Error,
                Severity::Block => Verdict::Block,
                Severity::Note => Verdict::Pass,
            })
        })
    }
}

/// Sorts findings into the stable report order: errors, blocks, notes; then by the
/// record's seq, the code and the message.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}

/// Options for `check`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Turn dropped unevaluable records into a signed note instead of a block.
    pub allow_unevaluable: bool,
}

/// The marker a note carries when the user chose `--allow-unevaluable`.
pub const FLY_BLIND: &str = "[--allow-unevaluable: you chose to fly blind]";

/// The gate's answer for one action under one compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The verdict the findings add up to.
    pub verdict: Verdict,
    /// Every finding, in report order.
    pub findings: Vec<Finding>,
}

impl Outcome {
    /// Sorts the findings and computes the verdict.
    pub fn from_findings(mut findings: Vec<Finding>) -> Outcome {
        sort_findings(&mut findings);
        Outcome {
            verdict: Verdict::of(&findings),
            findings,
        }
    }
}

/// A view of the store: every record (`kept: None`) or the kept ones.
#[derive(Clone, Copy)]
pub struct View<'a> {
    store: &'a Store,
    kept: Option<&'a Compaction>,
    /// Fields whose value in this view was looked up before ([`View::fact_values`]).
    facts: &'a [(String, Option<&'a Value>)],
}

impl<'a> View<'a> {
    /// The full view: every record.
    pub fn full(store: &'a Store) -> View<'a> {
        View {
            store,
            kept: None,
            facts: &[],
        }
    }

    /// The agent's view: the kept records.
    pub fn agent(store: &'a Store, compaction: &'a Compaction) -> View<'a> {
        View {
            store,
            kept: Some(compaction),
            facts: &[],
        }
    }

    /// Each of `fields` with its value in this view ([`View::fact_value`]), for
    /// [`View::with_facts`]: precheck judges one rule on many calls, and the facts it
    /// reads do not change from one call to the next.
    pub fn fact_values<'f>(
        &self,
        fields: impl Iterator<Item = &'f str>,
    ) -> Vec<(String, Option<&'a Value>)> {
        fields
            .map(|f| (f.to_string(), self.fact_value(f)))
            .collect()
    }

    /// This view, answering [`View::fact_value`] for the fields of `facts` from it;
    /// `facts` must come from [`View::fact_values`] of this view.
    pub fn with_facts<'b>(self, facts: &'b [(String, Option<&'b Value>)]) -> View<'b>
    where
        'a: 'b,
    {
        View {
            store: self.store,
            kept: self.kept,
            facts,
        }
    }

    /// True when the record at `pos` is in this view.
    pub fn has(&self, pos: usize) -> bool {
        self.kept.is_none_or(|c| c.is_kept(pos))
    }

    /// The position of the newest fact in this view that states `field` in either
    /// spelling, or a part of it: a fact of `field` itself, of a field above it whose
    /// value may hold it (`customer` = `{"tier": "gold"}` for `customer.tier`), or of a
    /// field below it (`customer.tier` for `customer`). The newest statement of a field
    /// is the newest of these, whichever way it is spelt.
    pub fn newest_fact(&self, field: &str) -> Option<usize> {
        self.store
            .fact_fields_meeting(field)
            .filter_map(|f| match self.kept {
                None => self.store.facts_of(f).last().copied(),
                Some(c) => c.newest_kept_fact(f),
            })
            .max()
    }

    /// True when the policy at `pos` is in this view and no policy in this view revokes it.
    pub fn active(&self, pos: usize) -> bool {
        self.has(pos) && !self.store.revokers_of(pos).iter().any(|&r| self.has(r))
    }

    /// The view's value of a fact field: what its newest statement ([`View::newest_fact`])
    /// says of it. None (UNKNOWN, so the gate fails closed on a rule that needs it) when
    /// that statement gives no whole value: a fact of a field above it whose value does
    /// not hold it, or a fact of a field below it, which states only a part.
    pub fn fact_value(&self, field: &str) -> Option<&'a Value> {
        if let Some((_, value)) = self.facts.iter().find(|(f, _)| f == field) {
            return *value;
        }
        let store = self.store;
        let pos = self.newest_fact(field)?;
        let Kind::Fact(f) = &store.get(pos)?.kind else {
            return None;
        };
        if f.field == field {
            return Some(&f.value);
        }
        let rest = field.strip_prefix(f.field.as_str())?.strip_prefix('.')?;
        let value = f.value.as_object()?;
        // A value that gives a part of the field apart from it (`{"b": {"c": 1}, "b.d":
        // 2}` for `b`) does not give it whole either.
        if crate::action::part_apart(value, rest).is_some() {
            return None;
        }
        crate::action::field_in(value, rest)
    }
}

/// Resolution of fields for one action in one view (SPEC 4): params, then facts.
pub struct Env<'a> {
    /// The proposed call.
    pub action: &'a Action,
    /// The view facts come from.
    pub view: View<'a>,
}

impl Resolve for Env<'_> {
    fn resolve(&self, field: &str) -> Option<&Value> {
        // A field the call gives in part, spelt apart, is the call's and undecided: not
        // the value it reads whole, nor a fact's (`Action::part_apart`).
        if self.action.part_apart(field).is_some() {
            return None;
        }
        if let Some(value) = self.action.param(field) {
            return Some(value);
        }
        // A path through the params that meets an array or a string: the tool may read
        // an element (an item, a character), the gate does not read into them, and no
        // fact stands in for it.
        if crate::action::elements_on_path(&self.action.params, field).is_some() {
            return None;
        }
        self.view.fact_value(field)
    }
}

/// The codes the firing table gives: each has its own message (`PolicyCtx::message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fired {
    /// [`Code::UnresolvedField`].
    UnresolvedField,
    /// [`Code::DroppedBindingConstraint`].
    DroppedBindingConstraint,
    /// [`Code::DroppedSupersederStaleKept`].
    DroppedSupersederStaleKept,
    /// [`Code::DroppedBindingFact`].
    DroppedBindingFact,
    /// [`Code::StaleValueSafeDirection`].
    StaleValueSafeDirection,
    /// [`Code::DroppedSupersederStalePermit`].
    DroppedSupersederStalePermit,
    /// [`Code::Permissive`].
    Permissive,
}

impl From<Fired> for Code {
    fn from(fired: Fired) -> Code {
        match fired {
            Fired::UnresolvedField => Code::UnresolvedField,
            Fired::DroppedBindingConstraint => Code::DroppedBindingConstraint,
            Fired::DroppedSupersederStaleKept => Code::DroppedSupersederStaleKept,
            Fired::DroppedBindingFact => Code::DroppedBindingFact,
            Fired::StaleValueSafeDirection => Code::StaleValueSafeDirection,
            Fired::DroppedSupersederStalePermit => Code::DroppedSupersederStalePermit,
            Fired::Permissive => Code::Permissive,
        }
    }
}

/// The firing table of SPEC 4, row for row: what a policy's pair of truth values means.
/// `full` and `view` are already FALSE where the policy is not active in that view.
pub fn fire(effect: PolicyEffect, kept: bool, full: Tri, view: Tri) -> Option<Fired> {
    use Tri::{False, True, Unknown};
    if effect.is_restrictive() {
        match (kept, full, view) {
            (_, Unknown, _) => Some(Fired::UnresolvedField),
            (false, True, _) => Some(Fired::DroppedBindingConstraint),
            (true, True, False) => Some(Fired::DroppedSupersederStaleKept),
            (true, True, Unknown) => Some(Fired::DroppedBindingFact),
            (_, False, True) => Some(Fired::StaleValueSafeDirection),
            _ => None,
        }
    } else {
        match (full, view) {
            (False | Unknown, True) => Some(Fired::DroppedSupersederStalePermit),
            (True, False | Unknown) => Some(Fired::Permissive),
            _ => None,
        }
    }
}

/// Runs the gate: every finding for `action` under `compaction`.
pub fn check(
    store: &Store,
    compaction: &Compaction,
    totals: &Totals,
    action: &Action,
    options: CheckOptions,
) -> Outcome {
    let full = View::full(store);
    let agent = View::agent(store, compaction);
    let findings = each_record(store, |pos, record, findings| {
        let kept = compaction.is_kept(pos);
        match &record.kind {
            Kind::Policy(policy) if policy.scopes(&action.tool) => {
                let ctx = PolicyCtx {
                    store,
                    compaction,
                    action,
                    pos,
                    record,
                    policy,
                    full,
                    agent,
                };
                findings.extend(ctx.judge());
            }
            Kind::Effect(effect) => match replay(effect, action) {
                Tri::True => findings.push(effect_finding(record, effect, kept, action)),
                // A kept effect the agent can see: no more than a note if it replayed.
                Tri::Unknown if !kept => findings.push(undecided_effect(record, effect, action)),
                _ => {}
            },
            Kind::Unevaluable(kind) => {
                if !kept {
                    findings.push(unevaluable_finding(record, kind, options));
                }
                findings.extend(misspelt_kind_note(record, kind));
            }
            _ => {}
        }
        if kept {
            findings.extend(derivation_note(store, compaction, totals, record));
        }
    });
    Outcome::from_findings(findings)
}

/// Stores with at least this many records are judged on two threads.
const TWO_THREADS_FROM: usize = 4096;

/// Records per run of positions a thread takes at a time.
const RUN: usize = 256;

/// The findings of `judge(pos, record, findings)` for every record of `store`, in store
/// order. A large store is judged on two threads, each taking runs of positions in turn;
/// the runs' findings are put back in position order, so the result is what one thread
/// would give.
pub fn each_record<F>(store: &Store, judge: F) -> Vec<Finding>
where
    F: Fn(usize, &Record, &mut Vec<Finding>) + Sync,
{
    let records = store.records();
    let mut findings = Vec::new();
    if records.len() < TWO_THREADS_FROM {
        for (pos, record) in records.iter().enumerate() {
            judge(pos, record, &mut findings);
        }
        return findings;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut runs: Vec<(usize, Vec<Finding>)> = Vec::new();
        loop {
            let run = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(slice) = records.get(run * RUN..).filter(|s| !s.is_empty()) else {
                return runs;
            };
            let mut out = Vec::new();
            for (i, record) in slice.iter().take(RUN).enumerate() {
                judge(run * RUN + i, record, &mut out);
            }
            runs.push((run, out));
        }
    };
    let mut runs = std::thread::scope(|s| {
        // No second thread (a resource limit): this one takes every run.
        let other = std::thread::Builder::new().spawn_scoped(s, work);
        let mut mine = work();
        if let Ok(other) = other {
            match other.join() {
                Ok(theirs) => mine.extend(theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        mine
    });
    runs.sort_unstable_by_key(|(run, _)| *run);
    for (_, out) in runs {
        findings.extend(out);
    }
    findings
}

/// Whether `action` repeats the effect. TRUE when the effect's `tool` covers the action's
/// tool (a plain name covers only itself, a `*` glob every name it matches, SPEC 2), and
/// every field `match` names equals the action's param of that name. `match` is read as
/// fields ([`Effect::fields`]: `{"invoice": {"id": ..}}` is the field `invoice.id`), and a
/// param as a predicate's field is (SPEC 4, [`Action::param`]): the key spelt exactly,
/// else the path through nested objects. So either spelling of a field in `match` is met
/// by either in the call: the gate holds the two for one field
/// ([`crate::action::one_spelling`]), and a tool may read either.
///
/// FALSE when the tool is not covered or some field differs, or is missing from the
/// params (a missing param never equals). UNKNOWN when no field tells the call apart and
/// some field the params do not give has a path through them that meets an array or a
/// string ([`elements_met`]): the gate reads no field into one, as a predicate's field
/// whose path meets one resolves nowhere in the params (SPEC 4), while a tool may read
/// an element, so whether the call repeats the effect is not decided, and `check` fails
/// closed on a dropped one.
pub fn replay(effect: &Effect, action: &Action) -> Tri {
    if !glob_match(&effect.tool, &action.tool) {
        return Tri::False;
    }
    let mut out = Tri::True;
    for (k, v) in effect.fields() {
        match action.param(&k) {
            Some(p) if json_eq(p, v) => {}
            None if crate::action::elements_on_path(&action.params, &k).is_some() => {
                out = Tri::Unknown;
            }
            _ => return Tri::False,
        }
    }
    out
}

/// The first field of the effect's `match` that `params` do not give and whose path
/// through them meets an array or a string, with the part of it up to that value and
/// what it is ([`crate::predicate::Elements`]): why [`replay`] is UNKNOWN.
pub fn elements_met(
    effect: &Effect,
    params: &Map<String, Value>,
) -> Option<(String, String, crate::predicate::Elements)> {
    effect.fields().into_iter().find_map(|(k, _)| {
        if crate::action::field_in(params, &k).is_some() {
            return None;
        }
        let (at, what) = crate::action::elements_on_path(params, &k)?;
        let at = at.to_string();
        Some((k, at, what))
    })
}

/// The code `check` gives the policy at `pos` for `action` (a firing-table row or
/// `type-mismatch`), or `None` when it says nothing; like [`judge_policy`] without
/// building the message, in the two views given: the full one and the agent's under
/// `compaction`, as [`View::full`] and [`View::agent`] make them (with
/// [`View::with_facts`] or not). The caller has checked that the policy scopes to the
/// tool.
pub fn policy_code(
    compaction: &Compaction,
    full: View<'_>,
    agent: View<'_>,
    action: &Action,
    pos: usize,
) -> Option<Code> {
    let mut ctx = PolicyCtx::at(full.store, compaction, action, pos)?;
    ctx.full = full;
    ctx.agent = agent;
    ctx.code()
}

/// The finding `check` reports for the policy at `pos` and `action`, worded as `check`
/// words it. The caller has checked that the policy scopes to the tool.
pub fn judge_policy(
    store: &Store,
    compaction: &Compaction,
    action: &Action,
    pos: usize,
) -> Option<Finding> {
    PolicyCtx::at(store, compaction, action, pos)?.judge()
}

/// The policy's truth for `action` in one view (FALSE where it is not active), or the
/// type mismatch that stops its evaluation.
pub fn policy_truth(store: &Store, view: View<'_>, action: &Action, pos: usize) -> Option<Tri> {
    let Kind::Policy(policy) = &store.get(pos)?.kind else {
        return None;
    };
    if !view.active(pos) {
        return Some(Tri::False);
    }
    policy.predicate.eval(&Env { action, view }).ok()
}

/// Everything needed to judge one in-scope policy.
struct PolicyCtx<'a> {
    store: &'a Store,
    compaction: &'a Compaction,
    action: &'a Action,
    pos: usize,
    record: &'a Record,
    policy: &'a Policy,
    full: View<'a>,
    agent: View<'a>,
}

impl<'a> PolicyCtx<'a> {
    fn at(
        store: &'a Store,
        compaction: &'a Compaction,
        action: &'a Action,
        pos: usize,
    ) -> Option<PolicyCtx<'a>> {
        let record = store.get(pos)?;
        let Kind::Policy(policy) = &record.kind else {
            return None;
        };
        Some(PolicyCtx {
            store,
            compaction,
            action,
            pos,
            record,
            policy,
            full: View::full(store),
            agent: View::agent(store, compaction),
        })
    }

    fn code(&self) -> Option<Code> {
        match (self.eval(self.full), self.eval(self.agent)) {
            (Ok(full), Ok(view)) => fire(
                self.policy.effect,
                self.compaction.is_kept(self.pos),
                full,
                view,
            )
            .map(Code::from),
            _ => Some(Code::TypeMismatch),
        }
    }

    fn eval(&self, view: View<'_>) -> Result<Tri, TypeMismatch> {
        if !view.active(self.pos) {
            return Ok(Tri::False);
        }
        let env = Env {
            action: self.action,
            view,
        };
        self.policy.predicate.eval(&env)
    }

    fn explain(&self, view: View<'_>) -> String {
        let env = Env {
            action: self.action,
            view,
        };
        self.policy.predicate.explain(&env)
    }

    fn judge(&self) -> Option<Finding> {
        let (full, view) = match (self.eval(self.full), self.eval(self.agent)) {
            (Ok(f), Ok(v)) => (f, v),
            (Err(mismatch), _) | (_, Err(mismatch)) => {
                return Some(Finding::new(
                    Code::TypeMismatch,
                    Some(self.record),
                    format!(
                        "{} cannot be evaluated: {}",
                        self.name("policy"),
                        mismatch.detail
                    ),
                ));
            }
        };
        let kept = self.compaction.is_kept(self.pos);
        let fired = fire(self.policy.effect, kept, full, view)?;
        let code = Code::from(fired);
        let mut finding = Finding::new(code, Some(self.record), self.message(fired, full, view));
        if code.severity() == Severity::Block {
            finding.restore = self.restore();
        }
        Some(finding)
    }

    /// `kept policy 'f_003' (allow)`
    fn name(&self, noun: &str) -> String {
        let state = if self.compaction.is_kept(self.pos) {
            "kept"
        } else {
            "dropped"
        };
        format!(
            "{state} {noun} '{}' ({})",
            clean(&self.record.id),
            self.policy.effect.as_str()
        )
    }

    fn text_suffix(&self) -> String {
        self.record
            .text
            .as_deref()
            .map(|t| format!("; its text: {}", json_text(&Value::String(shorten(t)))))
            .unwrap_or_default()
    }

    fn message(&self, fired: Fired, full: Tri, view: Tri) -> String {
        // Brief: every in-scope rule's message names the tool.
        let tool = clean_brief(&self.action.tool);
        let rule = self.name("policy");
        let on_full = format!(
            "{} on the full records ({})",
            full.as_str(),
            self.explain(self.full)
        );
        let on_view = if self.agent.active(self.pos) {
            format!(
                "{} in the agent's view ({})",
                view.as_str(),
                self.explain(self.agent)
            )
        } else {
            format!("{} in the agent's view", view.as_str())
        };
        let why = self.why_views_differ();
        let text = self.text_suffix();
        match fired {
            Fired::UnresolvedField => format!(
                "{rule} scopes to {tool} but reads {} that no param and no fact resolves ({}); the gate cannot decide, so it fails closed{text}",
                self.unresolved_fields(),
                self.explain(self.full)
            ),
            Fired::DroppedBindingConstraint => {
                let reads = self.dropped_facts_read();
                format!(
                    "{rule} scopes to {tool} and resolves TRUE here ({}){reads}{text}",
                    self.explain(self.full)
                )
            }
            Fired::DroppedSupersederStaleKept => format!(
                "{rule} resolves {on_full} but {on_view}: {why}; the agent cannot see that this rule binds{text}"
            ),
            Fired::DroppedBindingFact => format!(
                "{rule} resolves {on_full} but {on_view}: {why}; the agent cannot tell that this rule binds{text}"
            ),
            Fired::StaleValueSafeDirection => format!(
                "{rule} resolves {on_view} but {on_full}: {why}; the agent will be more cautious than the records warrant: a cost, not a block reason"
            ),
            Fired::DroppedSupersederStalePermit => format!(
                "{rule} resolves {on_view} but {on_full}: {why}; the agent would license this call on a value or rule that was already taken back{text}"
            ),
            Fired::Permissive if !self.compaction.is_kept(self.pos) => format!(
                "{rule} resolves TRUE here ({}) but losing a permission cannot license an action; not a block reason",
                self.explain(self.full)
            ),
            Fired::Permissive => format!(
                "{rule} resolves {on_full} but {on_view}: {why}; losing a permission cannot license an action; not a block reason"
            ),
        }
    }

    /// Why the two views see this rule differently: revocation and fact drift.
    fn why_views_differ(&self) -> String {
        let mut parts = Vec::new();
        let pos = self.pos;
        if self.agent.has(pos) && !self.full.active(pos) {
            let revokers: Vec<String> = self
                .store
                .revokers_of(pos)
                .iter()
                .filter(|&&r| !self.agent.has(r))
                .filter_map(|&r| self.store.get(r))
                .map(|r| format!("'{}' (seq {})", clean(&r.id), r.seq))
                .collect();
            parts.push(format!(
                "it was revoked by dropped policy {}",
                revokers.join(", ")
            ));
        }
        for field in self.policy.predicate.fields() {
            if self.action.param(field).is_some() {
                continue;
            }
            let newest = self.full.newest_fact(field);
            let seen = self.agent.newest_fact(field);
            if newest == seen {
                continue;
            }
            // INVARIANT: `newest_fact` gives the position of a fact.
            let describe = |pos: Option<usize>| match pos.and_then(|p| self.store.get(p)) {
                Some(
                    r @ Record {
                        kind: Kind::Fact(f),
                        ..
                    },
                ) => {
                    // Brief: one fact may be described in the message of every rule.
                    format!(
                        "fact '{}' (= {}, seq {})",
                        clean_brief(&r.id),
                        json_brief(&f.value),
                        r.seq
                    )
                }
                _ => "no fact".to_string(),
            };
            let state = if newest.is_some_and(|p| self.compaction.is_kept(p)) {
                "kept"
            } else {
                "dropped"
            };
            parts.push(format!(
                "`{}`: the newest is {state} {}, the agent sees {}",
                clean(field),
                describe(newest),
                describe(seen)
            ));
        }
        if parts.is_empty() {
            "the views differ".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// `; it reads dropped fact 'f_020' (`customer.tier` = "standard", seq 20)`, for the
    /// facts a dropped rule needs restored beside it.
    fn dropped_facts_read(&self) -> String {
        let facts: Vec<String> = self
            .policy
            .predicate
            .fields()
            .into_iter()
            .filter(|f| self.action.param(f).is_none())
            .filter_map(|f| self.full.newest_fact(f))
            .filter(|&p| !self.compaction.is_kept(p))
            .filter_map(|p| self.store.get(p))
            .filter_map(|r| match &r.kind {
                // Brief: one fact may be named by every dropped rule that reads it.
                Kind::Fact(f) => Some(format!(
                    "'{}' (`{}` = {}, seq {})",
                    clean_brief(&r.id),
                    clean(&f.field),
                    json_brief(&f.value),
                    r.seq
                )),
                _ => None,
            })
            .collect();
        if facts.is_empty() {
            String::new()
        } else {
            format!("; it reads dropped fact {}", facts.join(", "))
        }
    }

    fn unresolved_fields(&self) -> String {
        let missing: Vec<String> = self
            .policy
            .predicate
            .fields()
            .into_iter()
            .filter(|f| {
                let env = Env {
                    action: self.action,
                    view: self.full,
                };
                env.resolve(f).is_none()
            })
            .map(|f| match self.full.newest_fact(f).and_then(|p| self.store.get(p)) {
                // The call gives a part of it apart from its value.
                _ if let Some(part) = self.action.part_apart(f) => format!(
                    "`{}` (the params give `{}` spelt apart from it, so the tool may read it with or without that part)",
                    clean(f),
                    clean(&part)
                ),
                // Its path through the params meets an array or a string.
                _ if let Some((at, what)) =
                    crate::action::elements_on_path(&self.action.params, f) =>
                {
                    format!(
                        "`{}` (its path through the params meets the {what} `{}`, which the gate does not read into)",
                        clean(f),
                        clean(at)
                    )
                }
                // Its newest statement is spelt another way and does not give it whole.
                Some(Record {
                    id,
                    seq,
                    kind: Kind::Fact(fact),
                    ..
                }) => format!(
                    "`{}` (its newest statement, fact '{}' (`{}` = {}, seq {seq}), does not give it whole)",
                    clean(f),
                    clean_brief(id),
                    clean(&fact.field),
                    json_brief(&fact.value)
                ),
                _ => format!("`{}`", clean(f)),
            })
            .collect();
        let noun = if missing.len() == 1 {
            "field"
        } else {
            "fields"
        };
        format!("{noun} {}", missing.join(", "))
    }

    /// Dropped records whose restoration makes the agent's view agree with the full one
    /// for this rule: the rule, its dropped revokers, the dropped newest facts it reads.
    fn restore(&self) -> Vec<String> {
        let mut positions = Vec::new();
        if !self.compaction.is_kept(self.pos) {
            positions.push(self.pos);
        }
        positions.extend(
            self.store
                .revokers_of(self.pos)
                .iter()
                .copied()
                .filter(|&r| !self.compaction.is_kept(r)),
        );
        for field in self.policy.predicate.fields() {
            if self.action.param(field).is_some() {
                continue;
            }
            if let Some(p) = self.full.newest_fact(field)
                && !self.compaction.is_kept(p)
            {
                positions.push(p);
            }
        }
        ids_in_seq_order(self.store, positions)
    }
}

fn ids_in_seq_order(store: &Store, mut positions: Vec<usize>) -> Vec<String> {
    positions.sort_unstable();
    positions.dedup();
    positions
        .into_iter()
        .filter_map(|p| store.get(p).map(|r| r.id.clone()))
        .collect()
}

/// The finding `check` reports for an effect record that `action` replays.
pub fn effect_finding(record: &Record, effect: &Effect, kept: bool, action: &Action) -> Finding {
    let matched = json_text(&Value::Object(effect.matches.clone()));
    // An effect of a glob names the glob, and the call's tool it covers.
    let ran = if effect.tool == action.tool {
        clean(&action.tool).into_owned()
    } else {
        format!(
            "{} (a glob covering {})",
            clean(&effect.tool),
            clean(&action.tool)
        )
    };
    if kept {
        Finding::new(
            Code::KeptEffectReplay,
            Some(record),
            format!(
                "kept effect '{}' records that {ran} already ran with {matched}; the agent can see it, and this call repeats it",
                clean(&record.id),
            ),
        )
    } else {
        let mut f = Finding::new(
            Code::DroppedEffectReplay,
            Some(record),
            format!(
                "dropped effect '{}' records that {ran} already ran with {matched} (seq {}); this call replays a non-idempotent side effect the agent can no longer see",
                clean(&record.id),
                record.seq
            ),
        );
        f.restore = vec![record.id.clone()];
        f
    }
}

/// The error `check` reports for a dropped effect it cannot tell whether `action`
/// replays ([`replay`] is UNKNOWN): names the field whose path meets an array or a
/// string, and the fix.
pub fn undecided_effect(record: &Record, effect: &Effect, action: &Action) -> Finding {
    // INVARIANT: `replay` is UNKNOWN, so some field meets an array or a string.
    let (field, at, what) = elements_met(effect, &action.params).unwrap_or_default();
    let mut f = Finding::new(
        Code::Undecided,
        Some(record),
        format!(
            "dropped effect '{}' (seq {}) records that {} already ran with {}; this call reaches the field `{}` only through the {what} `{}`, which the gate does not read into, so it cannot tell whether the call replays it: restore the record, or have its `match` name `{}` whole",
            clean(&record.id),
            record.seq,
            clean(&effect.tool),
            json_text(&Value::Object(effect.matches.clone())),
            clean(&field),
            clean(&at),
            clean(&at)
        ),
    );
    f.restore = vec![record.id.clone()];
    f
}

/// The note for a record whose kind the gate cannot evaluate but which looks like a
/// misspelt kind it can (a kept `Policy` binds nothing, where a kept `policy` would).
pub fn misspelt_kind_note(record: &Record, kind: &str) -> Option<Finding> {
    let near = crate::record::misspelt_kind(kind)?;
    Some(Finding::new(
        Code::MisspeltKind,
        Some(record),
        format!(
            "record '{}' (seq {}) is of kind `{}`, which the gate cannot evaluate: did you mean `{near}`?",
            clean(&record.id),
            record.seq,
            clean(kind)
        ),
    ))
}

/// The finding `check` reports for a dropped record of an unevaluable kind.
pub fn unevaluable_finding(record: &Record, kind: &str, options: CheckOptions) -> Finding {
    let base = format!(
        "dropped record '{}' (seq {}) is of kind `{}`, which the gate cannot evaluate: it can prove nothing about what it said",
        clean(&record.id),
        record.seq,
        clean(kind)
    );
    if options.allow_unevaluable {
        let mut f = Finding::new(
            Code::DroppedUnevaluableRecord,
            Some(record),
            format!("{base} {FLY_BLIND}"),
        );
        f.severity = Severity::Note;
        f
    } else {
        let mut f = Finding::new(Code::DroppedUnevaluableRecord, Some(record), base);
        f.restore = vec![record.id.clone()];
        f
    }
}

/// Most dropped inputs a derivation note names; it counts the rest, so that each note
/// stays a line however long a `depends_on` list is (a report that named them all grew
/// with kept derived records times their inputs).
pub const MAX_NAMED_INPUTS: usize = 5;

/// The note for a kept derived record whose inputs were dropped: the first
/// [`MAX_NAMED_INPUTS`] of them by name, and how many more.
pub fn derivation_note(
    store: &Store,
    compaction: &Compaction,
    totals: &Totals,
    record: &Record,
) -> Option<Finding> {
    let mut lost = record
        .depends_on()
        .iter()
        .filter(|id| !compaction.is_kept_id(store, totals, id));
    let named: Vec<String> = lost
        .by_ref()
        .take(MAX_NAMED_INPUTS)
        .map(|id| format!("'{}'", clean(id)))
        .collect();
    if named.is_empty() {
        return None;
    }
    let more = match lost.count() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(Finding::new(
        Code::DerivationInputDropped,
        Some(record),
        format!(
            "kept {} '{}' was derived from dropped {}{more}: its conclusion can no longer be checked",
            record.kind.name(),
            clean(&record.id),
            named.join(", ")
        ),
    ))
}

/// The first 160 characters of a record's prose, marked when cut.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 160;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", text.get(..i).unwrap_or(text)),
        None => text.to_string(),
    }
}
