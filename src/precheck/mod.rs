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
//! Where the candidates cannot be built exactly (the bound, overlapping fields, huge
//! constants) precheck answers "may bind": sound, never a silent PASS. No I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::action::{Action, Tool};
use crate::compaction::Compaction;
use crate::gate::{self, CheckOptions, Code, Finding, Outcome, Severity, View};
use crate::predicate::{Op, Predicate};
use crate::record::{Effect, Kind, Policy, PolicyEffect, Record, Store};
use crate::report::{clean, json_text};
use crate::schema::{Probe, Schema, Undecided};

mod calls;

pub use calls::{Calls, Domain, domains, probes};

/// How many calls precheck and pin try per rule and tool before answering "may bind".
pub const DEFAULT_MAX_CALLS: usize = 100_000;

/// Options for precheck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrecheckOptions {
    /// Turn dropped unevaluable records into a signed note instead of a block.
    pub allow_unevaluable: bool,
    /// The most calls tried per rule and tool (`--max-calls`).
    pub max_calls: usize,
}

impl Default for PrecheckOptions {
    fn default() -> PrecheckOptions {
        PrecheckOptions {
            allow_unevaluable: false,
            max_calls: DEFAULT_MAX_CALLS,
        }
    }
}

/// The codes `check` can give a policy that fail closed, by its effect.
fn error_codes(effect: PolicyEffect) -> &'static [Code] {
    if effect.is_restrictive() {
        &[Code::UnresolvedField, Code::TypeMismatch]
    } else {
        &[Code::TypeMismatch]
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
}

impl<'a> PolicyScan<'a> {
    /// The policy at `pos`, or `None` when the record there is no policy.
    pub fn new(store: &'a Store, compaction: &'a Compaction, pos: usize) -> Option<PolicyScan<'a>> {
        let record = store.get(pos)?;
        let Kind::Policy(policy) = &record.kind else {
            return None;
        };
        Some(PolicyScan {
            store,
            compaction,
            pos,
            record,
            policy,
            probes: probes(&policy.predicate),
            full: View::full(store),
            agent: View::agent(store, compaction),
        })
    }

    /// The fields the predicate reads.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.probes.keys().map(String::as_str)
    }

    /// The reachable calls of `domain` the predicate can tell apart.
    pub fn calls(&self, domain: &Domain, max_calls: usize) -> Result<Calls, Undecided> {
        Calls::new(domain, &self.probes, max_calls)
    }

    fn kept(&self) -> bool {
        self.compaction.is_kept(self.pos)
    }

    /// Can this compaction make `check` block some call of `domain` on this policy? A
    /// restrictive rule blocks only where it is active on the full records and dropped,
    /// or kept but seen differently; an allow rule only where the agent sees it active
    /// and the full records differ. When the two views agree on everything the rule reads
    /// for every reachable call, `check` can only fail closed on it, never block.
    fn can_block(&self, domain: &Domain) -> bool {
        let full_active = self.full.active(self.pos);
        let agent_active = self.agent.active(self.pos);
        let facts_differ = self.fields().any(|f| {
            domain.may_leave_unset(f) && self.full.newest_fact(f) != self.agent.newest_fact(f)
        });
        if self.policy.effect.is_restrictive() {
            full_active && (!self.kept() || facts_differ || !agent_active)
        } else {
            agent_active && (!full_active || facts_differ)
        }
    }

    /// The first call (in enumeration order) for which `check` gives each of `wanted`.
    fn witnesses(
        &self,
        calls: &Calls,
        wanted: &BTreeSet<Code>,
        found: &mut BTreeMap<Code, Action>,
    ) {
        let mut missing: BTreeSet<Code> = wanted
            .iter()
            .copied()
            .filter(|c| !found.contains_key(c))
            .collect();
        if missing.is_empty() {
            return;
        }
        calls.try_each(|action| {
            if let Some(code) = gate::policy_code(self.store, self.compaction, action, self.pos)
                && missing.remove(&code)
            {
                found.insert(code, action.clone());
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

    /// Precheck's findings for this policy over the tools it scopes to.
    fn judge(&self, domains: &[&Domain], max_calls: usize) -> Vec<Finding> {
        if !self.full.active(self.pos) && !self.agent.active(self.pos) {
            // FALSE in both views for every call: `check` says nothing.
            return Vec::new();
        }
        let effect = self.policy.effect;
        let mut found: BTreeMap<Code, Action> = BTreeMap::new();
        let mut undecided: Option<(&Domain, Undecided, bool)> = None;
        for domain in domains {
            let can_block = self.can_block(domain);
            let mut wanted: BTreeSet<Code> = error_codes(effect).iter().copied().collect();
            if can_block {
                wanted.extend(block_codes(effect, self.kept()));
            }
            match self.calls(domain, max_calls) {
                Ok(calls) => self.witnesses(&calls, &wanted, &mut found),
                Err(u) => {
                    if undecided.is_none() {
                        undecided = Some((domain, u, can_block));
                    }
                }
            }
        }
        let rule = rule_name(self.record, self.policy, self.kept());
        let mut out: Vec<Finding> = found
            .iter()
            .map(|(code, action)| self.finding(*code, action, domains))
            .collect();
        let blocked = found.keys().any(|c| c.severity() == Severity::Block);
        let decided = undecided.is_none();
        if let Some((domain, why, can_block)) = undecided {
            let tool = clean(&domain.name);
            if can_block && !blocked {
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
            } else if !can_block && found.is_empty() {
                out.push(Finding::new(
                    Code::Undecided,
                    Some(self.record),
                    format!(
                        "{rule}: precheck cannot decide whether some reachable call of {tool} makes check fail closed on it, because {}; this compaction cannot make it bind",
                        why.describe()
                    ),
                ));
            }
        }
        if decided
            && !blocked
            && effect.is_restrictive()
            && !self.kept()
            && self.full.active(self.pos)
            && let Some(note) = self.ruled_out(domains, max_calls)
        {
            out.push(note);
        }
        out
    }

    /// A precheck finding for the witness `action` of `check`'s `code`.
    fn finding(&self, code: Code, action: &Action, domains: &[&Domain]) -> Finding {
        // INVARIANT: `policy_code` gave `code` for this call, so `check` reports it; the
        // fallback only keeps a hazard from vanishing if that ever broke.
        let check = gate::judge_policy(self.store, self.compaction, action, self.pos)
            .unwrap_or_else(|| Finding::new(code, Some(self.record), String::new()));
        let tool = clean(&action.tool);
        let mut f = match code.severity() {
            Severity::Block => Finding::new(
                Code::MayBindSomeAction,
                Some(self.record),
                format!(
                    "a reachable call of {tool} gets {}: {}",
                    code.as_str(),
                    check.message
                ),
            ),
            _ => {
                let hint = if code == Code::UnresolvedField {
                    self.unresolved_hint(action, domains)
                } else {
                    String::new()
                };
                Finding::new(
                    code,
                    Some(self.record),
                    format!("a reachable call of {tool}: {}{hint}", check.message),
                )
            }
        };
        f.restore = check.restore;
        f.witness = Some(action.clone());
        f
    }

    /// Why no compaction fixes an unresolved field, and what would.
    fn unresolved_hint(&self, action: &Action, domains: &[&Domain]) -> String {
        let Some(domain) = domains.iter().find(|d| d.name == action.tool) else {
            return String::new();
        };
        let unset: Vec<&str> = self
            .fields()
            .filter(|f| action.param(f).is_none() && self.full.newest_fact(f).is_none())
            .collect();
        let (settable, never): (Vec<&str>, Vec<&str>) =
            unset.into_iter().partition(|f| domain.may_set(f));
        let names = |v: &[&str]| {
            v.iter()
                .map(|f| format!("`{}`", clean(f)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !never.is_empty() {
            format!(
                " (no reachable call of {} sets {} and no fact resolves it, whatever the compaction)",
                clean(&domain.name),
                names(&never)
            )
        } else {
            format!(
                " (this holds whatever the compaction; a schema that requires {} rules it out)",
                names(&settable)
            )
        }
    }

    /// A note when the tools' schemas are what keeps this dropped rule from binding.
    fn ruled_out(&self, domains: &[&Domain], max_calls: usize) -> Option<Finding> {
        let declared = domains.iter().find(|d| d.declared)?;
        let open = Domain::any(&declared.name);
        let calls = self.calls(&open, max_calls).ok()?;
        let mut found = BTreeMap::new();
        let wanted = BTreeSet::from([Code::DroppedBindingConstraint]);
        self.witnesses(&calls, &wanted, &mut found);
        let (_, example) = found.into_iter().next()?;
        Some(Finding::new(
            Code::RuledOutBySchema,
            Some(self.record),
            format!(
                "{} binds calls that the schema of {} rules out (e.g. {}), and no call it admits: not a block reason",
                rule_name(self.record, self.policy, false),
                clean(&declared.name),
                json_text(&Value::Object(example.params))
            ),
        ))
    }
}

/// A call of `domain` that replays `effect`: its `match` entries, plus the required
/// params filled; `None` when the schema admits no such call.
pub fn effect_witness(domain: &Domain, effect: &Effect) -> Result<Option<Action>, Undecided> {
    let schema = &domain.schema;
    if let Some(values) = schema.finite() {
        return Ok(values.into_iter().find_map(|v| match v {
            Value::Object(params) => {
                let action = Action {
                    tool: domain.name.clone(),
                    params,
                };
                gate::replays(effect, &action).then_some(action)
            }
            _ => None,
        }));
    }
    if !schema.admits_objects() {
        return Ok(None);
    }
    let mut params = Map::new();
    for (key, value) in &effect.matches {
        if !schema.slot(key).schema.admits(value) {
            return Ok(None);
        }
        params.insert(key.clone(), value.clone());
    }
    for key in schema.required() {
        if params.contains_key(key) {
            continue;
        }
        match schema.slot(key).schema.sample()? {
            Some(v) => {
                params.insert(key.to_string(), v);
            }
            None => return Ok(None),
        }
    }
    Ok(Some(Action {
        tool: domain.name.clone(),
        params,
    }))
}

fn effect_findings(record: &Record, effect: &Effect, domain: &Domain) -> Option<Finding> {
    let tool = clean(&domain.name);
    match effect_witness(domain, effect) {
        Ok(Some(action)) => {
            let check = gate::effect_finding(record, effect, false, &action);
            let mut f = Finding::new(
                Code::MayBindSomeAction,
                Some(record),
                format!(
                    "a reachable call of {tool} gets {}: {}",
                    check.code.as_str(),
                    check.message
                ),
            );
            f.restore = check.restore;
            f.witness = Some(action);
            Some(f)
        }
        Ok(None) => domain.declared.then(|| {
            Finding::new(
                Code::RuledOutBySchema,
                Some(record),
                format!(
                    "dropped effect '{}' records a call of {tool} with {} that the schema of {tool} rules out: no reachable call replays it",
                    clean(&record.id),
                    json_text(&Value::Object(effect.matches.clone()))
                ),
            )
        }),
        Err(why) => {
            let mut f = Finding::new(
                Code::MayBindSomeAction,
                Some(record),
                format!(
                    "dropped effect '{}' may be replayed by a reachable call of {tool}: precheck could not decide, because {}",
                    clean(&record.id),
                    why.describe()
                ),
            );
            f.restore = vec![record.id.clone()];
            Some(f)
        }
    }
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
    if !domain.ignored.is_empty() {
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

/// Runs precheck: could a dropped record bind some reachable call of `tools` under
/// `compaction`? Never reads an action.
pub fn precheck(
    store: &Store,
    compaction: &Compaction,
    tools: &[Tool],
    options: PrecheckOptions,
) -> Outcome {
    let domains = domains(tools);
    let mut findings: Vec<Finding> = domains.iter().flat_map(schema_notes).collect();
    let live: Vec<&Domain> = domains.iter().filter(|d| d.has_calls()).collect();
    let check_options = CheckOptions {
        allow_unevaluable: options.allow_unevaluable,
    };
    findings.extend(gate::each_record(store, |pos, record, findings| {
        let kept = compaction.is_kept(pos);
        match &record.kind {
            Kind::Policy(policy) => {
                let in_scope: Vec<&Domain> = live
                    .iter()
                    .copied()
                    .filter(|d| policy.scopes(&d.name))
                    .collect();
                if !in_scope.is_empty()
                    && let Some(scan) = PolicyScan::new(store, compaction, pos)
                {
                    findings.extend(scan.judge(&in_scope, options.max_calls));
                }
            }
            Kind::Effect(effect) if !kept => {
                if let Some(domain) = live.iter().find(|d| d.name == effect.tool) {
                    findings.extend(effect_findings(record, effect, domain));
                }
            }
            Kind::Unevaluable(kind) if !kept => {
                findings.push(gate::unevaluable_finding(record, kind, check_options));
            }
            _ => {}
        }
        if kept {
            findings.extend(gate::derivation_note(store, compaction, record));
        }
    }));
    Outcome::from_findings(findings)
}

#[cfg(test)]
mod tests;
