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

/// A tool as precheck reads it: its name and the domain of its params.
#[derive(Debug, Clone)]
pub struct Domain {
    /// The tool's name.
    pub name: String,
    /// The params objects its schema admits (every object when it has none).
    pub schema: Schema,
    /// True when the tool came with a schema.
    pub declared: bool,
    /// Schema keywords read as admitting every value.
    pub ignored: BTreeSet<String>,
    /// Why the schema could not be read, if it could not (it is then read as `{}`).
    pub unreadable: Option<String>,
}

impl Domain {
    /// Reads a tool's schema. Params are always an object, whatever the schema's `type`.
    pub fn of(tool: &Tool) -> Domain {
        let mut ignored = BTreeSet::new();
        let (schema, unreadable) = match &tool.input_schema {
            None => (Schema::any(), None),
            Some(value) => match Schema::compile(value, &mut ignored) {
                Ok(s) => (s, None),
                Err(e) => (Schema::any(), Some(e)),
            },
        };
        Domain {
            name: tool.name.clone(),
            schema: schema.objects_only(),
            declared: tool.input_schema.is_some(),
            ignored,
            unreadable,
        }
    }

    /// The domain of a tool without a schema: any params at all.
    pub fn any(name: &str) -> Domain {
        Domain::of(&Tool {
            name: name.to_string(),
            input_schema: None,
        })
    }

    /// True when the schema admits some params object.
    pub fn has_calls(&self) -> bool {
        !matches!(self.schema.sample_object(), Ok(None))
    }

    /// Can a reachable call leave `field` unresolved by params, so that it resolves from
    /// facts? (`true` when unsure.)
    pub fn may_leave_unset(&self, field: &str) -> bool {
        if let Some(values) = self.schema.finite() {
            return values.into_iter().any(|v| match v {
                Value::Object(params) => Action {
                    tool: self.name.clone(),
                    params,
                }
                .param(field)
                .is_none(),
                _ => false,
            });
        }
        let path: Vec<&str> = field.split('.').collect();
        self.schema.may_lack(&[field]) && (path.len() < 2 || self.schema.may_lack(&path))
    }

    /// Can a reachable call set `field` through its params? (`true` when unsure.)
    pub fn may_set(&self, field: &str) -> bool {
        let path: Vec<&str> = field.split('.').collect();
        self.schema.may_have(&[field]) || (path.len() > 1 && self.schema.may_have(&path))
    }
}

/// Reads every tool's schema.
pub fn domains(tools: &[Tool]) -> Vec<Domain> {
    tools.iter().map(Domain::of).collect()
}

/// Per field, what the predicate compares it against.
pub fn probes(predicate: &Predicate) -> BTreeMap<String, Probe> {
    let mut out: BTreeMap<String, Probe> = BTreeMap::new();
    collect_probes(predicate, &mut out);
    out
}

fn collect_probes(predicate: &Predicate, out: &mut BTreeMap<String, Probe>) {
    match predicate {
        Predicate::Cmp(c) => {
            let probe = out.entry(c.field.clone()).or_default();
            match (&c.op, &c.value) {
                (Op::In | Op::NotIn, Value::Array(items)) => {
                    probe.constants.extend(items.iter().cloned());
                }
                (Op::Lt | Op::Lte | Op::Gt | Op::Gte, v) => {
                    probe.orders_numbers |= v.is_number();
                    probe.orders_strings |= v.is_string();
                    probe.constants.push(v.clone());
                }
                (_, v) => probe.constants.push(v.clone()),
            }
        }
        Predicate::All(ps) | Predicate::Any(ps) => {
            ps.iter().for_each(|p| collect_probes(p, out));
        }
        Predicate::Not(p) => collect_probes(p, out),
    }
}

/// The params a predicate can tell apart: for each base object, every combination of
/// one choice per dimension (a top-level key set to a value, or left out).
#[derive(Debug, Clone)]
pub struct Calls {
    tool: String,
    bases: Vec<Map<String, Value>>,
    dims: Dims,
}

/// Where the predicate's fields read inside the params: a node is read as a whole
/// (`whole`, with the field and its probe) or through its children.
#[derive(Default)]
struct Reads<'p> {
    whole: Option<(&'p str, &'p Probe)>,
    children: BTreeMap<String, Reads<'p>>,
}

impl<'p> Reads<'p> {
    fn insert(&mut self, path: &[&str], field: &'p str, probe: &'p Probe) {
        let node = path.iter().fold(self, |node, key| {
            node.children.entry((*key).to_string()).or_default()
        });
        node.whole = Some((field, probe));
    }
}

type Dims = Vec<(String, Vec<Option<Value>>)>;

/// The required keys nobody reads, filled once, and one dimension per read key.
type ObjectSpace = (Map<String, Value>, Dims);

impl Calls {
    /// The calls of `domain` that `probes` can tell apart; `Err` when they cannot be
    /// built exactly within `max_calls`.
    pub fn new(
        domain: &Domain,
        probes: &BTreeMap<String, Probe>,
        max_calls: usize,
    ) -> Result<Calls, Undecided> {
        let mut root = Reads::default();
        for (field, probe) in probes {
            // SPEC 4: a param whose key is exactly the field, else the dotted path.
            root.insert(&[field.as_str()], field, probe);
            let path: Vec<&str> = field.split('.').collect();
            if path.len() > 1 {
                root.insert(&path, field, probe);
            }
        }
        let tool = domain.name.clone();
        let schema = &domain.schema;
        if let Some(values) = schema.finite() {
            let bases = values
                .into_iter()
                .filter_map(|v| match v {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .collect();
            return Ok(Calls {
                tool,
                bases,
                dims: Vec::new(),
            });
        }
        let (bases, dims) = match object_space(schema, &root.children, max_calls)? {
            Some((base, dims)) => (vec![base], dims),
            None => (Vec::new(), Vec::new()),
        };
        let calls = Calls { tool, bases, dims };
        if calls.len() > max_calls {
            return Err(Undecided::Bound(max_calls));
        }
        Ok(calls)
    }

    /// How many calls there are.
    pub fn len(&self) -> usize {
        self.bases.len().saturating_mul(product(&self.dims))
    }

    /// True when the schema admits no call at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` on each call until it returns true.
    pub fn try_each(&self, mut f: impl FnMut(&Action) -> bool) {
        for base in &self.bases {
            // One call, its params changed in place from one combination to the next.
            let mut action = Action {
                tool: self.tool.clone(),
                params: base.clone(),
            };
            let mut combinations = Combinations::new(base, &self.dims);
            while combinations.next_into(&mut action.params) {
                if f(&action) {
                    return;
                }
            }
        }
    }
}

fn product(dims: &Dims) -> usize {
    dims.iter()
        .fold(1usize, |n, (_, options)| n.saturating_mul(options.len()))
}

/// Every object a base and one choice per dimension make; the last dimension varies
/// fastest.
struct Combinations<'a> {
    base: &'a Map<String, Value>,
    dims: &'a Dims,
    /// The choice per dimension of the next object; `None` past the last one.
    index: Option<Vec<usize>>,
    /// The first dimension whose choice changed since the last object.
    changed: usize,
}

impl<'a> Combinations<'a> {
    fn new(base: &'a Map<String, Value>, dims: &'a Dims) -> Combinations<'a> {
        let empty = dims.iter().any(|(_, o)| o.is_empty());
        Combinations {
            base,
            dims,
            index: (!empty).then(|| vec![0; dims.len()]),
            changed: 0,
        }
    }

    /// Makes `params` the next object (given the object before it, or the base before
    /// the first): only the dimensions whose choice changed are written. `false` past
    /// the last object.
    fn next_into(&mut self, params: &mut Map<String, Value>) -> bool {
        let Some(index) = self.index.as_mut() else {
            return false;
        };
        for ((key, options), &i) in self.dims.iter().zip(index.iter()).skip(self.changed) {
            // A choice of "absent" leaves what the base has.
            match (options.get(i), self.base.get(key)) {
                (Some(Some(v)), _) | (_, Some(v)) => match params.get_mut(key) {
                    Some(slot) => *slot = v.clone(),
                    None => drop(params.insert(key.clone(), v.clone())),
                },
                (_, None) => drop(params.remove(key)),
            }
        }
        // Advance the mixed-radix counter; past the last combination, stop.
        let mut done = true;
        for (d, (slot, (_, options))) in index.iter_mut().zip(self.dims).enumerate().rev() {
            *slot += 1;
            if *slot < options.len() {
                done = false;
                self.changed = d;
                break;
            }
            *slot = 0;
        }
        if done {
            self.index = None;
        }
        true
    }
}

/// The objects `schema` admits, as far as `children` can tell them apart: the required
/// keys nobody reads filled once, and one dimension per read key. `None` when no object
/// is admitted.
fn object_space(
    schema: &Schema,
    children: &BTreeMap<String, Reads<'_>>,
    budget: usize,
) -> Result<Option<ObjectSpace>, Undecided> {
    if !schema.admits_objects() {
        return Ok(None);
    }
    let mut dims = Vec::new();
    // Witnesses read better with fewer params and nested objects rather than dotted
    // keys: "absent" comes first, and dotted keys vary slowest (they come first).
    let mut keys: Vec<(&String, &Reads<'_>)> = children.iter().collect();
    keys.sort_by_key(|(k, _)| !k.contains('.'));
    for (key, child) in keys {
        let slot = schema.slot(key);
        let mut options: Vec<Option<Value>> = Vec::new();
        if !slot.required {
            options.push(None);
        }
        options.extend(values(slot.schema, child, budget)?.into_iter().map(Some));
        if options.is_empty() {
            return Ok(None);
        }
        dims.push((key.clone(), options));
    }
    let mut base = Map::new();
    for key in schema.required() {
        if children.contains_key(key) {
            continue;
        }
        match schema.slot(key).schema.sample()? {
            Some(v) => {
                base.insert(key.to_string(), v);
            }
            None => return Ok(None),
        }
    }
    if product(&dims) > budget {
        return Err(Undecided::Bound(budget));
    }
    Ok(Some((base, dims)))
}

/// The values a key can hold, as far as the reads below it can tell them apart.
fn values(schema: &Schema, reads: &Reads<'_>, budget: usize) -> Result<Vec<Value>, Undecided> {
    if let Some(values) = schema.finite() {
        return Ok(values);
    }
    match (reads.whole, reads.children.is_empty()) {
        (Some((field, probe)), true) => schema.reps(field, probe),
        (Some((field, _)), false) => Err(Undecided::Overlap(field.to_string())),
        (None, _) => {
            let mut out = Vec::new();
            let mut all_absent = false;
            if let Some((base, dims)) = object_space(schema, &reads.children, budget)? {
                all_absent = dims.iter().all(|(_, o)| o.contains(&None));
                let mut combinations = Combinations::new(&base, &dims);
                let mut object = base.clone();
                while combinations.next_into(&mut object) {
                    out.push(Value::Object(object.clone()));
                }
            }
            // A value that is no object lacks every path below it; it matters only when
            // no admitted object can lack them all.
            if !all_absent && let Some(v) = schema.sample_non_object()? {
                out.push(v);
            }
            Ok(out)
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
mod tests {
    use super::*;
    use crate::json::parse;
    use crate::predicate::DEFAULT_MAX_DEPTH;

    fn v(text: &str) -> Value {
        parse(text.as_bytes()).unwrap()
    }

    fn domain(schema: Option<&str>) -> Domain {
        Domain::of(&Tool {
            name: "t".into(),
            input_schema: schema.map(v),
        })
    }

    fn probes_of(pred: &str) -> BTreeMap<String, Probe> {
        probes(&Predicate::parse(&v(pred), DEFAULT_MAX_DEPTH).unwrap())
    }

    fn all_calls(d: &Domain, pred: &str, max: usize) -> Result<Vec<String>, Undecided> {
        let calls = Calls::new(d, &probes_of(pred), max)?;
        let mut out = Vec::new();
        calls.try_each(|a| {
            out.push(json_text(&Value::Object(a.params.clone())));
            false
        });
        assert_eq!(out.len(), calls.len());
        Ok(out)
    }

    #[test]
    fn probes_collect_every_constant_and_what_is_ordered() {
        let p = probes_of(
            r#"{"all":[{"field":"amount","op":"gt","value":5000},{"field":"amount","op":"in","value":[1,2]},
                       {"not":{"field":"tier","op":"eq","value":"x"}}]}"#,
        );
        assert_eq!(p["amount"].constants, [v("5000"), v("1"), v("2")]);
        assert!(p["amount"].orders_numbers && !p["amount"].orders_strings);
        assert_eq!(p["tier"].constants, [v("\"x\"")]);
        assert!(!p["tier"].orders_numbers && !p["tier"].orders_strings);
    }

    #[test]
    fn without_a_schema_calls_try_absent_then_every_class() {
        let calls = all_calls(
            &domain(None),
            r#"{"field":"amount","op":"gt","value":5000}"#,
            100,
        )
        .unwrap();
        assert_eq!(
            calls,
            [
                "{}",
                r#"{"amount":4999}"#,
                r#"{"amount":5000}"#,
                r#"{"amount":5001}"#,
                r#"{"amount":""}"#,
                r#"{"amount":true}"#,
                r#"{"amount":null}"#,
                r#"{"amount":[]}"#,
                r#"{"amount":{}}"#,
            ]
        );
    }

    #[test]
    fn required_params_are_never_absent_and_unread_ones_are_filled() {
        let d = domain(Some(
            r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000},
                "currency":{"enum":["USD","EUR"]}},"required":["amount","currency"],"additionalProperties":false}"#,
        ));
        let calls = all_calls(&d, r#"{"field":"amount","op":"gt","value":5000}"#, 100).unwrap();
        assert_eq!(
            calls,
            [
                r#"{"amount":4999,"currency":"USD"}"#,
                r#"{"amount":5000,"currency":"USD"}"#
            ]
        );
        // A field the closed schema does not name can only be absent.
        let calls = all_calls(&d, r#"{"field":"tier","op":"eq","value":"gold"}"#, 100).unwrap();
        assert_eq!(calls, [r#"{"amount":0,"currency":"USD"}"#]);
        assert!(!d.may_leave_unset("amount"));
        assert!(d.may_leave_unset("tier"));
        assert!(!d.may_set("tier"));
    }

    #[test]
    fn dotted_fields_read_the_nested_path_and_the_literal_key() {
        let calls = all_calls(
            &domain(None),
            r#"{"field":"customer.tier","op":"eq","value":"gold"}"#,
            1000,
        )
        .unwrap();
        // The literal key varies slowest, so the nested form comes first.
        assert_eq!(
            &calls[..4],
            [
                "{}",
                r#"{"customer":{}}"#,
                r#"{"customer":{"tier":"gold"}}"#,
                r#"{"customer":{"tier":""}}"#,
            ]
        );
        assert!(calls.contains(&r#"{"customer.tier":"gold"}"#.to_string()));
        // Objects without the path stand in for non-objects: no `"customer":""` needed.
        assert!(
            !calls.iter().any(|c| c.contains(r#""customer":"""#)),
            "{calls:?}"
        );
    }

    #[test]
    fn a_required_nested_path_can_still_be_missed_through_a_non_object() {
        let d = domain(Some(
            r#"{"type":"object","properties":{"c":{"type":["object","null"],"properties":{"d":{"type":"integer"}},"required":["d"]}},"required":["c"]}"#,
        ));
        let calls = all_calls(&d, r#"{"field":"c.d","op":"gt","value":1}"#, 1000).unwrap();
        assert!(calls.contains(&r#"{"c":null}"#.to_string()), "{calls:?}");
        assert!(calls.contains(&r#"{"c":{"d":2}}"#.to_string()), "{calls:?}");
    }

    #[test]
    fn what_cannot_be_told_apart_exactly_is_undecided() {
        let d = domain(None);
        assert!(matches!(
            all_calls(
                &d,
                r#"{"any":[{"field":"c","op":"eq","value":1},{"field":"c.d","op":"eq","value":1}]}"#,
                1000
            ),
            Err(Undecided::Overlap(_))
        ));
        assert_eq!(
            all_calls(&d, r#"{"field":"amount","op":"gt","value":5000}"#, 8),
            Err(Undecided::Bound(8))
        );
        assert!(matches!(
            all_calls(&d, r#"{"field":"amount","op":"gt","value":1e999999}"#, 100),
            Err(Undecided::Arithmetic(_))
        ));
    }

    #[test]
    fn a_finite_root_enumerates_its_members() {
        let d = domain(Some(
            r#"{"enum":[{"amount":1},{"amount":9000},"not an object"]}"#,
        ));
        let calls = all_calls(&d, r#"{"field":"amount","op":"gt","value":5000}"#, 100).unwrap();
        assert_eq!(calls, [r#"{"amount":1}"#, r#"{"amount":9000}"#]);
        let never = domain(Some("false"));
        assert!(!never.has_calls());
        assert!(
            all_calls(&never, r#"{"field":"a","op":"eq","value":1}"#, 100)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn an_effect_witness_is_its_match_plus_the_required_params() {
        let effect = Effect {
            tool: "t".into(),
            matches: v(r#"{"order":"o_1"}"#).as_object().unwrap().clone(),
        };
        let d = domain(Some(
            r#"{"type":"object","properties":{"order":{"type":"string"},"n":{"type":"integer","minimum":3}},"required":["n"]}"#,
        ));
        let w = effect_witness(&d, &effect).unwrap().unwrap();
        assert_eq!(
            json_text(&Value::Object(w.params)),
            r#"{"n":3,"order":"o_1"}"#
        );
        let closed = domain(Some(
            r#"{"type":"object","properties":{"order":{"enum":["o_2"]}}}"#,
        ));
        assert_eq!(effect_witness(&closed, &effect), Ok(None));
    }
}
