//! Action-blind precheck (SPEC 5): could a dropped record bind some reachable call of
//! the tools?
//!
//! `check`'s finding for a policy depends only on that policy's predicate, its fields,
//! the two views and the firing table, so precheck judges policy by policy. For each
//! in-scope policy it builds the calls its predicate can tell apart ([`Calls`]): for
//! each param the predicate reads, one value per class of values its constants separate
//! (`Schema::reps`), within the tool's schema, plus "absent" where the schema lets a call
//! leave the param out; then every combination, up to `max_calls`. Each candidate is
//! judged by the gate's own code (`gate::policy_code`), so a witness is a call for which
//! `check` reports that very finding. Effects are matched against the schema directly.
//! A tool name may be a glob: it stands for every tool it covers, and a rule is judged
//! over it when its scope meets the glob ([`Target`]). A call `check` fails closed on
//! whatever is kept is a note; only what the compaction causes, or a rule that can never
//! be decided, is an error. Where the candidates cannot be built exactly (the bound,
//! overlapping fields, huge constants) precheck answers "may bind": sound, never a
//! silent PASS. No I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::action::{Action, Tool};
use crate::compaction::{Compaction, Totals};
use crate::gate::{self, CheckOptions, Code, Finding, Outcome, Severity, View};
use crate::harness::Harness;
use crate::json::json_text;
use crate::predicate::{Op, Predicate, Tri, json_eq};
use crate::record::{
    Effect, Kind, Named, Policy, PolicyEffect, Record, Store, glob_match, glob_meet,
};
use crate::schema::{Probe, Schema, Undecided};
use crate::text::clean;

mod calls;

pub use calls::{Calls, Domain, Unchecked, domains, probes};

/// How many calls precheck and pin try per rule and tool before answering "may bind".
pub const DEFAULT_MAX_CALLS: usize = 100_000;

/// Options for precheck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrecheckOptions {
    /// Turn dropped unevaluable records into a signed note instead of a block.
    pub allow_unevaluable: bool,
    /// The most calls tried per rule and tool (`--max-calls`).
    pub max_calls: usize,
    /// The harness that runs the calls, when known (`--harness`): under one that runs a
    /// call outside the tool's schema (Claude Code, Codex), no schema bounds the calls.
    pub harness: Option<Harness>,
}

impl Default for PrecheckOptions {
    fn default() -> PrecheckOptions {
        PrecheckOptions {
            allow_unevaluable: false,
            max_calls: DEFAULT_MAX_CALLS,
            harness: None,
        }
    }
}

/// The codes `check` can give a policy that fail closed, by its effect and whether its
/// predicate orders a value (only then can it meet a type mismatch).
fn error_codes(effect: PolicyEffect, orders: bool) -> &'static [Code] {
    match (effect.is_restrictive(), orders) {
        (true, true) => &[Code::UnresolvedField, Code::TypeMismatch],
        (true, false) => &[Code::UnresolvedField],
        (false, true) => &[Code::TypeMismatch],
        (false, false) => &[],
    }
}

/// The codes `check` can give a policy that block, by its effect and whether it is kept.
fn block_codes(effect: PolicyEffect, kept: bool) -> &'static [Code] {
    match (effect.is_restrictive(), kept) {
        (true, false) => &[Code::DroppedBindingConstraint],
        (true, true) => &[Code::DroppedSupersederStaleKept, Code::DroppedBindingFact],
        (false, _) => &[Code::DroppedSupersederStalePermit],
    }
}

/// `dropped policy 'f_011' (require_approval)`
fn rule_name(record: &Record, policy: &Policy, kept: bool) -> String {
    format!(
        "{} policy '{}' ({})",
        if kept { "kept" } else { "dropped" },
        clean(&record.id),
        policy.effect.as_str()
    )
}

/// A tool a policy scopes to, as precheck judges it: the domain its calls come from (a
/// glob's domain stands for every tool it covers) and a tool name that both the domain
/// and the policy's scope cover, which its witnesses call.
pub struct Target<'d> {
    /// The tool name the witnesses call.
    pub tool: String,
    /// The params the calls may have.
    pub domain: &'d Domain,
}

impl<'d> Target<'d> {
    /// The target of `domain` for `policy`, or `None` when the policy scopes no tool the
    /// domain covers.
    pub fn of(policy: &Policy, domain: &'d Domain) -> Option<Target<'d>> {
        let tool = policy.scope.iter().find_map(|s| domain.meets(s))?;
        Some(Target { tool, domain })
    }

    /// The targets of `domains` for `policy`, but those whose tool has no schema after
    /// the first: every such tool takes any params, and a rule's calls are judged alike
    /// whatever tool of its scope they call, so one stands for the rest (a store naming
    /// many tools would judge each rule again for each of them, to the same end).
    pub fn all_of(policy: &Policy, domains: &[&'d Domain]) -> Vec<Target<'d>> {
        let mut any_seen = false;
        domains
            .iter()
            .filter_map(|d| Target::of(policy, d))
            .filter(|t| t.domain.declared || !std::mem::replace(&mut any_seen, true))
            .collect()
    }
}

/// A target of a policy whose calls could not be built (the bound, the spellings of a
/// field), with what its calls could show.
struct Unbuilt<'t, 'd> {
    target: &'t Target<'d>,
    why: Undecided,
    /// Some call of its tool can make `check` block on the policy.
    can_block: bool,
    /// Both views judge the policy alike for every call of its tool.
    agree: bool,
    /// Some call of its tool may make `check` fail closed under this compaction only.
    here: bool,
}

/// What one call shows about one policy under the compaction (SPEC 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Seen {
    /// `check` blocks the call on this policy.
    Block(Code),
    /// `check` fails closed on the call under this compaction, and decides it on this
    /// policy with nothing dropped: the compaction's doing.
    Error(Code),
    /// `check` fails closed on the call whatever is kept (it omits or mistypes a param the
    /// rule reads): not the compaction's doing.
    Whatever(Code),
}

/// One policy under one compaction, as precheck and pin judge it.
pub struct PolicyScan<'a> {
    store: &'a Store,
    compaction: &'a Compaction,
    pos: usize,
    record: &'a Record,
    policy: &'a Policy,
    probes: BTreeMap<String, Probe>,
    full: View<'a>,
    agent: View<'a>,
    /// The value of each field the rule reads in each view, looked up once for the
    /// many calls judged ([`View::with_facts`]).
    full_facts: Vec<(String, Option<&'a Value>)>,
    agent_facts: Vec<(String, Option<&'a Value>)>,
}

impl<'a> PolicyScan<'a> {
    /// The policy at `pos`, or `None` when the record there is no policy.
    pub fn new(store: &'a Store, compaction: &'a Compaction, pos: usize) -> Option<PolicyScan<'a>> {
        let record = store.get(pos)?;
        let Kind::Policy(policy) = &record.kind else {
            return None;
        };
        let full = View::full(store);
        let agent = View::agent(store, compaction);
        let mut probes = probes(&policy.predicate);
        let full_facts = full.fact_values(probes.keys().map(String::as_str));
        let agent_facts = agent.fact_values(probes.keys().map(String::as_str));
        for ((probe, (_, full)), (_, agent)) in
            probes.values_mut().zip(&full_facts).zip(&agent_facts)
        {
            probe.fact = full.is_some() || agent.is_some();
        }
        Some(PolicyScan {
            store,
            compaction,
            pos,
            record,
            policy,
            probes,
            full,
            agent,
            full_facts,
            agent_facts,
        })
    }

    /// The fields the predicate reads.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.probes.keys().map(String::as_str)
    }

    /// The reachable calls of `tool` with the params of `domain` that the predicate can
    /// tell apart.
    pub fn calls(&self, tool: &str, domain: &Domain, max_calls: usize) -> Result<Calls, Undecided> {
        Calls::new(tool, domain, &self.probes, max_calls)
    }

    /// [`PolicyScan::calls`] without the walk of every call that tells whether the calls
    /// skipped may hide one `check` takes: the caller runs it ([`PolicyScan::sampled`])
    /// where no call it tried showed what it looks for.
    pub fn calls_unsampled(
        &self,
        tool: &str,
        domain: &Domain,
        max_calls: usize,
    ) -> Result<Calls, Undecided> {
        Calls::unsampled(tool, domain, &self.probes, max_calls)
    }

    /// `Err` when the calls `calls` skips may hide one `check` takes (see
    /// [`Calls::spelt_once_as_sampled`]).
    pub fn sampled(&self, calls: &Calls) -> Result<(), Undecided> {
        calls.spelt_once_as_sampled(&self.probes)
    }

    fn kept(&self) -> bool {
        self.compaction.is_kept(self.pos)
    }

    /// Does the agent's view see some field this rule reads differently, for a call of
    /// `domain` that leaves it to facts?
    fn facts_differ(&self, domain: &Domain) -> bool {
        self.fields().any(|f| {
            domain.may_leave_unset(f) && self.full.newest_fact(f) != self.agent.newest_fact(f)
        })
    }

    /// Can this compaction make `check` block some call of `domain` on this policy? A
    /// restrictive rule blocks only where it is active on the full records and dropped,
    /// or kept but seen differently; an allow rule only where the agent sees it active
    /// and the full records differ. When the two views agree on everything the rule reads
    /// for every reachable call, `check` can only fail closed on it, never block.
    fn can_block(&self, domain: &Domain) -> bool {
        let full_active = self.full.active(self.pos);
        let agent_active = self.agent.active(self.pos);
        let facts_differ = self.facts_differ(domain);
        if self.policy.effect.is_restrictive() {
            full_active && (!self.kept() || facts_differ || !agent_active)
        } else {
            agent_active && (!full_active || facts_differ)
        }
    }

    /// Do both views judge this rule alike for every call of `domain`? Then `check` says
    /// on it under this compaction exactly what it says with nothing dropped.
    fn views_agree(&self, domain: &Domain) -> bool {
        self.kept()
            && self.full.active(self.pos) == self.agent.active(self.pos)
            && !self.facts_differ(domain)
    }

    /// Can this compaction make `check` fail closed on this rule for some call of
    /// `domain` where, with nothing dropped, it decides it? Only where the agent's view
    /// evaluates the rule and may see it otherwise than the full records: a rule that is
    /// not active there (dropped, or revoked by a kept rule) is evaluated on the full
    /// records alone, so `check` fails closed on it exactly as with nothing dropped.
    fn may_fail_here(&self, domain: &Domain) -> bool {
        self.agent.active(self.pos) && !self.views_agree(domain)
    }

    /// What `action` shows about this policy under the compaction, if anything.
    fn seen(&self, action: &Action) -> Option<Seen> {
        let full = self.full.with_facts(&self.full_facts);
        let agent = self.agent.with_facts(&self.agent_facts);
        let code = gate::policy_code(self.compaction, full, agent, action, self.pos)?;
        match code.severity() {
            Severity::Block => Some(Seen::Block(code)),
            Severity::Note => None,
            Severity::Error => {
                // With nothing dropped both views are the full one: `check` fails closed
                // there when the full records cannot evaluate the rule, or leave a
                // restrictive one UNKNOWN.
                let whatever = match gate::policy_truth(self.store, full, action, self.pos) {
                    None => true,
                    Some(Tri::Unknown) => self.policy.effect.is_restrictive(),
                    Some(_) => false,
                };
                Some(if whatever {
                    Seen::Whatever(code)
                } else {
                    Seen::Error(code)
                })
            }
        }
    }

    /// The first call (in enumeration order) that shows each of `wanted`, with the index
    /// of its target.
    fn witnesses(
        &self,
        at: usize,
        calls: &Calls,
        wanted: &BTreeSet<Seen>,
        found: &mut BTreeMap<Seen, (usize, Action)>,
    ) {
        let mut missing: BTreeSet<Seen> = wanted
            .iter()
            .copied()
            .filter(|s| !found.contains_key(s))
            .collect();
        if missing.is_empty() {
            return;
        }
        calls.try_each(|action| {
            if let Some(seen) = self.seen(action)
                && missing.remove(&seen)
            {
                found.insert(seen, (at, action.clone()));
            }
            missing.is_empty()
        });
    }

    /// Dropped records whose restoration makes the views agree on this policy for any
    /// call: the rule, its dropped revokers, the dropped newest facts it reads.
    fn restore_all(&self) -> Vec<String> {
        let mut positions: Vec<usize> = Vec::new();
        if !self.kept() {
            positions.push(self.pos);
        }
        positions.extend(self.store.revokers_of(self.pos).iter().copied());
        positions.extend(self.fields().filter_map(|f| self.full.newest_fact(f)));
        positions.sort_unstable();
        positions.dedup();
        positions
            .into_iter()
            .filter(|&p| !self.compaction.is_kept(p))
            .filter_map(|p| self.store.get(p).map(|r| r.id.clone()))
            .collect()
    }

    /// The fields this rule reads that no call of `domain` sets and no fact resolves.
    fn never_resolved(&self, domain: &Domain) -> Vec<&str> {
        self.fields()
            .filter(|f| !domain.may_set(f) && self.full.fact_value(f).is_none())
            .collect()
    }

    /// Precheck's findings for this policy over the tools it scopes to.
    fn judge(&self, targets: &[Target<'_>], max_calls: usize) -> Vec<Finding> {
        if !self.full.active(self.pos) && !self.agent.active(self.pos) {
            // FALSE in both views for every call: `check` says nothing.
            return Vec::new();
        }
        let effect = self.policy.effect;
        let mut found: BTreeMap<Seen, (usize, Action)> = BTreeMap::new();
        let mut undecided: Vec<Unbuilt<'_, '_>> = Vec::new();
        for (at, target) in targets.iter().enumerate() {
            let domain = target.domain;
            let can_block = self.can_block(domain);
            let agree = self.views_agree(domain);
            let here = self.may_fail_here(domain);
            let errors = error_codes(effect, self.policy.predicate.orders())
                .iter()
                .copied();
            let mut wanted: BTreeSet<Seen> = errors.clone().map(Seen::Whatever).collect();
            if here {
                wanted.extend(errors.map(Seen::Error));
            }
            if can_block {
                wanted.extend(
                    block_codes(effect, self.kept())
                        .iter()
                        .map(|&c| Seen::Block(c)),
                );
            }
            // Whether the calls skipped may hide one `check` takes is asked only where a
            // witness is still missing (it walks every call): a witness found decides
            // what it shows, whatever they hide.
            let why = match self.calls_unsampled(&target.tool, domain, max_calls) {
                Ok(calls) => {
                    self.witnesses(at, &calls, &wanted, &mut found);
                    match wanted.iter().all(|s| found.contains_key(s)) {
                        true => None,
                        false => self.sampled(&calls).err(),
                    }
                }
                Err(why) => Some(why),
            };
            if let Some(why) = why {
                undecided.push(Unbuilt {
                    target,
                    why,
                    can_block,
                    agree,
                    here,
                });
            }
        }
        let rule = rule_name(self.record, self.policy, self.kept());
        let mut out: Vec<Finding> = found
            .iter()
            .filter_map(|(seen, (at, action))| Some(self.finding(*seen, action, targets.get(*at)?)))
            .collect();
        let blocked = found.keys().any(|s| matches!(s, Seen::Block(_)));
        let errored = found.keys().any(|s| matches!(s, Seen::Error(_)));
        let decided = undecided.is_empty();
        // What some target left undecided may show: a block where one can block, else a
        // failure under this compaction only where one may fail so (the first target
        // undecided need not be the one that can).
        let blocking = undecided.iter().find(|u| u.can_block).filter(|_| !blocked);
        let failing = undecided.iter().find(|u| u.here).filter(|_| !errored);
        if let Some(Unbuilt {
            target, why, agree, ..
        }) = blocking.or(failing).or(undecided.first())
        {
            let tool = clean(&target.domain.name);
            let never = self.never_resolved(target.domain);
            if blocking.is_some() {
                let mut f = Finding::new(
                    Code::MayBindSomeAction,
                    Some(self.record),
                    format!(
                        "{rule} may bind some reachable call of {tool}: precheck could not decide, because {}; this is sound, not a proof",
                        why.describe()
                    ),
                );
                f.restore = self.restore_all();
                out.push(f);
            } else if failing.is_some() {
                out.push(Finding::new(
                    Code::Undecided,
                    Some(self.record),
                    format!(
                        "{rule}: precheck cannot decide whether some reachable call of {tool} makes check fail closed on it under this compaction only, because {}; this compaction cannot make it bind",
                        why.describe()
                    ),
                ));
            } else if *agree
                && effect.is_restrictive()
                && self.full.active(self.pos)
                && !never.is_empty()
                && !found.contains_key(&Seen::Whatever(Code::UnresolvedField))
            {
                out.push(Finding::new(
                    Code::UnresolvedField,
                    Some(self.record),
                    format!(
                        "{rule} reads {} that no reachable call of {tool} sets and no fact resolves: the rule can never be decided",
                        names(&never)
                    ),
                ));
            }
        }
        if decided
            && !blocked
            && effect.is_restrictive()
            && !self.kept()
            && self.full.active(self.pos)
            && let Some(note) = self.ruled_out(targets, max_calls)
        {
            out.push(note);
        }
        out
    }

    /// A precheck finding for the call `action` of `target`, which shows `seen`.
    fn finding(&self, seen: Seen, action: &Action, target: &Target<'_>) -> Finding {
        let (Seen::Block(code) | Seen::Error(code) | Seen::Whatever(code)) = seen;
        // INVARIANT: `policy_code` gave `code` for this call, so `check` reports it; the
        // fallback only keeps a hazard from vanishing if that ever broke.
        let check = gate::judge_policy(self.store, self.compaction, action, self.pos)
            .unwrap_or_else(|| Finding::new(code, Some(self.record), String::new()));
        let tool = clean(&action.tool);
        let mut f = match seen {
            Seen::Block(_) => Finding::new(
                Code::MayBindSomeAction,
                Some(self.record),
                format!(
                    "a reachable call of {tool} gets {}: {}",
                    code.as_str(),
                    check.message
                ),
            ),
            Seen::Error(_) => Finding::new(
                code,
                Some(self.record),
                format!(
                    "a reachable call of {tool}: {} (under this compaction only: with nothing dropped, check decides this call)",
                    check.message
                ),
            ),
            Seen::Whatever(_) => {
                let never = self.never_resolved(target.domain);
                if code == Code::UnresolvedField && !never.is_empty() {
                    Finding::new(
                        code,
                        Some(self.record),
                        format!(
                            "a reachable call of {tool}: {} (no reachable call of {} sets {} and no fact resolves it: the rule can never be decided)",
                            check.message,
                            clean(&target.domain.name),
                            names(&never)
                        ),
                    )
                } else {
                    Finding::new(
                        Code::FailsWhateverKept,
                        Some(self.record),
                        format!(
                            "a reachable call of {tool} gets {} whatever the compaction keeps: {}{}",
                            code.as_str(),
                            check.message,
                            self.schema_hint(code, action)
                        ),
                    )
                }
            }
        };
        if matches!(seen, Seen::Block(_)) {
            f.restore = check.restore;
        }
        f.witness = Some(action.clone());
        f
    }

    /// What schema would rule out a call that `check` fails closed on whatever is kept.
    /// A field whose path meets an array or a string of the call (`name.0` in
    /// `{"name": ""}`) is given only by a call in which that value is neither: the hint
    /// says so beside requiring the field; one the call gives a part of apart
    /// (`amount.part`) only by a call without that key.
    fn schema_hint(&self, code: Code, action: &Action) -> String {
        let mut clauses = Vec::new();
        if code == Code::UnresolvedField {
            let mut required = Vec::new();
            for f in self
                .fields()
                .filter(|f| action.param(f).is_none() && self.full.fact_value(f).is_none())
            {
                required.push(f);
                if let Some((at, what)) = crate::action::elements_on_path(&action.params, f) {
                    let clause = format!("does not let `{}` be {}", clean(at), what.a());
                    if !clauses.contains(&clause) {
                        clauses.push(clause);
                    }
                }
            }
            if !required.is_empty() {
                clauses.insert(0, format!("requires {}", names(&required)));
            }
            for part in self.fields().filter_map(|f| action.part_apart(f)) {
                let clause = format!("admits no key `{}`", clean(&part));
                if !clauses.contains(&clause) {
                    clauses.push(clause);
                }
            }
        } else {
            let typed: Vec<&str> = self
                .fields()
                .filter(|f| action.param(f).is_some())
                .collect();
            if !typed.is_empty() {
                clauses.push(format!("types {}", names(&typed)));
            }
        }
        if clauses.is_empty() {
            return String::new();
        }
        format!(" (a schema that {} rules it out)", clauses.join(" and "))
    }

    /// A note when the tools' schemas are what keeps this dropped rule from binding.
    fn ruled_out(&self, targets: &[Target<'_>], max_calls: usize) -> Option<Finding> {
        let declared = targets.iter().find(|t| t.domain.declared)?;
        let open = Domain::any(&declared.domain.name);
        let calls = self.calls(&declared.tool, &open, max_calls).ok()?;
        let mut found = BTreeMap::new();
        let wanted = BTreeSet::from([Seen::Block(Code::DroppedBindingConstraint)]);
        self.witnesses(0, &calls, &wanted, &mut found);
        let (_, (_, example)) = found.into_iter().next()?;
        Some(Finding::new(
            Code::RuledOutBySchema,
            Some(self.record),
            format!(
                "{} binds calls that the schema of {} rules out (e.g. {}), and no call it admits: not a block reason",
                rule_name(self.record, self.policy, false),
                clean(&declared.domain.name),
                json_text(&Value::Object(example.params))
            ),
        ))
    }
}

/// `` `amount`, `tier` ``
fn names(fields: &[&str]) -> String {
    fields
        .iter()
        .map(|f| format!("`{}`", clean(f)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A call that replays `effect`, of a tool that both the effect's `tool` and `domain`
/// cover (the domain's own name when it is a plain name), with the params of `domain`:
/// its `match` entries, plus the required params filled; `None` when no tool name is
/// covered by both, or the schema admits no such call. `check` reports the effect for
/// the call it gives.
pub fn effect_witness(domain: &Domain, effect: &Effect) -> Result<Option<Action>, Undecided> {
    let Some(tool) = glob_meet(&effect.tool, &domain.name) else {
        return Ok(None);
    };
    if !glob_match(&effect.tool, &tool) {
        // Two globs too long to search exactly: they may meet, in a name not found.
        return Err(Undecided::Globs(effect.tool.clone(), domain.name.clone()));
    }
    let schema = &domain.schema;
    if let Some(values) = schema.finite() {
        let mut undecided = None;
        for v in values {
            // Params that spell a field twice are no call `check` accepts.
            let Value::Object(params) = v else { continue };
            if crate::action::one_spelling(&params).is_err() {
                continue;
            }
            let action = Action {
                tool: tool.clone(),
                params,
            };
            match gate::replay(effect, &action) {
                Tri::True => return Ok(Some(action)),
                Tri::Unknown => {
                    // INVARIANT: `replay` is UNKNOWN, so some field meets an array or a
                    // string.
                    let (field, at, what) =
                        gate::elements_met(effect, &action.params).unwrap_or_default();
                    undecided.get_or_insert(Undecided::Elements(field, at, vec![what]));
                }
                Tri::False => {}
            }
        }
        return match undecided {
            Some(why) => Err(why),
            None => Ok(None),
        };
    }
    if !schema.admits_objects() {
        return Ok(None);
    }
    let fields = effect.fields();
    let mut params = Map::new();
    for (at, (key, value)) in fields.iter().enumerate() {
        // A field `match` gives twice (`{"a.b": 1, "a": {"b": 1}}`): once; with two
        // values, no call `check` accepts replays it (it refuses both spellings at once).
        if let Some((_, before)) = fields
            .get(..at)
            .into_iter()
            .flatten()
            .find(|(k, _)| k == key)
        {
            if json_eq(before, value) {
                continue;
            }
            return Ok(None);
        }
        if schema.slot(key).schema.admits(value) && !params.contains_key(key) {
            params.insert(key.clone(), (*value).clone());
            continue;
        }
        // `check` reads a key with dots through nested objects too ([`gate::replay`]):
        // a call may give the value at any spelling of it that the schema admits.
        let spellings = crate::action::spellings(key)
            .ok_or_else(|| Undecided::Spellings(key.clone(), crate::action::MAX_SPELLING_DOTS))?;
        let Some(path) = spellings
            .iter()
            .find(|path| path.len() > 1 && schema.admits_at(path, value))
        else {
            // No call gives the field this value; one that reaches an array or a string
            // on its way (`items` for `items.0.amount`, `name` for `name.0` or
            // `name.length`) gives it none the gate reads, and `check` cannot tell
            // whether that call replays the effect ([`gate::replay`]).
            let elements = spellings.iter().find_map(|path| {
                (1..path.len())
                    .find(|&n| {
                        path.get(..n)
                            .is_some_and(|p| schema.may_hold_array(p) || schema.may_hold_string(p))
                    })
                    .and_then(|n| path.get(..n))
            });
            // Which of the two a call may give there, as
            // [`crate::action::elements_on_path`] reads it.
            let elements = elements.map(|at| {
                let mut what = Vec::new();
                if schema.may_hold_array(at) {
                    what.push(crate::predicate::Elements::Array);
                }
                if schema.may_hold_string(at) {
                    what.push(crate::predicate::Elements::String);
                }
                (at, what)
            });
            return match elements {
                Some((at, what)) => Err(Undecided::Elements(key.clone(), at.join("."), what)),
                None => Ok(None),
            };
        };
        if !insert_at(&mut params, path, value) {
            return Err(Undecided::Overlap(key.clone()));
        }
    }
    for key in schema.required() {
        if params.contains_key(key) {
            continue;
        }
        // A required object some fields were given below with dotted keys (`invoice.id`
        // for a required `invoice`): they move into it, so that the call spells each
        // field once, as `check` requires of a call; a sampled `invoice` beside them
        // would give `invoice.id` a second value.
        let prefix = format!("{key}.");
        let below: Vec<String> = params
            .keys()
            .filter(|k| k.starts_with(&prefix))
            .cloned()
            .collect();
        if !below.is_empty() {
            for dotted in below {
                let rest = dotted.get(prefix.len()..).unwrap_or_default();
                let path = [key, rest];
                let Some(value) = params.remove(&dotted) else {
                    continue;
                };
                if !schema.admits_at(&path, &value) || !insert_at(&mut params, &path, &value) {
                    return Err(Undecided::Overlap(dotted));
                }
            }
            continue;
        }
        match schema.slot(key).schema.sample()? {
            Some(v) => {
                params.insert(key.to_string(), v);
            }
            None => return Ok(None),
        }
    }
    // An object built to hold `match` fields (`invoice` for `invoice.id`) gets the keys
    // its own schema requires, so that the witness is a call the schema admits.
    for (key, value) in params.iter_mut() {
        if let Value::Object(inner) = value
            && !fill_required(schema.slot(key).schema, inner)?
        {
            return Err(Undecided::Overlap(key.clone()));
        }
    }
    // A witness is a call `check` accepts: each field spelt once.
    if let Err(
        crate::action::ActionError::TwoSpellings(field)
        | crate::action::ActionError::ThroughArray(field, _, _),
    ) = crate::action::one_spelling(&params)
    {
        return Err(Undecided::Overlap(field));
    }
    let action = Action { tool, params };
    // Two `match` fields that meet in one nested object (`a` and `a.b`): not built here.
    // The undecided field is the first one the call does not give as `match` does.
    if let Some((key, _)) = fields
        .iter()
        .find(|(k, v)| !action.param(k).is_some_and(|p| json_eq(p, v)))
    {
        return Err(Undecided::Overlap(key.clone()));
    }
    Ok(Some(action))
}

/// Gives `object`, and each object below it, the keys its schema requires and it lacks,
/// each a sampled value; `false` when a required key has no admitted value (another
/// spelling of the fields might still make a call, so the caller does not rule one out).
fn fill_required(schema: &Schema, object: &mut Map<String, Value>) -> Result<bool, Undecided> {
    for key in schema.required() {
        if object.contains_key(key) {
            continue;
        }
        match schema.slot(key).schema.sample()? {
            Some(v) => drop(object.insert(key.to_string(), v)),
            None => return Ok(false),
        }
    }
    for (key, value) in object.iter_mut() {
        if let Value::Object(inner) = value
            && !fill_required(schema.slot(key).schema, inner)?
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Puts `value` at the nested `path` of `params`, making the objects on the way; `false`
/// when something is there already.
fn insert_at(params: &mut Map<String, Value>, path: &[&str], value: &Value) -> bool {
    let [keys @ .., last] = path else {
        return false;
    };
    let mut here = params;
    for key in keys {
        let slot = here
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(inner) = slot else {
            return false;
        };
        here = inner;
    }
    if here.contains_key(*last) {
        return false;
    }
    here.insert((*last).to_string(), value.clone());
    true
}

/// Precheck's finding for a dropped effect over the tools its `tool` meets (some name is
/// covered by both, [`effect_meets`]): the first replaying call, else a replay it could
/// not rule out, else a note when a schema rules every replay out.
fn effect_findings(record: &Record, effect: &Effect, covering: &[&Domain]) -> Option<Finding> {
    let mut undecided = None;
    for domain in covering {
        match effect_witness(domain, effect) {
            Ok(Some(action)) => {
                let check = gate::effect_finding(record, effect, false, &action);
                let mut f = Finding::new(
                    Code::MayBindSomeAction,
                    Some(record),
                    format!(
                        "a reachable call of {} gets {}: {}",
                        clean(&action.tool),
                        check.code.as_str(),
                        check.message
                    ),
                );
                f.restore = check.restore;
                f.witness = Some(action);
                return Some(f);
            }
            Ok(None) => {}
            Err(why) => {
                undecided.get_or_insert((domain, why));
            }
        }
    }
    if let Some((domain, why)) = undecided {
        let mut f = Finding::new(
            Code::MayBindSomeAction,
            Some(record),
            format!(
                "dropped effect '{}' may be replayed by a reachable call of {}: precheck could not decide, because {}",
                clean(&record.id),
                clean(&domain.name),
                why.describe()
            ),
        );
        f.restore = vec![record.id.clone()];
        return Some(f);
    }
    let declared = covering.iter().find(|d| d.declared)?;
    let tool = clean(&declared.name);
    Some(Finding::new(
        Code::RuledOutBySchema,
        Some(record),
        format!(
            "dropped effect '{}' records a call of {} with {} that the schema of {tool} rules out: no reachable call replays it",
            clean(&record.id),
            clean(&effect.tool),
            json_text(&Value::Object(effect.matches.clone()))
        ),
    ))
}

/// Whether some call of `domain`'s tool may replay `effect`: some tool name is covered
/// both by the effect's `tool` and by the domain's name (either may be a glob), as
/// [`Domain::meets`] decides.
pub fn effect_meets(effect: &Effect, domain: &Domain) -> bool {
    domain.meets(&effect.tool).is_some()
}

/// Notes on how a tool's schema was read: keywords ignored, no reachable call.
pub fn schema_notes(domain: &Domain) -> Vec<Finding> {
    let tool = clean(&domain.name);
    let mut out = Vec::new();
    if let Some(e) = &domain.unreadable {
        out.push(Finding::new(
            Code::ToolSchema,
            None,
            format!("the schema of {tool} could not be read ({e}): precheck reads it as admitting any params"),
        ));
    }
    match &domain.unchecked {
        Some(Unchecked::Uncompiled(why)) => out.push(Finding::new(
            Code::ToolSchema,
            None,
            format!("the schema of {tool} is one Gemini CLI's validator cannot compile ({why}), and then it checks no call against it and runs every call: precheck reads it as admitting any params (fix the tool's own schema, and give the gate the same)"),
        )),
        Some(Unchecked::NotHeld(harness)) => out.push(Finding::new(
            Code::ToolSchema,
            None,
            format!("the schema of {tool} bounds no call under {harness}, which runs an MCP tool's call whatever its schema says, and checks a built-in tool's call against its own schema, not this one: precheck reads it as admitting any params", harness = harness.title()),
        )),
        Some(Unchecked::McpName) => out.push(Finding::new(
            Code::ToolSchema,
            None,
            format!("the schema of {tool} bounds no call: the name is an MCP tool's as Claude Code and Codex give it (or a glob that covers one), and both run its calls whatever its schema says: precheck reads it as admitting any params (--harness gemini-cli reads the schema as a bound, where Gemini CLI runs the calls)"),
        )),
        None => {}
    }
    if !domain.ignored.is_empty() && domain.unchecked.is_none() {
        let names: Vec<String> = domain
            .ignored
            .iter()
            .map(|k| format!("`{}`", clean(k)))
            .collect();
        out.push(Finding::new(
            Code::ToolSchema,
            None,
            format!(
                "the schema of {tool} uses {}, which precheck does not model: it reads them as admitting every value (sound; a witness may not satisfy them)",
                names.join(", ")
            ),
        ));
    }
    if !domain.has_calls() {
        out.push(Finding::new(
            Code::ToolSchema,
            None,
            format!("the schema of {tool} admits no params object: the tool has no reachable call"),
        ));
    }
    out
}

/// How many of the names not listed a [`not_listed`] note spells out.
const NOT_LISTED_SHOWN: usize = 5;

/// The names and globs of `named` (those a policy scopes to or an effect gives, SPEC 2.3)
/// that no tool of `tools` covers. A listed glob covers a name when it matches it as text
/// (`*` covers every name, `refunds.*` covers `refunds.create` and `refunds.*`).
fn uncovered<'a>(named: &'a Named, tools: &[Tool]) -> Vec<&'a str> {
    named
        .iter()
        .filter(|name| !tools.iter().any(|t| glob_match(&t.name, name)))
        .collect()
}

/// The tools precheck and pin judge, read: `tools`, and after them, as a tool with no
/// schema (any params), every name or glob of `named` that none of them covers, which
/// leaves to `tools` the plain names they cover ([`Domain::meets`]). A list given is the
/// agent's tools, but precheck and pin never judge fewer tools than a rule in the store
/// scopes to (SPEC 2.3): a name misspelt or left out of the list leaves no rule out of
/// their sight. Only `tools` when no list was given (they are the named).
pub fn judged(named: &Named, tools: &[Tool], harness: Option<Harness>) -> Vec<Domain> {
    let mut all = domains(tools, harness);
    let missing = uncovered(named, tools);
    if !missing.is_empty() {
        let listed: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        all.extend(missing.into_iter().map(|name| Domain {
            listed: listed.clone(),
            ..Domain::any(name)
        }));
    }
    all
}

/// A note when some tool name or glob of `named` is covered by no tool of `tools`:
/// precheck and pin judged it all the same, as a tool that takes any params ([`judged`]),
/// so a BLOCK or a pin may come from a rule of a tool the list leaves out. None when
/// `tools` are the named ones (no list given), or cover them.
pub fn not_listed(named: &Named, tools: &[Tool]) -> Option<Finding> {
    let missing = uncovered(named, tools);
    let count = missing.len();
    if count == 0 {
        return None;
    }
    let shown: Vec<String> = missing
        .iter()
        .take(NOT_LISTED_SHOWN)
        .map(|n| clean(n).into_owned())
        .collect();
    let mut names = shown.join(", ");
    if count > shown.len() {
        names.push_str(&format!(" and {} more", count - shown.len()));
    }
    let (what, fix) = if count == 1 {
        (
            "tool name a policy scopes to or an effect gives is covered by no tool listed, and was judged as a tool that takes any params",
            "list it if the agent has it, with its schema only where the harness refuses calls outside it",
        )
    } else {
        (
            "tool names a policy scopes to or an effect gives are covered by no tool listed, and were judged as tools that take any params",
            "list those the agent has, with their schemas only where the harness refuses calls outside them",
        )
    };
    Some(Finding::new(
        Code::NotListed,
        None,
        format!("{count} {what}: {names} ({fix})"),
    ))
}

/// Runs precheck: could a dropped record bind some reachable call of `tools` under
/// `compaction`? Never reads an action.
pub fn precheck(
    store: &Store,
    compaction: &Compaction,
    totals: &Totals,
    tools: &[Tool],
    options: PrecheckOptions,
) -> Outcome {
    let domains = judged(&totals.named, tools, options.harness);
    let mut findings: Vec<Finding> = domains.iter().flat_map(schema_notes).collect();
    findings.extend(not_listed(&totals.named, tools));
    let live: Vec<&Domain> = domains.iter().filter(|d| d.has_calls()).collect();
    let check_options = CheckOptions {
        allow_unevaluable: options.allow_unevaluable,
    };
    findings.extend(gate::each_record(store, |pos, record, findings| {
        let kept = compaction.is_kept(pos);
        match &record.kind {
            Kind::Policy(policy) => {
                let targets = Target::all_of(policy, &live);
                if !targets.is_empty()
                    && let Some(scan) = PolicyScan::new(store, compaction, pos)
                {
                    findings.extend(scan.judge(&targets, options.max_calls));
                }
            }
            Kind::Effect(effect) if !kept => {
                // A glob stands for every tool it covers (SPEC 2.3), in a listed tool as in
                // an effect's `tool`.
                let covering: Vec<&Domain> = live
                    .iter()
                    .copied()
                    .filter(|d| effect_meets(effect, d))
                    .collect();
                if !covering.is_empty() {
                    findings.extend(effect_findings(record, effect, &covering));
                }
            }
            Kind::Unevaluable(kind) if !kept => {
                findings.push(gate::unevaluable_finding(record, kind, check_options));
            }
            _ => {}
        }
        if kept {
            findings.extend(gate::derivation_note(store, compaction, totals, record));
        }
    }));
    Outcome::from_findings(findings)
}

#[cfg(test)]
mod tests;
