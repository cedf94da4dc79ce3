//! `validate`: load a store as `check` would, then list what may not mean what its
//! author meant. One line per finding, then a summary line; exit 0 clean, 1 warnings,
//! 2 invalid.

use super::*;

#[derive(Debug, Args)]
pub(super) struct ValidateArgs {
    /// The record store: a document or JSON Lines; `-` for stdin.
    pub(super) input: String,
    /// Kept ids: `a,b,c` inline, or `@FILE` (a JSON array or one id per line). Default:
    /// the document's `kept`; with neither, kept records are not looked at.
    #[arg(long)]
    pub(super) kept: Option<String>,
    /// The tools the agent has (names or `*` globs, or a JSON array of
    /// `{"name","input_schema"}`, inline or `@FILE`). Default: the document's `tools`;
    /// with neither, scopes are not looked at.
    #[arg(long)]
    pub(super) tools: Option<String>,
}

pub(super) fn run_validate(args: &ValidateArgs, limits: Limits, out: Output) -> Exit {
    let origin = origin_name(&args.input);
    let found = (|| {
        let reads = [
            input_read("INPUT", &args.input),
            flag_read("--kept", args.kept.as_deref()),
            flag_read("--tools", args.tools.as_deref()),
        ];
        stdin_once(reads.into_iter().flatten())?;
        let kept = args
            .kept
            .as_deref()
            .map(|v| kept_text(v, limits))
            .transpose()?;
        let request = request(&args.input, None, Retention::Given, kept.as_ref(), limits);
        // Without `--kept` or a document `kept` (a store for `--kept-from transcript`),
        // the kept records are not looked at.
        let (loaded, compaction) = input::load_all(&request)?;
        // A list that names no tool is refused, as precheck and pin refuse it.
        let tools = match args.tools.as_deref() {
            Some(v) => {
                let (o, text, _) = tools_text(v, limits)?;
                let tools = input::tools_from_flag(&o, &text)?;
                input::names_a_tool(&tools, &o, "tools")?;
                Some(tools)
            }
            None => {
                if let Some(tools) = &loaded.tools {
                    input::names_a_tool(tools, origin, "key `tools`")?;
                }
                loaded.tools.clone()
            }
        };
        let warnings =
            crate::validate::warnings(&loaded.store, compaction.as_ref(), tools.as_deref());
        Ok::<_, InputError>((loaded.totals.records, warnings))
    })();
    let (text, code) = match found {
        Err(e) => {
            // On stderr, as every command says it (and --quiet keeps it); once: on a
            // terminal a copy on stdout printed it twice.
            warn(&format!("omission-gate: invalid-input: {e}"));
            (format!("{}: invalid\n", clean(origin)), Exit::Error)
        }
        Ok((records, warnings)) => {
            let mut text = String::new();
            for w in &warnings {
                text.push_str(&format!("warning: {}: {}\n", w.place, w.message));
            }
            let plural = |n: usize, one: &str| {
                if n == 1 {
                    format!("1 {one}")
                } else {
                    format!("{n} {one}s")
                }
            };
            text.push_str(&format!(
                "{}: {}, valid",
                clean(origin),
                plural(records, "record")
            ));
            if warnings.is_empty() {
                text.push('\n');
                (text, Exit::Success)
            } else {
                text.push_str(&format!(", {}\n", plural(warnings.len(), "warning")));
                (text, Exit::Problems)
            }
        }
    };
    out.write_report(text.as_bytes(), code)
}
