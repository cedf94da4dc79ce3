//! Hook commands as shell text: quoting a word for a POSIX shell, and reading back the
//! words of a command (the binary, `--store`) the way the shell would split them.

/// Whether a command runs an `omission-gate` binary's `hook <adapter>`.
pub fn runs_adapter(command: &str, adapter: &str) -> bool {
    let words = split_words(command).unwrap_or_default();
    let mut it = words.iter();
    match it.next() {
        Some(bin) if bin.rsplit('/').next() == Some("omission-gate") => {}
        _ => return false,
    }
    let rest: Vec<&String> = it.collect();
    rest.windows(2)
        .any(|w| matches!(w, [a, b] if a.as_str() == "hook" && b.as_str() == adapter))
}

/// Whether a command ends in `|| exit 2`.
pub fn exits_2_on_failure(command: &str) -> bool {
    let compact: String = command.split_whitespace().collect::<Vec<_>>().join(" ");
    compact.ends_with("|| exit 2")
}

/// A word for a POSIX shell: as it is when it needs no quoting, else in single quotes.
pub fn sh_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,@%=".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Splits a shell command into words, undoing quotes and backslashes; stops at the
/// first operator (`|`, `;`, `&`, `<`, `>`) outside quotes. Variables are left as
/// written, marked by their `$`. `None` when the quoting does not close.
pub fn split_words(command: &str) -> Option<Vec<String>> {
    split(command, None)
}

/// [`split_words`], with `$NAME` and `${NAME}` replaced by the value `var` gives where the
/// shell would expand them: outside quotes and in double quotes, not in single quotes or
/// after a backslash. A word that starts with an unquoted `~` followed by an unquoted `/`
/// or by its end starts instead with `var("HOME")`, as `sh`, `dash` and `bash` all
/// expand it; with `HOME` unset (where the shells differ: `bash` reads the password
/// database) the `~` stays, and so does every other tilde prefix (`~user`, `~+`, a `~`
/// before a quote or a backslash), which the caller cannot resolve without guessing.
pub fn split_expanded(command: &str, var: impl Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    split(command, Some(&var))
}

/// A variable's value by its name.
type Vars<'a> = &'a dyn Fn(&str) -> Option<String>;

fn split(command: &str, var: Option<Vars<'_>>) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut rest = command;
    // Appends the variable at the start of `after` (just past a `$`) to `word`, and
    // gives what follows it; a `$` that starts no name is itself.
    let variable = |word: &mut String, after: &'_ str| -> usize {
        match (var, variable_at(after)) {
            (Some(var), Some((name, len))) => {
                word.push_str(&var(name).unwrap_or_default());
                len
            }
            _ => {
                word.push('$');
                0
            }
        }
    };
    while let Some(c) = rest.chars().next() {
        rest = rest.get(c.len_utf8()..).unwrap_or("");
        match c {
            '\'' => {
                in_word = true;
                let end = rest.find('\'')?;
                word.push_str(rest.get(..end).unwrap_or(""));
                rest = rest.get(end + 1..).unwrap_or("");
            }
            '"' => {
                in_word = true;
                loop {
                    let c = rest.chars().next()?;
                    rest = rest.get(c.len_utf8()..).unwrap_or("");
                    match c {
                        '"' => break,
                        '\\' => {
                            // In double quotes a backslash escapes only these; before
                            // anything else it is itself.
                            let e = rest.chars().next()?;
                            if !matches!(e, '$' | '`' | '"' | '\\' | '\n') {
                                word.push('\\');
                            }
                            word.push(e);
                            rest = rest.get(e.len_utf8()..).unwrap_or("");
                        }
                        '$' => {
                            let n = variable(&mut word, rest);
                            rest = rest.get(n..).unwrap_or("");
                        }
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                let e = rest.chars().next()?;
                word.push(e);
                rest = rest.get(e.len_utf8()..).unwrap_or("");
            }
            '$' => {
                in_word = true;
                let n = variable(&mut word, rest);
                rest = rest.get(n..).unwrap_or("");
            }
            '|' | ';' | '&' | '<' | '>' => break,
            '~' if !in_word && var.is_some() && ends_tilde_prefix(rest.chars().next()) => {
                in_word = true;
                match var.and_then(|var| var("HOME")) {
                    Some(home) => word.push_str(&home),
                    None => word.push('~'),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// Whether `next`, the character after a word's leading `~`, ends the tilde prefix with
/// nothing in it (the `~` alone is the home folder): an unquoted `/`, a space, an
/// operator or the command's end.
fn ends_tilde_prefix(next: Option<char>) -> bool {
    match next {
        None => true,
        Some(c) => c == '/' || c.is_whitespace() || "|;&<>".contains(c),
    }
}

/// The variable name at the start of `after` (the text just past a `$`: `NAME` or
/// `{NAME}`) and how many bytes it takes; `None` when no name starts there.
fn variable_at(after: &str) -> Option<(&str, usize)> {
    if let Some(braced) = after.strip_prefix('{') {
        let j = braced.find('}')?;
        let name = braced.get(..j)?;
        return (!name.is_empty()).then_some((name, j + 2));
    }
    let n = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let name = after.get(..n)?;
    (!name.is_empty()).then_some((name, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::Harness;
    use crate::wiring::Wiring;

    #[test]
    fn quoting_round_trips_through_split_words() {
        for s in ["/usr/bin/omission-gate", "/tmp/a b/it's", "", "$HOME"] {
            assert_eq!(split_words(&sh_quote(s)).unwrap(), [s]);
        }
        let w = Wiring::of(Harness::ClaudeCode);
        let cmd = w.command(
            "/opt/my tools/omission-gate",
            &w.store_arg("/p", ".og/s.json"),
        );
        assert_eq!(
            cmd,
            "'/opt/my tools/omission-gate' hook claude-code --store \"$CLAUDE_PROJECT_DIR\"/.og/s.json --kept-from transcript --timeout-ms 10000 || exit 2"
        );
        assert!(runs_adapter(&cmd, "claude-code") && !runs_adapter(&cmd, "codex"));
        let words = split_words(&cmd).unwrap();
        assert_eq!(words[4], "$CLAUDE_PROJECT_DIR/.og/s.json");
        let var = |n: &str| (n == "CLAUDE_PROJECT_DIR").then(|| "/p".to_string());
        assert_eq!(split_expanded(&cmd, var).unwrap()[4], "/p/.og/s.json");
        assert!(exits_2_on_failure(&cmd));
        let codex = Wiring::of(Harness::Codex);
        assert_eq!(codex.store_arg("/p q", "s.json"), "'/p q/s.json'");
        let gemini = Wiring::of(Harness::GeminiCli);
        assert_eq!(
            gemini.store_arg("/p", "s.json"),
            "$GEMINI_PROJECT_DIR/s.json"
        );
    }

    #[test]
    fn variables_are_expanded_where_the_shell_expands_them() {
        let var = |n: &str| (n == "D").then(|| "/x".to_string());
        let words = |c: &str| split_expanded(c, var).unwrap();
        // Both spellings, an unset one, a `$` that starts no name.
        assert_eq!(words("$D/a${D}b$NOPE.c$"), ["/x/a/xb.c$"]);
        assert_eq!(words("\"$D/a b\" c"), ["/x/a b", "c"]);
        // Not in single quotes, not after a backslash, not in `${` left open.
        assert_eq!(
            words("'$D/a' \\$D \"\\$D\" ${D"),
            ["$D/a", "$D", "$D", "${D"]
        );
        assert_eq!(words("a'$D'\"$D\"$D"), ["a$D/x/x"]);
        // In double quotes a backslash before anything but `$`, a backquote, `"`, `\` or
        // a line break is itself.
        assert_eq!(words(r#""a\b\$D\"\\""#), [r#"a\b$D"\"#]);
        // Without expansion, every variable stays as written.
        assert_eq!(split_words("~/x ~").unwrap(), ["~/x", "~"]);
        assert_eq!(split_words("'$D' \"$D\" $D").unwrap(), ["$D", "$D", "$D"]);
    }

    #[test]
    fn a_leading_tilde_is_the_home_folder_where_the_shell_expands_it() {
        let home = |n: &str| (n == "HOME").then(|| "/h".to_string());
        let words = |c: &str| split_expanded(c, home).unwrap();
        // As `dash`, `bash` and `bash --posix` split them (HOME=/h).
        assert_eq!(words("~ ~/x ~;"), ["/h", "/h/x", "/h"],);
        // Quoted, after a backslash, inside a word, after `=`, or a user's: as written.
        assert_eq!(
            words(r#"~"/x" ~'/x' ~\/x \~/x "~"/x a~ --store=~/x ~root/x ~+"#),
            [
                "~/x",
                "~/x",
                "~/x",
                "~/x",
                "~/x",
                "a~",
                "--store=~/x",
                "~root/x",
                "~+"
            ]
        );
        // HOME empty: nothing in its place; unset: the `~` stays (bash would look it up).
        let empty = |n: &str| (n == "HOME").then(String::new);
        assert_eq!(split_expanded("~/x", empty).unwrap(), ["/x"]);
        assert_eq!(split_expanded("~/x", |_: &str| None).unwrap(), ["~/x"]);
    }
}
