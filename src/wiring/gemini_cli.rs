//! Gemini CLI's folder trust and command expansion.
//!
//! Gemini CLI reads workspace settings only from the directory it starts in, and in a
//! folder it does not trust it registers no hooks at all (user-level ones included) and
//! a headless run exits 55. Trust comes from `~/.gemini/trustedFolders.json`: the rule
//! with the longest path that contains the folder wins (`TRUST_PARENT` stands for its
//! path's parent). Before running a hook it replaces `$GEMINI_PROJECT_DIR` (and
//! `$GEMINI_CWD`, `$CLAUDE_PROJECT_DIR`) in the command text with the shell-quoted
//! project directory.

use serde_json::Value;

/// Whether the trusted-folders rules trust `dir` (an absolute, resolved path): `Some`
/// when a rule decides, `None` when none applies (the folder is then untrusted).
pub fn folder_trusted(rules: &Value, dir: &str) -> Option<bool> {
    let Value::Object(rules) = rules else {
        return None;
    };
    let mut best: Option<(usize, &str)> = None;
    for (path, level) in rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let effective = if level == "TRUST_PARENT" {
            parent(path)
        } else {
            path.trim_end_matches('/')
        };
        if within(effective, dir) && best.is_none_or(|(len, _)| path.len() > len) {
            best = Some((path.len(), level));
        }
    }
    match best?.1 {
        "TRUST_FOLDER" | "TRUST_PARENT" => Some(true),
        "DO_NOT_TRUST" => Some(false),
        _ => None,
    }
}

fn parent(path: &str) -> &str {
    let p = path.trim_end_matches('/');
    match p.rfind('/') {
        Some(0) => "/",
        Some(i) => p.get(..i).unwrap_or(p),
        None => p,
    }
}

/// Whether `dir` is `root` or inside it.
fn within(root: &str, dir: &str) -> bool {
    let root = root.trim_end_matches('/');
    dir == root || root.is_empty() || dir.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
}

/// The command as Gemini CLI runs it: the project-directory variables replaced in the
/// text by the quoted directory (`shell-quote`'s quoting: bare when safe, else single
/// quotes).
pub fn expand_command(command: &str, project: &str) -> String {
    let quoted = shell_quote(project);
    let mut out = command.to_string();
    // Gemini CLI's patterns have no word boundary: `$GEMINI_PROJECT_DIRX` is replaced
    // too, and so it is here.
    for var in ["$GEMINI_PROJECT_DIR", "$GEMINI_CWD", "$CLAUDE_PROJECT_DIR"] {
        out = out.replace(var, &quoted);
    }
    out
}

/// `shell-quote`'s `quote([arg])`, which Gemini CLI uses for bash.
fn shell_quote(arg: &str) -> String {
    if arg.is_empty() {
        return "''".to_string();
    }
    let plain = arg
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,@%=".contains(&b));
    if plain {
        arg.to_string()
    } else if !arg.contains('\'') {
        format!("'{arg}'")
    } else {
        let mut out = String::from('"');
        for c in arg.chars() {
            if matches!(c, '"' | '\\' | '$' | '`' | '!') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_longest_rule_wins() {
        let rules = json!({"/home/u": "TRUST_FOLDER", "/home/u/secret": "DO_NOT_TRUST",
                           "/srv/p/child": "TRUST_PARENT"});
        assert_eq!(folder_trusted(&rules, "/home/u/proj"), Some(true));
        assert_eq!(folder_trusted(&rules, "/home/u/secret/x"), Some(false));
        assert_eq!(folder_trusted(&rules, "/home/user2"), None);
        assert_eq!(folder_trusted(&rules, "/srv/p/other"), Some(true));
        assert_eq!(folder_trusted(&rules, "/srv"), None);
    }

    #[test]
    fn the_project_variable_becomes_the_quoted_directory() {
        assert_eq!(
            expand_command("og --store $GEMINI_PROJECT_DIR/s.json", "/a b"),
            "og --store '/a b'/s.json"
        );
        assert_eq!(expand_command("x $GEMINI_PROJECT_DIR", "/p"), "x /p");
    }
}
