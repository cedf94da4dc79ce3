//! The proposed call and the tool definitions, as the gate reads them (SPEC 2.3).

use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::predicate::{Elements, ValueError, check_numbers};
use crate::schema::SchemaError;
use crate::text::clean;

/// Why a proposed call is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ActionError {
    /// Not a JSON object.
    #[error("the action must be an object {{\"tool\": ..., \"params\": {{...}}}}")]
    NotObject,
    /// A key other than `tool` and `params`.
    #[error("unknown key `{}` in the action (it takes `tool` and `params`)", clean(.0))]
    UnknownKey(String),
    /// A `tool` that is not a non-empty string.
    #[error("the action's `tool` must be a non-empty string")]
    Tool,
    /// No `tool`.
    #[error("the action has no `tool`")]
    NoTool,
    /// A `tool` with white space at an end or a control character: no record may name such
    /// a tool, so the call would pass unjudged.
    #[error(
        "the action's `tool` `{}` has white space at an end or a control character: no harness names a tool so, and no record can, so nothing would judge the call; write the name as the harness sends it",
        clean(.0)
    )]
    ToolName(String),
    /// `params` that are not an object.
    #[error("the action's `params` must be an object")]
    Params,
    /// A value in `params` the gate cannot compare or carry.
    #[error("the action's `params`: {0}")]
    Value(ValueError),
    /// Params that give one dotted field two different values: a key with dots, and a
    /// path through nested objects (the field).
    #[error(
        "the action's `params` give `{}` two different values, as a key with dots and through nested objects: the gate cannot tell which one the tool reads, so send it once",
        clean(.0)
    )]
    TwoSpellings(String),
    /// Params that give a field as a key with dots while a part of its path is an array
    /// or a string (the field, the part's path, which of the two it is):
    /// `{"items.0.amount": 5, "items": [{"amount": 6}]}`, `{"name.0": "a", "name": "abc"}`.
    #[error(
        "the action's `params` give `{}` as a key with dots while `{}` is {}: the gate does not read into arrays or strings and a tool may read the field there, so send it one way",
        clean(.0),
        clean(.1),
        .2.a()
    )]
    ThroughArray(String, String, Elements),
}

/// Why a tool definition, or a list of them, is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ToolError {
    /// Neither a name nor an object.
    #[error("a tool is a name or an object {{\"name\": ..., \"input_schema\": {{...}}}}")]
    Shape,
    /// An object without a non-empty string `name`.
    #[error("a tool needs a non-empty string `name`")]
    Name,
    /// A name that is blank or has white space at an end or a control character (the name).
    #[error(
        "tool `{}` has white space at an end or a control character (or nothing else): no harness names a tool so, and it would stand for no call; write the name as the harness sends it",
        clean(.0)
    )]
    NotName(String),
    /// A schema under more than one of the names harnesses use (the tool's name).
    #[error(
        "tool `{}` has more than one of input_schema, parameters, inputSchema, parametersJsonSchema",
        clean(.0)
    )]
    SchemaTwice(String),
    /// A schema that is neither an object nor a boolean (the tool's name).
    #[error("the schema of tool `{}` must be a JSON Schema object", clean(.0))]
    SchemaShape(String),
    /// A value in a schema the gate cannot compare or carry.
    #[error("the schema of tool `{}`: {error}", clean(tool))]
    SchemaValue {
        /// The tool's name.
        tool: String,
        /// Why the value is refused.
        error: ValueError,
    },
    /// A schema keyword the gate models, with a malformed value.
    #[error("the schema of tool `{}`: {error}", clean(tool))]
    Schema {
        /// The tool's name.
        tool: String,
        /// What is malformed, and where.
        error: SchemaError,
    },
    /// A list that is not an array.
    #[error("tools must be an array")]
    NotArray,
    /// Gemini's `{"functionDeclarations": ...}` with something other than an array.
    #[error("`functionDeclarations` must be an array of tools")]
    Declarations,
    /// A name listed twice.
    #[error("tool `{}` is listed twice", clean(.0))]
    Twice(String),
    /// A list that names no tool, where precheck and pin judge the calls of its tools.
    #[error(
        "names no tool: precheck and pin would judge no call; name the tools the agent can call, or leave the tools out to judge every tool a rule names"
    )]
    Empty,
    /// A list that names no tool, where a hook guards the calls of its tools.
    #[error(
        "names no tool: the hook would guard only the tools a rule names, and pass every other call unjudged; name the tools to guard, or leave the tools out to guard every tool"
    )]
    NoneGuarded,
}

/// A concrete proposed tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    /// The tool's name.
    pub tool: String,
    /// Its params; `{}` when absent.
    pub params: Map<String, Value>,
}

impl Action {
    /// Reads `{"tool": ..., "params": {...}}`.
    pub fn from_json(value: &Value) -> Result<Action, ActionError> {
        let Value::Object(obj) = value else {
            return Err(ActionError::NotObject);
        };
        if let Some(k) = obj.keys().find(|k| *k != "tool" && *k != "params") {
            return Err(ActionError::UnknownKey(k.clone()));
        }
        let tool = match obj.get("tool") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => return Err(ActionError::Tool),
            None => return Err(ActionError::NoTool),
        };
        let params = match obj.get("params") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(ActionError::Params),
        };
        let action = Action { tool, params };
        action.validate()?;
        Ok(action)
    }

    /// What [`Action::from_json`] holds a call to beyond its shape: a non-empty `tool`,
    /// params the gate can compare, one value per dotted field. The library checks an
    /// action its caller built field by field with it, as the binary checks `--action`.
    pub(crate) fn validate(&self) -> Result<(), ActionError> {
        if self.tool.is_empty() {
            return Err(ActionError::Tool);
        }
        if !crate::text::is_tool_name(&self.tool) {
            return Err(ActionError::ToolName(self.tool.clone()));
        }
        check_numbers(&Value::Object(self.params.clone())).map_err(ActionError::Value)?;
        one_spelling(&self.params)
    }

    /// Resolves a field from params: the key spelt exactly, else a dotted path through
    /// nested objects (SPEC 4, the first two steps of resolution). A path may pass through
    /// keys that have dots of their own (`{"a.b": {"c": 1}}` gives `a.b.c`), as
    /// `one_spelling` reads the params: every spelling of a field has one value.
    pub fn param(&self, field: &str) -> Option<&Value> {
        field_in(&self.params, field)
    }

    /// A field below `field` that the params give spelt apart from it (the free function `part_apart`).
    pub fn part_apart(&self, field: &str) -> Option<String> {
        part_apart(&self.params, field)
    }
}

/// The value of `field` in `map`, read as [`Action::param`] reads params: the key spelt
/// exactly, else a dotted path through nested objects, each key of it spelt with or
/// without the dots between its parts. A fact's value is read so below its own field.
pub fn field_in<'a>(map: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    if let Some(v) = map.get(field) {
        return Some(v);
    }
    if !field.contains('.') {
        return None;
    }
    let mut parts = field.split('.');
    let plain = parts.next().and_then(|first| {
        let here = map.get(first)?;
        parts.try_fold(here, |here, part| here.as_object()?.get(part))
    });
    plain.or_else(|| through(map, field, &mut Vec::new()))
}

/// True when a key of `map`, or of an object below it, has a dot: only such a key can
/// spell a field a second way (`{"a.b": 1}` beside `{"a": {"b": 1}}`); without one, every
/// path of keys names a field of its own.
pub fn has_dotted_key(map: &Map<String, Value>) -> bool {
    map.iter()
        .any(|(k, v)| k.contains('.') || v.as_object().is_some_and(has_dotted_key))
}

/// Every field `map` names, each with its value: each key, and below a key whose value
/// is an object, that object's fields after the key's name and a dot (`{"a": {"b": 1}}`
/// names `a.b` and `a`). In key order, an object's fields before the object's own.
/// An empty key below the top is a part of the field like any other (`{"": {"b": 1}}`
/// names `.b`, as `{".b": 1}` does).
pub fn field_names(map: &Map<String, Value>) -> Vec<(String, &Value)> {
    fn walk<'a>(
        prefix: Option<&str>,
        map: &'a Map<String, Value>,
        out: &mut Vec<(String, &'a Value)>,
    ) {
        for (key, value) in map {
            let name = match prefix {
                None => key.clone(),
                Some(prefix) => format!("{prefix}.{key}"),
            };
            if let Value::Object(inner) = value {
                walk(Some(&name), inner, out);
            }
            out.push((name, value));
        }
    }
    let mut out = Vec::new();
    walk(None, map, &mut out);
    out
}

/// A field below `field` that `map` (a call's params, or a fact's object value) gives
/// spelt apart from it: a key with dots (`{"a.b": 1}` for `a`), beside or without the
/// value [`field_in`] reads for `field`, which does not hold it (`{"a": {"c": 2}, "a.b":
/// 1}`). Then the gate cannot tell what the tool reads as `field`: that value, one with
/// the part merged in, or nothing. So a predicate's `field` resolves neither from such
/// params nor from a fact (a fact would stand in for a value the call gives in part),
/// and such a fact value does not give it whole. The first such field, in key order;
/// `None` when every field below `field` that `map` gives is held by its value.
pub fn part_apart(map: &Map<String, Value>, field: &str) -> Option<String> {
    // Without a key with dots every field below `field` is spelt through its value.
    if !has_dotted_key(map) {
        return None;
    }
    // The names `field_names` lists, walked with one buffer (this runs on every field a
    // call's predicate resolves), keeping the least that is below `field` and not held.
    // A name that neither leads to `field` nor lies below it has nothing below it to
    // keep, so most keys are passed over without being copied.
    struct Walk<'m, 'f> {
        field: &'f str,
        map: &'m Map<String, Value>,
        whole: std::cell::OnceCell<Option<&'m Map<String, Value>>>,
        first: Option<String>,
    }
    impl Walk<'_, '_> {
        /// The part of `name` below the field (`d` of `c.d` for `c`), if it is below it.
        fn rest<'n>(&self, name: &'n str) -> Option<&'n str> {
            name.strip_prefix(self.field)?.strip_prefix('.')
        }
        fn matters(&self, name: &str) -> bool {
            self.field.starts_with(name) || self.rest(name).is_some()
        }
        fn held(&self, rest: &str) -> bool {
            let whole = self
                .whole
                .get_or_init(|| field_in(self.map, self.field).and_then(Value::as_object));
            whole.is_some_and(|w| field_in(w, rest).is_some())
        }
        fn walk(&mut self, map: &Map<String, Value>, top: bool, name: &mut String) {
            for (key, value) in map {
                if top && !self.matters(key) {
                    continue;
                }
                let len = name.len();
                if !top {
                    name.push('.');
                }
                name.push_str(key);
                if self.matters(name) {
                    if let Value::Object(inner) = value {
                        self.walk(inner, false, name);
                    }
                    let least = self.first.as_deref().is_none_or(|f| name.as_str() < f);
                    if least && self.rest(name).is_some_and(|rest| !self.held(rest)) {
                        self.first = Some(name.clone());
                    }
                }
                name.truncate(len);
            }
        }
    }
    let mut walk = Walk {
        field,
        map,
        whole: std::cell::OnceCell::new(),
        first: None,
    };
    walk.walk(map, true, &mut String::new());
    walk.first
}

/// The most dots a field may have for [`spellings`] to list its spellings (2^8 of
/// them); a tool whose calls precheck must tell apart by a field with more is undecided.
pub const MAX_SPELLING_DOTS: usize = 8;

/// Every way a call's params can spell `field` (SPEC 4 and [`Action::param`]): the
/// path of keys, the field cut at any of its dots (`a.b.c`: `[a.b.c]`, `[a.b, c]`,
/// `[a, b.c]`, `[a, b, c]`). `None` for a field of more than [`MAX_SPELLING_DOTS`] dots.
pub fn spellings(field: &str) -> Option<Vec<Vec<&str>>> {
    let dots: Vec<usize> = field.match_indices('.').map(|(at, _)| at).collect();
    if dots.len() > MAX_SPELLING_DOTS {
        return None;
    }
    // Bit `i` of `cut` set: the field is cut at its `i`th dot.
    let paths = (0u32..1 << dots.len()).map(|cut| {
        let mut path = Vec::new();
        let mut start = 0;
        for (i, &at) in dots.iter().enumerate() {
            if cut & (1 << i) != 0 {
                path.push(field.get(start..at).unwrap_or_default());
                start = at + 1;
            }
        }
        path.push(field.get(start..).unwrap_or_default());
        path
    });
    Some(paths.collect())
}

/// The value of `field` through nested objects below `map`, the path cut at any of its
/// dots (each key of it spelt with the dots between its parts). `dead` holds the
/// (object, rest of the field) pairs searched in vain, so that each is searched once:
/// keys that share their first parts (`a`, `a.a`, `a.a.a`) would otherwise make the
/// search take a time exponential in the field's dots.
fn through<'a>(
    map: &'a Map<String, Value>,
    field: &str,
    dead: &mut Vec<(*const Map<String, Value>, usize)>,
) -> Option<&'a Value> {
    let here = (std::ptr::from_ref(map), field.len());
    if dead.contains(&here) {
        return None;
    }
    for (at, _) in field.match_indices('.') {
        let (Some(key), Some(rest)) = (field.get(..at), field.get(at + 1..)) else {
            continue;
        };
        let Some(Value::Object(inner)) = map.get(key) else {
            continue;
        };
        if let Some(v) = inner.get(rest).or_else(|| through(inner, rest, dead)) {
            return Some(v);
        }
    }
    dead.push(here);
    None
}

/// Where a path of `field` through nested objects below `map`, cut at any of its dots as
/// [`field_in`] reads it, meets a value with elements before the field ends: an array
/// (`items.0.amount` in `{"items": [{"amount": 5}]}`), or a string, whatever the next
/// part of the field (`name.0` in `{"name": "abc"}`, whose character 0 a tool may read;
/// `name.length`, which a JavaScript tool reads as the string's length; `invoice.id` in
/// `{"invoice": "INV-7"}`, a property the gate cannot know the tool does not read). The
/// part of the field up to that value (`items`, `name`), and what the value is
/// ([`Elements`]). The gate does not read into such values, so such a field resolves
/// nowhere in `map`, while a tool may read something at it. The first such path, each
/// key tried shortest first; `None` when none meets one. A path that meets a number, a
/// boolean or null lacks the field.
pub fn elements_on_path<'f>(
    map: &Map<String, Value>,
    field: &'f str,
) -> Option<(&'f str, Elements)> {
    // The length of the rest of the field from the dot after the value, and what the
    // value is, or `None`; `dead` as in [`through`].
    fn walk(
        map: &Map<String, Value>,
        rest: &str,
        dead: &mut Vec<(*const Map<String, Value>, usize)>,
    ) -> Option<(usize, Elements)> {
        let here = (std::ptr::from_ref(map), rest.len());
        if dead.contains(&here) {
            return None;
        }
        for (at, _) in rest.match_indices('.') {
            let (Some(key), Some(tail)) = (rest.get(..at), rest.get(at + 1..)) else {
                continue;
            };
            match map.get(key) {
                Some(Value::Array(_)) => return Some((rest.len() - at, Elements::Array)),
                Some(Value::String(_)) => return Some((rest.len() - at, Elements::String)),
                Some(Value::Object(inner)) => {
                    if let Some(left) = walk(inner, tail, dead) {
                        return Some(left);
                    }
                }
                _ => {}
            }
        }
        dead.push(here);
        None
    }
    let (left, what) = walk(map, field, &mut Vec::new())?;
    Some((field.get(..field.len().checked_sub(left)?)?, what))
}

/// How a map (a call's params, a fact's object value, an effect's `match`) gives one
/// field two ways ([`spelt_two_ways`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Twice {
    /// With dots in a key and through nested objects: the field, and whether the two
    /// values differ.
    Nested(String, bool),
    /// With dots in a key while a part of its path is an array or a string of the map,
    /// which the gate does not read into and a tool may read the field in
    /// ([`elements_on_path`]): the field, the part of its path up to that value, and
    /// what it is.
    Through(String, String, Elements),
}

/// The first field `map` (a call's params, a fact's object value, an effect's `match`)
/// gives two ways, or `None`. Only a key with a dot can spell a field a second way:
/// `None` without one.
///
/// - [`Twice::Nested`]: spelt with dots in a key and through nested objects; only one
///   whose two values differ when `differ_only`. Every field name [`field_names`] lists
///   is compared, whatever its value: an object one way and a scalar the other (`{"b.c":
///   {"d": 1}, "b": {"c": 5}}` gives `b.c` as `{"d": 1}` and as 5) is twice, as two
///   scalars are. First in the order [`field_names`] lists the second spelling, each
///   compared with the first.
/// - Else [`Twice::Through`]: the first field (in name order) given as a key with dots
///   while a part of its path is an array or a string of `map` (`{"items.0.amount": 5,
///   "items": [...]}`, `{"name.0": "a", "name": "abc"}`, `{"s.length": 1, "s": "abc"}`).
///   The gate reads the key and does not read into the array or string, while a tool may
///   read the field there (an item, a character, a length): two values for one field. A
///   number, a boolean, null or an object without the field on the way reads nothing
///   (`{"count.0": 1, "count": 5}`).
pub fn spelt_two_ways(map: &Map<String, Value>, differ_only: bool) -> Option<Twice> {
    if !has_dotted_key(map) {
        return None;
    }
    let fields = field_names(map);
    let mut seen: std::collections::BTreeMap<&str, &Value> = std::collections::BTreeMap::new();
    for (name, value) in &fields {
        match seen.get(name.as_str()) {
            Some(before) => {
                let differ = !crate::predicate::json_eq(before, value);
                if differ || !differ_only {
                    return Some(Twice::Nested(name.clone(), differ));
                }
            }
            None => {
                seen.insert(name, value);
            }
        }
    }
    // Every name is in `seen` once, in name order.
    seen.into_keys()
        .filter(|name| name.contains('.'))
        .find_map(|name| {
            let (at, what) = elements_on_path(map, name)?;
            Some(Twice::Through(name.to_string(), at.to_string(), what))
        })
}

/// Refuses params in which one dotted field has two different values: a key spelt with
/// dots beside the same path through nested objects (`{"customer.tier": "standard",
/// "customer": {"tier": "gold"}}`). Resolution reads the key first (SPEC 4), and a tool
/// may read the nested value: the gate would judge a call other than the one the tool
/// runs. The same value both ways is one value. A field with dots whose path meets an
/// array or a string of the params (`{"items.0.amount": 5, "items": [...]}`, `{"name.0":
/// "a", "name": "abc"}`, `{"s.length": 1, "s": "abc"}`) is refused too
/// ([`spelt_two_ways`]): the gate does not read into them, and a tool may read the field
/// there. A key with dots whose path meets a number, a boolean, null, or an object
/// without the field (`{"count.0": 1, "count": 5}`) is accepted: nothing is read through
/// that value, so the key gives the field its one value.
pub fn one_spelling(params: &Map<String, Value>) -> Result<(), ActionError> {
    match spelt_two_ways(params, true) {
        Some(Twice::Nested(name, _)) => Err(ActionError::TwoSpellings(name)),
        Some(Twice::Through(name, at, what)) => Err(ActionError::ThroughArray(name, at, what)),
        None => Ok(()),
    }
}

/// A tool the harness offers, with the JSON Schema of its input when known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// `input_schema` (Anthropic), `parameters` (OpenAI), `inputSchema` (MCP) or
    /// `parametersJsonSchema` (Gemini CLI).
    pub input_schema: Option<Value>,
}

const SCHEMA_KEYS: [&str; 4] = [
    "input_schema",
    "parameters",
    "inputSchema",
    "parametersJsonSchema",
];

impl Tool {
    /// Reads one tool: a bare name, or an object with `name` and optionally a schema under
    /// one of the names harnesses use (`input_schema`, `parameters`, `inputSchema`,
    /// `parametersJsonSchema`). OpenAI's `{"type":"function","function":{...}}` wrapper
    /// is unwrapped. Other keys (descriptions and such) are ignored.
    pub fn from_json(value: &Value) -> Result<Tool, ToolError> {
        match value {
            Value::String(s) if !s.is_empty() => {
                let tool = Tool {
                    name: s.clone(),
                    input_schema: None,
                };
                tool.validate()?;
                Ok(tool)
            }
            Value::Object(obj) => {
                if let (Some(Value::String(t)), Some(inner)) =
                    (obj.get("type"), obj.get("function"))
                    && t == "function"
                {
                    return Tool::from_json(inner);
                }
                let name = match obj.get("name") {
                    Some(Value::String(s)) if !s.is_empty() => s.clone(),
                    _ => return Err(ToolError::Name),
                };
                let schemas: Vec<&Value> = SCHEMA_KEYS.iter().filter_map(|k| obj.get(*k)).collect();
                let input_schema = match schemas.as_slice() {
                    [] => None,
                    [one] => Some((*one).clone()),
                    _ => return Err(ToolError::SchemaTwice(name)),
                };
                let tool = Tool { name, input_schema };
                tool.validate()?;
                Ok(tool)
            }
            _ => Err(ToolError::Shape),
        }
    }

    /// Reads a list of tools: a JSON array of tools. Gemini's groups
    /// `{"functionDeclarations": [...]}` stand for the tools they hold, as the array or in
    /// it, so the `tools` of a Gemini request reads as it is.
    pub fn list_from_json(value: &Value) -> Result<Vec<Tool>, ToolError> {
        let items = match declarations(value)? {
            Some(items) => items,
            None => value.as_array().ok_or(ToolError::NotArray)?,
        };
        let mut tools = Vec::new();
        for item in items {
            match declarations(item)? {
                Some(inner) => {
                    for one in inner {
                        tools.push(Tool::from_json(one)?);
                    }
                }
                None => tools.push(Tool::from_json(item)?),
            }
        }
        once_each(&tools)?;
        Ok(tools)
    }

    /// What [`Tool::from_json`] holds a tool to beyond its shape: a non-empty name, and a
    /// schema that is an object or a boolean, with values the gate can compare, that
    /// compiles. The library checks a tool its caller built field by field with it.
    pub(crate) fn validate(&self) -> Result<(), ToolError> {
        if self.name.is_empty() {
            return Err(ToolError::Name);
        }
        if !crate::text::is_tool_name(&self.name) {
            return Err(ToolError::NotName(self.name.clone()));
        }
        let Some(s) = &self.input_schema else {
            return Ok(());
        };
        let name = || self.name.clone();
        if !s.is_object() && !s.is_boolean() {
            return Err(ToolError::SchemaShape(name()));
        }
        if let Err(error) = check_numbers(s) {
            return Err(ToolError::SchemaValue {
                tool: name(),
                error,
            });
        }
        let mut ignored = std::collections::BTreeSet::new();
        if let Err(error) = crate::schema::Schema::compile(s, &mut ignored) {
            return Err(ToolError::Schema {
                tool: name(),
                error,
            });
        }
        Ok(())
    }

    /// Checks a list of tools a caller built: each as [`Tool::validate`], each name once.
    pub(crate) fn validate_list(tools: &[Tool]) -> Result<(), ToolError> {
        tools.iter().try_for_each(Tool::validate)?;
        once_each(tools)
    }
}

/// The tools in a Gemini group `{"functionDeclarations": [...]}` (an object with no
/// `name`); `None` for anything else. Other keys of the group are ignored, as a tool's
/// other keys are.
fn declarations(value: &Value) -> Result<Option<&Vec<Value>>, ToolError> {
    let Value::Object(obj) = value else {
        return Ok(None);
    };
    if obj.contains_key("name") {
        return Ok(None);
    }
    match obj.get("functionDeclarations") {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(_) => Err(ToolError::Declarations),
    }
}

/// Refuses a list that names one tool twice.
fn once_each(tools: &[Tool]) -> Result<(), ToolError> {
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    if let Some([twice, _]) = names.windows(2).find(|w| w.first() == w.get(1)) {
        return Err(ToolError::Twice(twice.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn action(text: &str) -> Result<Action, ActionError> {
        Action::from_json(&parse(text.as_bytes()).unwrap())
    }

    proptest::proptest! {
        /// `part_apart` walks the names with one buffer and prunes: it finds what its
        /// definition finds (every name `field_names` lists, in order, the first below
        /// the field that its value does not hold).
        #[test]
        fn part_apart_finds_the_least_name_below_the_field_its_value_does_not_hold(
            pairs in proptest::collection::vec(
                (proptest::sample::select(vec!["a", "a.b", "b", "a.b.c", "", "b.c", "c"]),
                 proptest::sample::select(vec![r#"1"#, r#"{"b":1}"#, r#"{"b.c":{"d":1}}"#,
                     r#"{"":{"b":1}}"#, r#"{"c":{"a.b":2}}"#, r#""s""#])),
                0..5),
            field in proptest::sample::select(vec!["a", "a.b", "b", "", "a.b.c", ".b", "c.a"]),
        ) {
            let mut map = Map::new();
            for (key, value) in pairs {
                map.insert(key.to_string(), parse(value.as_bytes()).unwrap());
            }
            let mut all: Vec<String> = field_names(&map).into_iter().map(|(n, _)| n).collect();
            all.sort();
            let whole = field_in(&map, field).and_then(Value::as_object);
            let defined = all.into_iter().find(|name| {
                name.strip_prefix(&format!("{field}.")).is_some_and(|rest| {
                    whole.is_none_or(|w| field_in(w, rest).is_none())
                })
            });
            let defined = defined.filter(|_| has_dotted_key(&map));
            proptest::prop_assert_eq!(part_apart(&map, field), defined);
        }
    }

    #[test]
    fn params_resolve_exact_key_before_dotted_path() {
        // Built directly: from_json refuses two values for one field
        // (`a_field_spelt_two_ways_with_two_values_is_refused`).
        let params =
            parse(br#"{"customer.tier":"gold","customer":{"tier":"standard","x":{"y":1}}}"#)
                .unwrap();
        let a = Action {
            tool: "t".into(),
            params: params.as_object().unwrap().clone(),
        };
        assert_eq!(
            a.param("customer.tier"),
            Some(&Value::String("gold".into()))
        );
        assert_eq!(
            a.param("customer.x.y")
                .and_then(|v| v.as_number())
                .map(|n| n.as_str()),
            Some("1")
        );
        assert_eq!(a.param("customer.nope"), None);
        assert_eq!(a.param("customer.tier.deeper"), None);
    }

    #[test]
    fn spellings_cut_the_field_at_every_set_of_its_dots() {
        assert_eq!(spellings("amount"), Some(vec![vec!["amount"]]));
        let mut three = spellings("a.b.c").unwrap();
        three.sort();
        assert_eq!(
            three,
            [
                vec!["a", "b", "c"],
                vec!["a", "b.c"],
                vec!["a.b", "c"],
                vec!["a.b.c"]
            ]
        );
        // Every spelling resolves the field.
        for path in spellings("a.b.c").unwrap() {
            let params = path.iter().rev().fold(
                Value::from(7),
                |inner, key| serde_json::json!({ *key: inner }),
            );
            let a = Action {
                tool: "t".into(),
                params: params.as_object().cloned().unwrap_or_default(),
            };
            assert_eq!(a.param("a.b.c"), Some(&Value::from(7)), "{path:?}");
        }
        let many = ["x"; MAX_SPELLING_DOTS + 1].join(".");
        assert_eq!(
            spellings(&many).map(|s| s.len()),
            Some(1 << MAX_SPELLING_DOTS)
        );
        assert_eq!(spellings(&format!("{many}.y")), None);
    }

    #[test]
    fn a_path_through_keys_with_dots_resolves_the_field() {
        // `one_spelling` reads each of these as giving `a.b.c` the value 500 (with
        // another value beside it, the action is refused), so resolution reads it too:
        // it fell through to a fact, and a dropped rule on `a.b.c gt 100` passed.
        for params in [
            r#"{"a.b":{"c":500}}"#,
            r#"{"a":{"b.c":500}}"#,
            r#"{"x":1,"a":{"y":2},"a.b":{"z":3,"c":500}}"#,
            r#"{"a":{"x":{"d":1}},"a.b":{"c":500}}"#,
        ] {
            let a = action(&format!(r#"{{"tool":"t","params":{params}}}"#)).unwrap();
            assert_eq!(
                a.param("a.b.c")
                    .and_then(Value::as_number)
                    .map(|n| n.as_str()),
                Some("500"),
                "{params}"
            );
            assert_eq!(a.param("a.b.d.e"), None, "{params}");
        }
        // Keys that share their first parts do not make the search blow up.
        let mut params = Value::from(1);
        for _ in 0..40 {
            let mut level = Map::new();
            for n in 1..=30 {
                level.insert(vec!["a"; n].join("."), params.clone());
            }
            params = Value::Object(level);
            if params.to_string().len() > 1 << 20 {
                break;
            }
        }
        let a = Action {
            tool: "t".into(),
            params: params.as_object().cloned().unwrap_or_default(),
        };
        let field = format!("{}.b", vec!["a"; 60].join("."));
        assert_eq!(a.param(&field), None);
    }

    #[test]
    fn a_field_spelt_two_ways_with_two_values_is_refused() {
        let two = [
            r#"{"customer.tier":"standard","customer":{"tier":"gold"}}"#,
            r#"{"a":{"b.c":1,"b":{"c":2}}}"#,
            r#"{"a.b":{"c":1},"a":{"b":{"c":2}}}"#,
            r#"{"a.b.c":1,"a.b":{"c":2}}"#,
        ];
        for params in two {
            let err = action(&format!(r#"{{"tool":"t","params":{params}}}"#)).unwrap_err();
            assert!(
                matches!(err, ActionError::TwoSpellings(_)),
                "{params}: {err:?}"
            );
        }
        let one = [
            r#"{"customer.tier":"gold","customer":{"tier":"gold"}}"#,
            r#"{"customer.tier":5000,"customer":{"tier":5000.0}}"#,
            r#"{"customer.tier":"gold"}"#,
            r#"{"headers":{"content.type":"json"},"content":{"type":"x"}}"#,
            r#"{"a":{"b":1},"b":{"a":2}}"#,
        ];
        for params in one {
            assert!(
                action(&format!(r#"{{"tool":"t","params":{params}}}"#)).is_ok(),
                "{params}"
            );
        }
        // A key with dots whose path meets an array, or a string at any part: the tool
        // may read the field there (an element, a length).
        for params in [
            r#"{"items.0.amount":100,"items":[{"amount":8400}]}"#,
            r#"{"a":{"items.0":1,"items":[2]}}"#,
            r#"{"a.items.0":1,"a":{"items":[2]}}"#,
            r#"{"a.b":1,"a":"abc"}"#,
            r#"{"s.length":1,"s":"abc"}"#,
        ] {
            let err = action(&format!(r#"{{"tool":"t","params":{params}}}"#)).unwrap_err();
            assert!(
                matches!(err, ActionError::ThroughArray(_, _, _)),
                "{params}: {err:?}"
            );
        }
        for params in [
            r#"{"items":[{"amount.x":1}],"amount":{"x":2}}"#,
            r#"{"items.0":1,"item":[2]}"#,
        ] {
            assert!(
                action(&format!(r#"{{"tool":"t","params":{params}}}"#)).is_ok(),
                "{params}"
            );
        }
        // A key with dots beside a number, a boolean or null: the path through it reads
        // nothing (no elements), so the key gives the field's one value, as beside an
        // object that lacks it (`{"a.b":1,"a":{"c":2}}`).
        for params in [
            r#"{"count.0":1,"count":5}"#,
            r#"{"a.b":1,"a":true}"#,
            r#"{"a.b":1,"a":null}"#,
            r#"{"a.b":1,"a":{"c":2}}"#,
        ] {
            let a = action(&format!(r#"{{"tool":"t","params":{params}}}"#)).unwrap();
            let field = a.params.keys().find(|k| k.contains('.')).cloned();
            let field = field.unwrap_or_default();
            assert_eq!(elements_on_path(&a.params, &field), None, "{params}");
            assert_eq!(a.param(&field), Some(&Value::from(1)), "{params}");
        }
    }

    #[test]
    fn a_path_meeting_a_string_at_any_part_meets_elements() {
        // A tool may read a string's character (`name.0`), its length (`name.length`),
        // or a property the gate cannot know it does not read (`invoice.id`).
        for (params, field, at) in [
            (r#"{"name":"abc"}"#, "name.0", "name"),
            (r#"{"name":"abc"}"#, "name.length", "name"),
            (r#"{"invoice":"INV-7"}"#, "invoice.id", "invoice"),
            (r#"{"a":{"s":"x"}}"#, "a.s.length", "a.s"),
            (r#"{"a.s":"x"}"#, "a.s.length.b", "a.s"),
        ] {
            let map = parse(params.as_bytes()).unwrap();
            let map = map.as_object().unwrap();
            assert_eq!(
                elements_on_path(map, field),
                Some((at, Elements::String)),
                "{params} {field}"
            );
        }
        // The string itself, or a path through a number or an object: no elements.
        for (params, field) in [
            (r#"{"name":"abc"}"#, "name"),
            (r#"{"name":5}"#, "name.length"),
            (r#"{"name":{"length":3}}"#, "name.length"),
        ] {
            let map = parse(params.as_bytes()).unwrap();
            let map = map.as_object().unwrap();
            assert_eq!(elements_on_path(map, field), None, "{params} {field}");
        }
    }

    #[test]
    fn action_shape_is_checked() {
        assert!(action(r#"{"tool":"t"}"#).unwrap().params.is_empty());
        assert!(action(r#"{"params":{}}"#).is_err());
        assert!(action(r#"{"tool":"t","params":[]}"#).is_err());
        assert!(action(r#"{"tool":"t","parms":{}}"#).is_err());
        assert!(action(r#"[]"#).is_err());
    }

    #[test]
    fn tools_in_each_vendor_shape() {
        let v = parse(
            br#"["a", {"name":"b","input_schema":{"type":"object"}},
                {"type":"function","function":{"name":"c","parameters":{}}},
                {"name":"d","inputSchema":{},"description":"x"}]"#,
        )
        .unwrap();
        let tools = Tool::list_from_json(&v).unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert!(tools[0].input_schema.is_none() && tools[1].input_schema.is_some());
        assert!(Tool::list_from_json(&parse(br#"["a","a"]"#).unwrap()).is_err());
    }

    #[test]
    fn gemini_declarations_read_as_gemini_cli_sends_them() {
        // The `tools` of a request Gemini CLI 0.61.0 sent its model (trimmed): one group,
        // each schema under `parametersJsonSchema`.
        let request = parse(
            br#"[{"functionDeclarations":[
                {"name":"run_shell_command","description":"x","parametersJsonSchema":
                  {"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},
                {"name":"mcp_billing_refunds_create","parametersJsonSchema":
                  {"type":"object","properties":{"amount":{"type":"number"},"ticket":{"type":"string"},
                   "wait_for_previous":{"type":"boolean"}},"required":["amount","ticket"]}}]}]"#,
        )
        .unwrap();
        let tools = Tool::list_from_json(&request).unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["run_shell_command", "mcp_billing_refunds_create"]);
        assert_eq!(
            tools[1].input_schema.as_ref().unwrap()["required"],
            serde_json::json!(["amount", "ticket"])
        );
        // The group alone, groups beside plain tools, and one declaration all read.
        let group = request.as_array().unwrap()[0].clone();
        assert_eq!(Tool::list_from_json(&group).unwrap(), tools);
        let mixed = serde_json::json!([group, "notes.append"]);
        assert_eq!(Tool::list_from_json(&mixed).unwrap().len(), 3);
        let one = &group["functionDeclarations"][1];
        assert_eq!(Tool::from_json(one).unwrap(), tools[1]);
        // A group twice names each tool twice; a group that holds no array is refused.
        let twice = serde_json::json!([group, group]);
        assert!(matches!(
            Tool::list_from_json(&twice),
            Err(ToolError::Twice(_))
        ));
        let bad = parse(br#"[{"functionDeclarations":{"name":"a"}}]"#).unwrap();
        assert_eq!(
            Tool::list_from_json(&bad).unwrap_err().to_string(),
            "`functionDeclarations` must be an array of tools"
        );
        // A fourth key, and still one schema a tool.
        let two = parse(br#"[{"name":"t","parameters":{},"parametersJsonSchema":{}}]"#).unwrap();
        assert_eq!(
            Tool::list_from_json(&two).unwrap_err().to_string(),
            "tool `t` has more than one of input_schema, parameters, inputSchema, parametersJsonSchema"
        );
    }

    #[test]
    fn a_gemini_type_name_is_refused_saying_why_and_how_to_fix() {
        // Gemini CLI 0.61.0 runs every call of a tool whose schema has `"type": "NUMBER"`
        // (Ajv cannot compile it, and the CLI then skips the check): reading it as
        // `number` would make precheck judge fewer calls than the harness runs.
        let v = parse(
            br#"[{"name":"t","parametersJsonSchema":{"type":"object",
                 "properties":{"amount":{"type":"NUMBER","maximum":5000}}}}]"#,
        )
        .unwrap();
        assert_eq!(
            Tool::list_from_json(&v).unwrap_err().to_string(),
            r#"the schema of tool `t`: /properties/amount/type: type "NUMBER" is how the Gemini API spells "number", and JSON Schema does not read it: Gemini CLI checks no call against a schema with it (its validator cannot compile the schema, so every call runs, whatever the schema says); write "number" in the tool's own schema and here, or give the tool without a schema"#
        );
    }

    #[test]
    fn a_malformed_schema_names_the_tool_and_the_keyword() {
        let v =
            parse(br#"[{"name":"t","input_schema":{"properties":{"n":{"type":"int"}}}}]"#).unwrap();
        let err = Tool::list_from_json(&v).unwrap_err();
        let ToolError::Schema { tool, error } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            (tool.as_str(), error.at.as_str()),
            ("t", "/properties/n/type")
        );
        assert_eq!(
            err.to_string(),
            r#"the schema of tool `t`: /properties/n/type: unknown type "int" (null, boolean, integer, number, string, array, object)"#
        );
    }
}
