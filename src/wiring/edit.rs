//! Editing a harness's JSON settings file in place: the hook group is added (or an
//! outdated one of ours replaced) by splicing text, so that every byte outside the
//! splice stays as the user wrote it (their key order, indentation and, in Gemini CLI's
//! settings, comments).
//!
//! The scanner here only finds where values start and end; whether the text is valid is
//! decided by [`read`], which parses it strictly (after blanking comments where the
//! harness allows them). This module does no I/O.

use serde_json::Value;

use super::ConfigError;

/// Where a JSON value sits in the text, and for a container, where its parts sit.
#[derive(Debug, Clone)]
struct Node {
    start: usize,
    end: usize,
    kind: NodeKind,
}

#[derive(Debug, Clone)]
enum NodeKind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Scalar,
}

#[derive(Debug, Clone)]
struct Member {
    key: String,
    key_start: usize,
    value: Node,
}

/// Reads a settings file as the harness does: strict JSON, or with `//` and `/* */`
/// comments when `comments` is set (Gemini CLI strips them before parsing).
pub fn read(text: &str, comments: bool) -> Result<Value, ConfigError> {
    let plain = if comments {
        blank_comments(text)
    } else {
        text.to_string()
    };
    let plain = plain.strip_prefix('\u{feff}').unwrap_or(&plain);
    crate::json::parse(plain.as_bytes()).map_err(|e| ConfigError::Syntax {
        line: e.line,
        column: e.column,
        message: e.message,
    })
}

/// The text with every comment replaced by spaces (newlines kept), so that positions
/// in it are positions in the original.
pub fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                out.push(' ');
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                    out.extend(std::iter::repeat_n(' ', n.len_utf8()));
                }
            }
            ('/', Some('*')) => {
                out.push(' ');
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                    } else {
                        out.extend(std::iter::repeat_n(' ', n.len_utf8()));
                    }
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The outcome of adding a hook group to one event's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new text (equal to the old one when nothing changed).
    pub text: String,
    /// The group's index in the event's list.
    pub index: usize,
    /// Whether the text changed.
    pub changed: bool,
}

/// Adds `group` (pretty JSON at indentation 0) to `hooks.<event>` in `text`: nothing
/// changes when an equal group is there already; a group for which `ours` says yes is
/// replaced; otherwise the group is appended. With `last`, the group ends up last in the
/// list: an equal or outdated one of ours that some other group follows is taken out,
/// and the group appended. `text` must be valid (see [`read`]).
pub fn add_group(
    text: &str,
    comments: bool,
    event: &str,
    group: &str,
    last: bool,
    ours: impl Fn(&Value) -> bool,
) -> Result<Edited, ConfigError> {
    let plain = if comments {
        blank_comments(text)
    } else {
        text.to_string()
    };
    let wanted = read(group, false)?;
    let root = Scanner::new(&plain).document()?;
    let NodeKind::Object(members) = &root.kind else {
        return Err(ConfigError::TopNotObject);
    };
    let Some(hooks) = members.iter().find(|m| m.key == "hooks") else {
        let member = format!(
            "\"hooks\": {{\n  {}: [\n    {}\n  ]\n}}",
            quote(event),
            indent(group, "    ")
        );
        return Ok(Edited {
            text: insert_member(text, &root, members, &member),
            index: 0,
            changed: true,
        });
    };
    let NodeKind::Object(events) = &hooks.value.kind else {
        return Err(ConfigError::HooksNotObject);
    };
    let Some(list) = events.iter().find(|m| m.key == event) else {
        let member = format!("{}: [\n  {}\n]", quote(event), indent(group, "  "));
        return Ok(Edited {
            text: insert_member(text, &hooks.value, events, &member),
            index: 0,
            changed: true,
        });
    };
    let NodeKind::Array(groups) = &list.value.kind else {
        return Err(ConfigError::EventNotArray(event.to_string()));
    };
    let values: Vec<Value> = groups
        .iter()
        .map(|g| read(plain.get(g.start..g.end).unwrap_or(""), false))
        .collect::<Result<_, _>>()?;
    let equal = values.iter().position(|v| *v == wanted);
    let found = equal.or_else(|| values.iter().position(&ours));
    if let Some(i) = found
        && last
        && i + 1 < groups.len()
    {
        let without = remove_element(text, groups, i);
        let edited = add_group(&without, comments, event, group, last, ours)?;
        return Ok(Edited {
            changed: true,
            ..edited
        });
    }
    if let Some(i) = equal {
        return Ok(Edited {
            text: text.to_string(),
            index: i,
            changed: false,
        });
    }
    if let Some((i, g)) = found.and_then(|i| groups.get(i).map(|g| (i, g))) {
        let pad = line_indent(text, g.start);
        let mut out = String::with_capacity(text.len() + group.len());
        out.push_str(text.get(..g.start).unwrap_or(""));
        out.push_str(&indent(group, &pad));
        out.push_str(text.get(g.end..).unwrap_or(""));
        return Ok(Edited {
            text: out,
            index: i,
            changed: true,
        });
    }
    Ok(Edited {
        text: insert_element(text, &list.value, groups, group),
        index: groups.len(),
        changed: true,
    })
}

/// The text without the array element `i` of `elements` (one that another follows), and
/// the separator between them.
fn remove_element(text: &str, elements: &[Node], i: usize) -> String {
    let (from, to) = match (
        i.checked_sub(1).and_then(|p| elements.get(p)),
        elements.get(i),
    ) {
        (Some(before), Some(this)) => (before.end, this.end),
        (None, Some(this)) => (this.start, elements.get(1).map_or(this.end, |n| n.start)),
        (_, None) => return text.to_string(),
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(text.get(..from).unwrap_or(""));
    out.push_str(text.get(to..).unwrap_or(""));
    out
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Every line after the first gets `pad` in front.
fn indent(text: &str, pad: &str) -> String {
    text.replace('\n', &format!("\n{pad}"))
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let before = text.get(..at).unwrap_or("");
    let line = before.rsplit('\n').next().unwrap_or("");
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// Inserts `member` (`"key": value`, indentation 0) as the last member of `object`.
fn insert_member(text: &str, object: &Node, members: &[Member], member: &str) -> String {
    match members.last() {
        Some(last) => {
            let pad = line_indent(text, last.key_start);
            splice(
                text,
                last.value.end,
                &format!(",\n{pad}{}", indent(member, &pad)),
            )
        }
        None => {
            let outer = line_indent(text, object.start);
            let pad = format!("{outer}  ");
            let inner = format!("\n{pad}{}\n{outer}", indent(member, &pad));
            replace_inside(text, object, &inner)
        }
    }
}

/// Inserts `element` (indentation 0) as the last element of `array`.
fn insert_element(text: &str, array: &Node, elements: &[Node], element: &str) -> String {
    match elements.last() {
        Some(last) => {
            let pad = line_indent(text, last.start);
            splice(
                text,
                last.end,
                &format!(",\n{pad}{}", indent(element, &pad)),
            )
        }
        None => {
            let outer = line_indent(text, array.start);
            let pad = format!("{outer}  ");
            let inner = format!("\n{pad}{}\n{outer}", indent(element, &pad));
            replace_inside(text, array, &inner)
        }
    }
}

fn splice(text: &str, at: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(text.get(..at).unwrap_or(""));
    out.push_str(insert);
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// Replaces what lies between a container's brackets (an empty container: whitespace or
/// comments only).
fn replace_inside(text: &str, node: &Node, inner: &str) -> String {
    let mut out = String::with_capacity(text.len() + inner.len());
    out.push_str(text.get(..=node.start).unwrap_or(""));
    out.push_str(inner);
    out.push_str(text.get(node.end.saturating_sub(1)..).unwrap_or(""));
    out
}

/// Finds where values start and end in comment-free JSON text.
struct Scanner<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Scanner<'a> {
        let at = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Scanner {
            bytes: text.as_bytes(),
            text,
            at,
        }
    }

    fn document(&mut self) -> Result<Node, ConfigError> {
        let node = self.value(0)?;
        self.space();
        if self.at < self.bytes.len() {
            return Err(self.error("trailing characters"));
        }
        Ok(node)
    }

    fn error(&self, message: &str) -> ConfigError {
        let before = self.text.get(..self.at).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ConfigError::Syntax {
            line,
            column,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ConfigError> {
        if depth > 128 {
            return Err(self.error("nested too deeply"));
        }
        self.space();
        let start = self.at;
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                } else {
                    loop {
                        self.space();
                        let key_start = self.at;
                        self.string()?;
                        let key: String =
                            serde_json::from_str(self.text.get(key_start..self.at).unwrap_or(""))
                                .map_err(|_| self.error("invalid key"))?;
                        self.space();
                        if self.peek() != Some(b':') {
                            return Err(self.error("expected `:`"));
                        }
                        self.at += 1;
                        let value = self.value(depth + 1)?;
                        members.push(Member {
                            key,
                            key_start,
                            value,
                        });
                        self.space();
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b'}') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.error("expected `,` or `}`")),
                        }
                    }
                }
                Ok(Node {
                    start,
                    end: self.at,
                    kind: NodeKind::Object(members),
                })
            }
            Some(b'[') => {
                self.at += 1;
                let mut elements = Vec::new();
                self.space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                } else {
                    loop {
                        elements.push(self.value(depth + 1)?);
                        self.space();
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                break;
                            }
                            _ => return Err(self.error("expected `,` or `]`")),
                        }
                    }
                }
                Ok(Node {
                    start,
                    end: self.at,
                    kind: NodeKind::Array(elements),
                })
            }
            Some(b'"') => {
                self.string()?;
                Ok(Node {
                    start,
                    end: self.at,
                    kind: NodeKind::Scalar,
                })
            }
            Some(_) => {
                while matches!(self.peek(), Some(c) if !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                {
                    self.at += 1;
                }
                if self.at == start {
                    return Err(self.error("expected a value"));
                }
                Ok(Node {
                    start,
                    end: self.at,
                    kind: NodeKind::Scalar,
                })
            }
            None => Err(self.error("expected a value")),
        }
    }

    fn string(&mut self) -> Result<(), ConfigError> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string"));
        }
        self.at += 1;
        loop {
            match self.peek() {
                Some(b'\\') => self.at += 2,
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(_) => self.at += 1,
                None => return Err(self.error("unterminated string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: &str = "{\n  \"matcher\": \"Bash\",\n  \"hooks\": []\n}";

    fn add(text: &str) -> Edited {
        add_group(text, false, "PreToolUse", GROUP, false, |_| false).unwrap()
    }

    #[test]
    fn an_empty_object_gets_the_whole_block() {
        let e = add("{}\n");
        assert_eq!(
            e.text,
            "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": []\n      }\n    ]\n  }\n}\n"
        );
        assert_eq!((e.index, e.changed), (0, true));
        // A second run changes nothing.
        let again = add(&e.text);
        assert_eq!(
            (again.text.as_str(), again.changed),
            (e.text.as_str(), false)
        );
    }

    #[test]
    fn other_keys_are_kept_byte_for_byte() {
        let text = "{\n    \"model\":   \"x\" ,\n    \"hooks\": {\"Stop\": []}\n}";
        let e = add(text);
        assert!(
            e.text
                .starts_with("{\n    \"model\":   \"x\" ,\n    \"hooks\": {\"Stop\": []")
        );
        assert!(read(&e.text, false).is_ok());
        let text = "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Edit\", \"hooks\": []}]}}";
        let e = add(text);
        assert_eq!(e.index, 1);
        assert!(
            e.text.starts_with(
                "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Edit\", \"hooks\": []},"
            )
        );
    }

    #[test]
    fn comments_are_kept_and_ignored() {
        let text = "// settings\n{\n  /* theme */ \"ui\": {\"theme\": \"x//y\"}\n}\n";
        let e = add_group(text, true, "BeforeTool", GROUP, false, |_| false).unwrap();
        assert!(
            e.text
                .starts_with("// settings\n{\n  /* theme */ \"ui\": {\"theme\": \"x//y\"},")
        );
        assert!(read(&e.text, true).is_ok());
        assert!(read(&e.text, false).is_err());
    }

    #[test]
    fn an_outdated_group_of_ours_is_replaced_in_place() {
        let text = "{\"hooks\": {\"PreToolUse\": [{\"old\": 1}, {\"other\": 2}]}}";
        let e = add_group(text, false, "PreToolUse", GROUP, false, |v| {
            v.get("old").is_some()
        })
        .unwrap();
        assert_eq!(e.index, 0);
        assert!(e.text.ends_with(", {\"other\": 2}]}}"));
    }

    #[test]
    fn a_group_kept_last_is_moved_after_the_others() {
        // Ours, outdated, before another group: taken out and appended.
        let text = "{\"hooks\": {\"E\": [\n  {\"old\": 1},\n  {\"other\": 2}\n]}}";
        let e = add_group(text, false, "E", GROUP, true, |v| v.get("old").is_some()).unwrap();
        assert_eq!((e.index, e.changed), (1, true));
        let v = read(&e.text, false).unwrap();
        assert_eq!(v["hooks"]["E"][0], serde_json::json!({"other": 2}));
        assert_eq!(v["hooks"]["E"][1], read(GROUP, false).unwrap());
        assert_eq!(v["hooks"]["E"].as_array().map(Vec::len), Some(2));
        // Equal to ours but not last: moved too; once last, left alone.
        let text = format!("{{\"hooks\": {{\"E\": [{GROUP}, {{\"other\": 2}}, {{\"x\": 3}}]}}}}");
        let e = add_group(&text, false, "E", GROUP, true, |_| false).unwrap();
        assert_eq!((e.index, e.changed), (2, true));
        let again = add_group(&e.text, false, "E", GROUP, true, |_| false).unwrap();
        assert_eq!((again.index, again.changed), (2, false));
        assert_eq!(again.text, e.text);
        // Without `last`, it stays where it is.
        let kept = add_group(&text, false, "E", GROUP, false, |_| false).unwrap();
        assert_eq!((kept.index, kept.changed), (0, false));
    }

    #[test]
    fn shapes_the_edit_cannot_handle_are_refused() {
        assert!(add_group("[]", false, "E", GROUP, false, |_| false).is_err());
        assert!(add_group("{\"hooks\": []}", false, "E", GROUP, false, |_| false).is_err());
        assert!(
            add_group("{\"hooks\": {\"E\": {}}}", false, "E", GROUP, false, |_| {
                false
            })
            .is_err()
        );
    }
}
