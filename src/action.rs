//! The proposed call and the tool definitions, as the gate reads them (SPEC 2.3).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::predicate::check_numbers;

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
    pub fn from_json(value: &Value) -> Result<Action, String> {
        let Value::Object(obj) = value else {
            return Err("the action must be an object {\"tool\": ..., \"params\": {...}}".into());
        };
        if let Some(k) = obj.keys().find(|k| *k != "tool" && *k != "params") {
            return Err(format!(
                "unknown key `{}` in the action (it takes `tool` and `params`)",
                crate::text::clean(k)
            ));
        }
        let tool = match obj.get("tool") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => return Err("the action's `tool` must be a non-empty string".into()),
            None => return Err("the action has no `tool`".into()),
        };
        let params = match obj.get("params") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err("the action's `params` must be an object".into()),
        };
        check_numbers(&Value::Object(params.clone()))
            .map_err(|e| format!("the action's `params`: {e}"))?;
        Ok(Action { tool, params })
    }

    /// Resolves a field from params: the key spelt exactly, else a dotted path through
    /// nested objects (SPEC 4, the first two steps of resolution).
    pub fn param(&self, field: &str) -> Option<&Value> {
        if let Some(v) = self.params.get(field) {
            return Some(v);
        }
        if !field.contains('.') {
            return None;
        }
        let mut parts = field.split('.');
        let mut here = self.params.get(parts.next()?)?;
        for part in parts {
            here = here.as_object()?.get(part)?;
        }
        Some(here)
    }
}

/// A tool the harness offers, with the JSON Schema of its input when known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// `input_schema` (Anthropic), `parameters` (OpenAI) or `inputSchema` (MCP).
    pub input_schema: Option<Value>,
}

const SCHEMA_KEYS: [&str; 3] = ["input_schema", "parameters", "inputSchema"];

impl Tool {
    /// Reads one tool: a bare name, or an object with `name` and optionally a schema under
    /// one of the names harnesses use. OpenAI's `{"type":"function","function":{...}}`
    /// wrapper is unwrapped. Other keys (descriptions and such) are ignored.
    pub fn from_json(value: &Value) -> Result<Tool, String> {
        match value {
            Value::String(s) if !s.is_empty() => Ok(Tool {
                name: s.clone(),
                input_schema: None,
            }),
            Value::Object(obj) => {
                if let (Some(Value::String(t)), Some(inner)) =
                    (obj.get("type"), obj.get("function"))
                    && t == "function"
                {
                    return Tool::from_json(inner);
                }
                let name = match obj.get("name") {
                    Some(Value::String(s)) if !s.is_empty() => s.clone(),
                    _ => return Err("a tool needs a non-empty string `name`".into()),
                };
                let schemas: Vec<&Value> = SCHEMA_KEYS.iter().filter_map(|k| obj.get(*k)).collect();
                let input_schema = match schemas.as_slice() {
                    [] => None,
                    [one] => Some((*one).clone()),
                    _ => {
                        return Err(format!(
                            "tool `{}` has more than one of input_schema, parameters, inputSchema",
                            crate::text::clean(&name)
                        ));
                    }
                };
                if let Some(s) = &input_schema {
                    if !s.is_object() && !s.is_boolean() {
                        return Err(format!(
                            "the schema of tool `{}` must be a JSON Schema object",
                            crate::text::clean(&name)
                        ));
                    }
                    check_numbers(s).map_err(|e| {
                        format!("the schema of tool `{}`: {e}", crate::text::clean(&name))
                    })?;
                    crate::schema::Schema::compile(s, &mut std::collections::BTreeSet::new())
                        .map_err(|e| {
                            format!("the schema of tool `{}`: {e}", crate::text::clean(&name))
                        })?;
                }
                Ok(Tool { name, input_schema })
            }
            _ => {
                Err("a tool is a name or an object {\"name\": ..., \"input_schema\": {...}}".into())
            }
        }
    }

    /// Reads a list of tools: a JSON array of tools.
    pub fn list_from_json(value: &Value) -> Result<Vec<Tool>, String> {
        let Value::Array(items) = value else {
            return Err("tools must be an array".into());
        };
        let tools = items
            .iter()
            .map(Tool::from_json)
            .collect::<Result<Vec<_>, _>>()?;
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w.first() == w.get(1)) {
            return Err(format!(
                "tool `{}` is listed twice",
                crate::text::clean(w.first().copied().unwrap_or(""))
            ));
        }
        Ok(tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn action(text: &str) -> Result<Action, String> {
        Action::from_json(&parse(text.as_bytes()).unwrap())
    }

    #[test]
    fn params_resolve_exact_key_before_dotted_path() {
        let a = action(r#"{"tool":"t","params":{"customer.tier":"gold","customer":{"tier":"standard","x":{"y":1}}}}"#)
            .unwrap();
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
    fn a_malformed_schema_names_the_tool_and_the_keyword() {
        let v =
            parse(br#"[{"name":"t","input_schema":{"properties":{"n":{"type":"int"}}}}]"#).unwrap();
        let err = Tool::list_from_json(&v).unwrap_err();
        assert!(
            err.contains("tool `t`") && err.contains("/properties/n/type"),
            "{err}"
        );
    }
}
