//! The calls a policy's predicate can tell apart, within a tool's schema ([`Calls`]):
//! one value per class its constants separate for each param it reads, "absent" where
//! the schema allows, and every combination, enumerated in place.

use super::*;

/// A tool as precheck reads it: its name and the domain of its params.
#[derive(Debug, Clone)]
pub struct Domain {
    /// The tool's name.
    pub name: String,
    /// The params objects its schema admits (every object when it has none).
    pub schema: Schema,
    /// True when the tool came with a schema that bounds its calls (one the harness
    /// checks each call against).
    pub declared: bool,
    /// Schema keywords read as admitting every value.
    pub ignored: BTreeSet<String>,
    /// Why the schema could not be read, if it could not (it is then read as `{}`).
    pub unreadable: Option<crate::schema::SchemaError>,
    /// Why the harness checks no call against the schema, which is then read as `{}`.
    pub unchecked: Option<Unchecked>,
    /// For a tool judged beside a list that does not cover it ([`super::judged`]), the
    /// listed names and globs: a plain name one of them covers is left to them, and
    /// judged by their schemas. Empty for a listed tool.
    pub listed: Vec<String>,
}

/// Why a harness checks no call of a tool against the tool's schema, so that the schema
/// bounds nothing and precheck reads it as admitting any params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unchecked {
    /// Gemini CLI's validator cannot compile it, and then runs every call
    /// ([`crate::schema::validator_skips`] says why).
    Uncompiled(String),
    /// The harness runs calls outside a tool's declared schema
    /// ([`Harness::holds_calls_to_schemas`]).
    NotHeld(Harness),
    /// No harness was named, and the tool's name is an MCP tool's as Claude Code and Codex
    /// spell it (`mcp__server__tool`), or a glob that covers one (`*`): both run its calls
    /// outside its schema.
    McpName,
}

impl Domain {
    /// Reads a tool's schema, as a bound on its calls only where `harness` (when known)
    /// holds a call to it, and with no harness named, not for a tool named as Claude Code
    /// and Codex name an MCP tool. Params are always an object, whatever the schema's
    /// `type`.
    pub fn of(tool: &Tool, harness: Option<Harness>) -> Domain {
        let mut ignored = BTreeSet::new();
        let mut unchecked = None;
        let unheld = || match harness {
            Some(h) => (!h.holds_calls_to_schemas()).then_some(Unchecked::NotHeld(h)),
            None => {
                Harness::claude_code_or_codex_mcp_name(&tool.name).then_some(Unchecked::McpName)
            }
        };
        let (schema, unreadable) = match &tool.input_schema {
            None => (Schema::any(), None),
            Some(_) if let Some(why) = unheld() => {
                unchecked = Some(why);
                (Schema::any(), None)
            }
            Some(declared) => {
                // Gemini CLI checks calls against the schema with its own parameter added.
                let value = crate::schema::as_checked(declared);
                match Schema::compile(&value, &mut ignored) {
                    Ok(_) if let Some(why) = crate::schema::validator_skips(declared) => {
                        unchecked = Some(Unchecked::Uncompiled(why));
                        (Schema::any(), None)
                    }
                    Ok(s) => (s, None),
                    Err(e) => (Schema::any(), Some(e)),
                }
            }
        };
        Domain {
            name: tool.name.clone(),
            schema: schema.objects_only(),
            declared: tool.input_schema.is_some() && unchecked.is_none(),
            ignored,
            unreadable,
            unchecked,
            listed: Vec::new(),
        }
    }

    /// A name both `pattern` (a policy's scope entry or an effect's `tool`, a name or a
    /// `*` glob) and this tool's name cover, whose calls this domain judges; `None` when
    /// there is none, or when `pattern` is a plain name a listed tool covers.
    pub fn meets(&self, pattern: &str) -> Option<String> {
        if !pattern.contains('*') && self.listed.iter().any(|t| glob_match(t, pattern)) {
            return None;
        }
        glob_meet(pattern, &self.name)
    }

    /// The domain of a tool without a schema: any params at all.
    pub fn any(name: &str) -> Domain {
        Domain::of(
            &Tool {
                name: name.to_string(),
                input_schema: None,
            },
            None,
        )
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
        crate::action::spellings(field)
            .is_none_or(|paths| paths.iter().all(|path| self.schema.may_lack(path)))
    }

    /// Can a reachable call set `field` through its params? (`true` when unsure.)
    pub fn may_set(&self, field: &str) -> bool {
        crate::action::spellings(field)
            .is_none_or(|paths| paths.iter().any(|path| self.schema.may_have(path)))
    }
}

/// Reads every tool's schema, as [`Domain::of`] does under `harness`.
pub fn domains(tools: &[Tool], harness: Option<Harness>) -> Vec<Domain> {
    tools.iter().map(|t| Domain::of(t, harness)).collect()
}

/// Per field, what the predicate compares it against.
pub fn probes(predicate: &Predicate) -> BTreeMap<String, Probe> {
    let mut out: BTreeMap<String, Probe> = BTreeMap::new();
    collect_probes(predicate, &mut out);
    out
}

pub(super) fn collect_probes(predicate: &Predicate, out: &mut BTreeMap<String, Probe>) {
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
/// one choice per dimension (a top-level key set to a value, left out, or given a part
/// spelt apart: [`Choice`]).
#[derive(Debug, Clone)]
pub struct Calls {
    tool: String,
    bases: Vec<Map<String, Value>>,
    dims: Dims,
    /// Whether a key with a dot of its own is among the params: then a call may give a
    /// dotted field two values (the key `c.d` beside `{"c":{"d":..}}`), which `check`
    /// refuses whatever the compaction keeps (`action::one_spelling`), and it is skipped.
    dotted: bool,
}

/// Where the predicate's fields read inside the params: a node is read as a whole
/// (`whole`, with the field and its probe) or through its children.
#[derive(Default)]
pub(super) struct Reads<'p> {
    pub(super) whole: Option<(&'p str, &'p Probe)>,
    pub(super) children: BTreeMap<String, Reads<'p>>,
}

impl<'p> Reads<'p> {
    pub(super) fn insert(&mut self, path: &[&str], field: &'p str, probe: &'p Probe) {
        let node = path.iter().fold(self, |node, key| {
            node.children.entry((*key).to_string()).or_default()
        });
        node.whole = Some((field, probe));
    }
}

/// One way a call can give a key a predicate reads.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Choice {
    /// The key left out (what the base object has, if anything).
    Absent,
    /// The key set to a value.
    Give(Value),
    /// A part of the key's field given spelt apart from it: the key `apart` (`c.part`
    /// for `c`) set to `value`, beside the key set to `whole` where the schema requires
    /// it. `check` then reads the field as UNKNOWN, with no fact standing in
    /// (`action::part_apart`): a class of its own, which no value of the key reaches
    /// when every value of it fails a comparison the predicate makes.
    Apart {
        whole: Option<Value>,
        apart: String,
        value: Value,
    },
}

pub(super) type Dims = Vec<(String, Vec<Choice>)>;

/// The required keys nobody reads, filled once, and one dimension per read key.
pub(super) type ObjectSpace = (Map<String, Value>, Dims);

impl Calls {
    /// The calls of `tool`, with the params of `domain`, that `probes` can tell apart;
    /// `Err` when they cannot be built exactly within `max_calls`, or when the calls
    /// [`Calls::try_each`] skips may hide one `check` takes (see
    /// [`Calls::spelt_once_as_sampled`]).
    pub fn new(
        tool: &str,
        domain: &Domain,
        probes: &BTreeMap<String, Probe>,
        max_calls: usize,
    ) -> Result<Calls, Undecided> {
        let calls = Calls::unsampled(tool, domain, probes, max_calls)?;
        calls.spelt_once_as_sampled(probes)?;
        Ok(calls)
    }

    /// [`Calls::new`] but for its last check, [`Calls::spelt_once_as_sampled`], which
    /// walks every call: for a caller that runs it only when no call it tries shows what
    /// it looks for (a call `check` takes is a witness whatever the skipped ones hide).
    pub fn unsampled(
        tool: &str,
        domain: &Domain,
        probes: &BTreeMap<String, Probe>,
        max_calls: usize,
    ) -> Result<Calls, Undecided> {
        let schema = &domain.schema;
        let mut root = Reads::default();
        for (field, probe) in probes {
            // SPEC 4: a param whose key is exactly the field, else a dotted path, which
            // may pass through keys with dots of their own. The key and the path cut at
            // every dot are always tried; the other spellings only where the schema
            // admits them and neither of those two takes every value (then they reach
            // nothing more, and would multiply the calls).
            let split: Vec<&str> = field.split('.').collect();
            let cut = split.len();
            let mut plain = vec![vec![field.as_str()]];
            if cut > 1 {
                plain.push(split);
            }
            let all = crate::action::spellings(field);
            let every = || {
                all.as_deref().ok_or_else(|| {
                    Undecided::Spellings(field.clone(), crate::action::MAX_SPELLING_DOTS)
                })
            };
            let mut paths = if plain.iter().any(|path| schema.admits_any_at(path)) {
                plain
            } else {
                every()?
                    .iter()
                    .filter(|path| path.len() == 1 || path.len() == cut || schema.may_have(path))
                    .cloned()
                    .collect()
            };
            // A call that gives an array or a string on the field's way (`{"a.b": ""}`
            // for `a.b.c`) leaves it UNKNOWN, with no fact standing in
            // (`action::elements_on_path`): a class of its own where a fact gives the
            // field (without one, a call that leaves the field out is that class, where
            // one can). A key the spellings above pass inside (`a` for `a.b.c`) gets such
            // a value (`values`), but one there takes every other field read through it
            // (`a.x`) too. A key of another spelling (`{"a.b": {"c.part": 0}}`) may also
            // admit a part given apart that no spelling above admits, which leaves the
            // field UNKNOWN too (`action::part_apart`). So unless the field's key spelt
            // whole admits a part given apart beside every other key (the class,
            // whatever the others hold), the spellings that pass a key the schema admits
            // elsewhere (`a.b`) are tried too.
            let beside = probe.fact && apart_admitted(schema, field)?;
            if (probe.fact || !domain.may_leave_unset(field)) && !beside {
                let inside = |at: &[&str]| {
                    paths
                        .iter()
                        .any(|p| p.len() > at.len() && p.starts_with(at))
                };
                let more = passing(every()?, &paths, |at| !inside(at) && schema.may_have(at));
                paths.extend(more);
            }
            // A key on the field's way that the schema requires (`a.b` for `a.b.c`) is
            // in every call. Left to the required keys nobody reads, it would get one
            // sampled value (`""`, through which the field resolves to nothing) and the
            // field none of the values a call may give it there: the spellings through
            // it are tried too, so that it is a node of the field's reads. (A field of
            // more than `MAX_SPELLING_DOTS` dots is left with the spellings above.)
            if let Some(all) = all.as_deref() {
                loop {
                    let more = passing(all, &paths, |at| {
                        schema.requires_at(at) && !paths.iter().any(|p| p.starts_with(at))
                    });
                    if more.is_empty() {
                        break;
                    }
                    paths.extend(more);
                }
                // A spelling of the field whose last key the object before it requires
                // (`{"x": {"y.w": ..}}` for `x.y.w`, where `x` requires `y.w`): every `x`
                // holds it, and left to the required keys nobody reads it would get one
                // sampled value, so that the field takes no other there, and a call
                // giving it another way too (`"x.y.w": "b"` beside `"y.w": "a"`) would give
                // it two values and be skipped. It is tried as a spelling of the field.
                let required: Vec<Vec<&str>> = (all.iter())
                    .filter(|path| !paths.contains(path) && schema.requires_at(path))
                    .cloned()
                    .collect();
                paths.extend(required);
            }
            for path in &paths {
                root.insert(path, field, probe);
            }
        }
        let tool = tool.to_string();
        if let Some(values) = schema.finite() {
            let bases = values
                .into_iter()
                .filter_map(|v| match v {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .collect();
            return Ok(Calls::with(tool, bases, Vec::new()));
        }
        let (bases, dims) = match object_space(schema, &root.children, max_calls)? {
            Some((base, dims)) => (vec![base], dims),
            None => (Vec::new(), Vec::new()),
        };
        let calls = Calls::with(tool, bases, dims);
        if calls.len() > max_calls {
            return Err(Undecided::Bound(max_calls));
        }
        Ok(calls)
    }

    /// `Err` when the calls that `try_each` skips, as giving a field two values, may hide
    /// calls `check` takes:
    ///
    /// - a field the predicate does not read, nor a part of, nor a field below, given two
    ///   ways: its values were sampled, each spelling on its own (a required key `x.z`
    ///   beside a required object `x` whose own schema requires `z`, sampled `"b"` and
    ///   `"a"`), though other values make a call `check` takes (`{"x": {"y": 6000, "z":
    ///   "b"}, "x.z": "b"}`), so a rule on `x.y` would look ruled out;
    /// - a field the predicate reads (or one above or below it) given two ways in every
    ///   call that gives it: each spelling takes the values of its own classes (the key
    ///   `x.z` one of 6000 and 100, `z` inside `x` some integer, 0), a call gives both
    ///   one value, and where none of the values tried is common to both, no call with
    ///   it is tried, though a call may give 6000 both ways. Where some call gives it
    ///   once, that spelling alone takes every class of its own, which holds every
    ///   class of a value given both ways.
    ///
    /// A string or an array on the way of a key with dots (`a` beside `a.b`) is a class
    /// of `a` that `check` refuses beside that key, whatever else the call holds.
    pub fn spelt_once_as_sampled(&self, probes: &BTreeMap<String, Probe>) -> Result<(), Undecided> {
        use crate::action::Twice;
        if !self.dotted {
            return Ok(());
        }
        let read = |field: &str| {
            probes.keys().any(|p| {
                let below =
                    |a: &str, b: &str| a.strip_prefix(b).is_some_and(|rest| rest.starts_with('.'));
                p == field || below(p, field) || below(field, p)
            })
        };
        // Read fields some skipped call gives two values, and those some call gives once.
        let mut twice: BTreeSet<String> = BTreeSet::new();
        let mut once: BTreeSet<String> = BTreeSet::new();
        for base in &self.bases {
            let mut params = base.clone();
            let mut combinations = Combinations::new(base, &self.dims);
            while combinations.next_into(&mut params) {
                match crate::action::spelt_two_ways(&params, true) {
                    None => {
                        let mut count: BTreeMap<String, usize> = BTreeMap::new();
                        for (name, _) in crate::action::field_names(&params) {
                            if read(&name) {
                                *count.entry(name).or_default() += 1;
                            }
                        }
                        once.extend(count.into_iter().filter(|(_, n)| *n == 1).map(|(f, _)| f));
                    }
                    Some(Twice::Nested(field, _)) if read(&field) => {
                        twice.insert(field);
                    }
                    Some(Twice::Through(field, at, _)) if read(&field) || read(&at) => {}
                    Some(Twice::Nested(field, _) | Twice::Through(field, ..)) => {
                        return Err(Undecided::RequiredTwice(field));
                    }
                }
            }
        }
        match twice.into_iter().find(|field| !once.contains(field)) {
            Some(field) => Err(Undecided::TwoWays(field)),
            None => Ok(()),
        }
    }

    fn with(tool: String, bases: Vec<Map<String, Value>>, dims: Dims) -> Calls {
        use crate::action::has_dotted_key;
        let holds_dotted = |value: &Value| value.as_object().is_some_and(has_dotted_key);
        let dotted = bases.iter().any(has_dotted_key)
            || dims.iter().any(|(key, options)| {
                key.contains('.')
                    || options.iter().any(|choice| match choice {
                        Choice::Give(v) => holds_dotted(v),
                        // The part's key spells no field another way: the key's value
                        // beside it holds neither the part nor a key with dots, and no
                        // read key lies below a key read whole. A value the schema
                        // gives the part may hold keys with dots of its own.
                        Choice::Apart { value, .. } => holds_dotted(value),
                        Choice::Absent => false,
                    })
            });
        Calls {
            tool,
            bases,
            dims,
            dotted,
        }
    }

    /// How many calls there are.
    pub fn len(&self) -> usize {
        self.bases.len().saturating_mul(product(&self.dims))
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
                if self.dotted && crate::action::one_spelling(&action.params).is_err() {
                    continue;
                }
                if f(&action) {
                    return;
                }
            }
        }
    }
}

/// The spellings of `all` not among `paths` that pass, before their last key, a key
/// path that `through` takes.
fn passing<'f>(
    all: &[Vec<&'f str>],
    paths: &[Vec<&'f str>],
    through: impl Fn(&[&str]) -> bool,
) -> Vec<Vec<&'f str>> {
    all.iter()
        .filter(|path| {
            !paths.contains(path) && (1..path.len()).any(|n| path.get(..n).is_some_and(&through))
        })
        .cloned()
        .collect()
}

pub(super) fn product(dims: &Dims) -> usize {
    dims.iter()
        .fold(1usize, |n, (_, options)| n.saturating_mul(options.len()))
}

/// Every object a base and one choice per dimension make; the last dimension varies
/// fastest.
pub(super) struct Combinations<'a> {
    pub(super) base: &'a Map<String, Value>,
    pub(super) dims: &'a Dims,
    /// The choice per dimension of the next object; `None` past the last one.
    pub(super) index: Option<Vec<usize>>,
    /// The first dimension whose choice changed since the last object.
    pub(super) changed: usize,
    /// Per dimension, the keys its choices give a part apart under, each once: found
    /// once here, not in every choice for every object (an `enum` of 20,000 members is
    /// 20,000 choices).
    aparts: Vec<Vec<&'a str>>,
}

impl<'a> Combinations<'a> {
    pub(super) fn new(base: &'a Map<String, Value>, dims: &'a Dims) -> Combinations<'a> {
        let empty = dims.iter().any(|(_, o)| o.is_empty());
        let aparts = (dims.iter())
            .map(|(_, options)| {
                let keys: BTreeSet<&str> = (options.iter())
                    .filter_map(|choice| match choice {
                        Choice::Apart { apart, .. } => Some(apart.as_str()),
                        _ => None,
                    })
                    .collect();
                keys.into_iter().collect()
            })
            .collect();
        Combinations {
            base,
            dims,
            index: (!empty).then(|| vec![0; dims.len()]),
            changed: 0,
            aparts,
        }
    }

    /// Makes `params` the next object (given the object before it, or the base before
    /// the first): only the dimensions whose choice changed are written. `false` past
    /// the last object.
    pub(super) fn next_into(&mut self, params: &mut Map<String, Value>) -> bool {
        let Some(index) = self.index.as_mut() else {
            return false;
        };
        let dims = self.dims.iter().zip(&self.aparts).zip(index.iter());
        for (((key, options), aparts), &i) in dims.skip(self.changed) {
            // The part a choice before gave apart goes with it.
            for apart in aparts {
                params.remove(*apart);
            }
            // A choice of "absent" leaves what the base has.
            let value = match options.get(i) {
                Some(Choice::Give(v)) => Some(v),
                Some(Choice::Apart {
                    whole,
                    apart,
                    value,
                }) => {
                    params.insert(apart.clone(), value.clone());
                    whole.as_ref()
                }
                _ => None,
            };
            match value.or_else(|| self.base.get(key)) {
                Some(v) => match params.get_mut(key) {
                    Some(slot) => *slot = v.clone(),
                    None => drop(params.insert(key.clone(), v.clone())),
                },
                None => drop(params.remove(key)),
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
pub(super) fn object_space(
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
        let mut options: Vec<Choice> = Vec::new();
        if !slot.required {
            options.push(Choice::Absent);
        }
        options.extend(
            values(slot.schema, child, budget)?
                .into_iter()
                .map(Choice::Give),
        );
        if options.is_empty() {
            return Ok(None);
        }
        // Where no fact gives the field, leaving an optional key out is the same class.
        if child
            .whole
            .is_some_and(|(_, probe)| slot.required || probe.fact)
            && let Some(apart) = apart(schema, key, slot.required, &options, children)?
        {
            options.push(apart);
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
    // A required key nobody reads that gives a part of a read field apart (`a.x` for
    // `a`, or for `a.b` read through `a`): every call has it, and `check` reads the
    // field only where its value holds that part with the key's value, a class one
    // sampled value beside the field's classes leaves out. Not split here.
    for key in base.keys() {
        for (read, child) in children {
            if let Some(rest) = key
                .strip_prefix(read.as_str())
                .and_then(|rest| rest.strip_prefix('.'))
                && let Some(field) = part_of_read(child, rest)
            {
                return Err(Undecided::RequiredPart(key.clone(), field.to_string()));
            }
        }
    }
    spell_once(schema, &mut base)?;
    if product(&dims) > budget {
        return Err(Undecided::Bound(budget));
    }
    Ok(Some((base, dims)))
}

/// Gives the required keys nobody reads (`base`) values with which they spell each field
/// once, as `check` requires of a call (`action::one_spelling`). Sampled one by one, a
/// key that a required key with dots passes through may take a value that gives the
/// field a second time (`customer` as `""` beside `customer.tier`: a key with dots
/// through a string); every call would then have both, `check` would refuse each
/// whatever is kept, no call would be tried, and a rule that binds a call the schema
/// admits (`{"customer": 0, "customer.tier": 0, "n": "z"}`) would look ruled out. Such a
/// key takes a value that lacks every path below it (a number, a boolean or null, beside
/// which the key with dots gives the field its one value) where its schema admits one;
/// else precheck does not decide.
fn spell_once(schema: &Schema, base: &mut Map<String, Value>) -> Result<(), Undecided> {
    let twice = |base: &Map<String, Value>| match crate::action::spelt_two_ways(base, true) {
        Some(crate::action::Twice::Nested(field, _) | crate::action::Twice::Through(field, ..)) => {
            Some(field)
        }
        None => None,
    };
    if twice(base).is_none() {
        return Ok(());
    }
    let passed: Vec<String> = (base.keys())
        .filter(|key| {
            let below = format!("{key}.");
            base.keys().any(|other| other.starts_with(&below))
        })
        .cloned()
        .collect();
    for key in passed {
        if let Some(value) = schema.slot(&key).schema.sample_lacking()? {
            base.insert(key, value);
        }
    }
    match twice(base) {
        Some(field) => Err(Undecided::RequiredTwice(field)),
        None => Ok(()),
    }
}

/// Does `schema` admit a key that gives a part of `key` apart beside it, as [`apart`]
/// tries one (`{key}.part`, or a key its `properties` name below `key`)?
fn apart_admitted(schema: &Schema, key: &str) -> Result<bool, Undecided> {
    for apart in apart_keys(schema, key) {
        if schema.slot(&apart).schema.sample()?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The keys that may give a part of `key` apart, in the order they are tried:
/// `{key}.part`, then those `schema`'s `properties` name below `key` (`{key}.x`).
fn apart_keys<'s>(schema: &'s Schema, key: &str) -> impl Iterator<Item = String> + 's {
    let prefix = format!("{key}.");
    let part = format!("{prefix}part");
    std::iter::once(part).chain(
        schema
            .property_names()
            .filter(move |k| k.starts_with(&prefix))
            .map(str::to_string),
    )
}

/// The read field that a key `rest` below the node `reads` gives a part of apart: the
/// node's own field where it is read whole, else one read below a child that `rest`
/// passes (`b.z` below `a`, whose child `b` is read whole).
fn part_of_read<'p>(reads: &Reads<'p>, rest: &str) -> Option<&'p str> {
    if let Some((field, _)) = reads.whole {
        return Some(field);
    }
    reads.children.iter().find_map(|(name, child)| {
        let below = rest.strip_prefix(name.as_str())?.strip_prefix('.')?;
        part_of_read(child, below)
    })
}

/// The choice that gives a part of the field read as `key` spelt apart from it, where
/// `schema` (of the object holding `key`) admits such a key: `{key}.part`, else the
/// first key `properties` names that starts with `{key}.` (a schema that admits no
/// other key may still name one, `{"a.x": ...}` beside `a`), with some value it admits,
/// beside `key` set where it is required, to the first value of `options` that `check`
/// takes beside that key: not a string or an array (a key with dots through one gives
/// the field two ways, `action::one_spelling`), nor an object holding the part or a key
/// with dots. No read key is such a key: a predicate reading both `c` and `c.part`
/// reads `c` whole and through it, which precheck leaves undecided, and a key another
/// field is read at (`children`) is left to it. A schema that requires such a key has
/// every call give it already.
fn apart(
    schema: &Schema,
    key: &str,
    required: bool,
    options: &[Choice],
    children: &BTreeMap<String, Reads<'_>>,
) -> Result<Option<Choice>, Undecided> {
    let prefix = format!("{key}.");
    if schema.required().any(|k| k.starts_with(&prefix)) {
        return Ok(None);
    }
    for apart in apart_keys(schema, key) {
        if children.contains_key(&apart) {
            continue;
        }
        let Some(value) = schema.slot(&apart).schema.sample()? else {
            continue;
        };
        let part = apart.get(prefix.len()..).unwrap_or_default();
        let whole = if required {
            let beside = options.iter().find_map(|choice| match choice {
                Choice::Give(v) => match v {
                    Value::String(_) | Value::Array(_) => None,
                    Value::Object(o)
                        if crate::action::field_in(o, part).is_some()
                            || crate::action::has_dotted_key(o) =>
                    {
                        None
                    }
                    v => Some(v.clone()),
                },
                _ => None,
            });
            match beside {
                Some(v) => Some(v),
                None => continue,
            }
        } else {
            None
        };
        return Ok(Some(Choice::Apart {
            whole,
            apart,
            value,
        }));
    }
    Ok(None)
}

/// The values a key can hold, as far as the reads below it can tell them apart.
pub(super) fn values(
    schema: &Schema,
    reads: &Reads<'_>,
    budget: usize,
) -> Result<Vec<Value>, Undecided> {
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
                all_absent = dims.iter().all(|(_, o)| o.contains(&Choice::Absent));
                let mut combinations = Combinations::new(&base, &dims);
                let mut object = base.clone();
                while combinations.next_into(&mut object) {
                    out.push(Value::Object(object.clone()));
                }
            }
            // A number, a boolean or null lacks every path below it (they resolve from
            // facts); it matters only when no admitted object can lack them all. A string
            // or an array does not lack them: a path through one is UNKNOWN in the params
            // and no fact stands in (`action::elements_on_path`), a class of its own.
            if !all_absent && let Some(v) = schema.sample_lacking()? {
                out.push(v);
            }
            if let Some(v) = schema.sample_elements()? {
                out.push(v);
            }
            Ok(out)
        }
    }
}
