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

/// The value of `--store` in a hook command, with its quoting undone (variables stay as
/// written, `$NAME` or `${NAME}`).
pub fn store_of(command: &str) -> Option<String> {
    let words = split_words(command)?;
    let i = words.iter().position(|w| w == "--store")?;
    words.get(i + 1).cloned()
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
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '|' | ';' | '&' | '<' | '>' => break,
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

/// Replaces `$NAME` and `${NAME}` in a word by the value `var` gives.
pub fn expand(word: &str, var: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let after = rest.get(i + 1..).unwrap_or("");
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(j) => (
                    braced.get(..j).unwrap_or(""),
                    braced.get(j + 1..).unwrap_or(""),
                ),
                None => ("", after),
            }
        } else {
            let n = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (after.get(..n).unwrap_or(""), after.get(n..).unwrap_or(""))
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(&var(name).unwrap_or_default());
            rest = tail;
        }
    }
    out.push_str(rest);
    out
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
        assert_eq!(store_of(&cmd).unwrap(), "$CLAUDE_PROJECT_DIR/.og/s.json");
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
    fn expand_replaces_both_spellings() {
        let var = |n: &str| (n == "D").then(|| "/x".to_string());
        assert_eq!(expand("$D/a${D}b$NOPE.c$", var), "/x/a/xb.c$");
    }
}
