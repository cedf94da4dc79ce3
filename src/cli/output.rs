//! What reaches the terminal: `--quiet`, the verdict line's colour, and the generated
//! shell completions and man page.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;

use super::*;

/// `--quiet`: nothing on stdout (the exit code is the verdict). Set once, before any
/// output; never for `hook`, whose stdout is its reply to the harness.
pub(super) static QUIET: OnceLock<bool> = OnceLock::new();

pub(super) fn quiet() -> bool {
    QUIET.get().copied().unwrap_or(false)
}

/// The bytes as stdout shows them: on a terminal (and unless `NO_COLOR` is set to
/// anything, or `TERM` is `dumb`), the `verdict   :` line in colour, green for PASS,
/// yellow for BLOCK, red for ERROR. A file or a pipe gets the bytes as they are: the
/// sealed report, byte for byte.
pub(super) fn shown(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !colour(io::stdout().is_terminal()) {
        return Cow::Borrowed(bytes);
    }
    paint(bytes)
}

/// True when output to a terminal may be coloured.
fn colour(terminal: bool) -> bool {
    terminal
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Each `verdict   :` line in its colour.
pub(super) fn paint(bytes: &[u8]) -> Cow<'_, [u8]> {
    const LABEL: &[u8] = b"verdict   : ";
    if !bytes.starts_with(LABEL)
        && !bytes
            .windows(LABEL.len() + 1)
            .any(|w| w.first() == Some(&b'\n') && w.get(1..) == Some(LABEL))
    {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let Some(rest) = line.strip_prefix(LABEL) else {
            out.extend_from_slice(line);
            continue;
        };
        let code: &[u8] = if rest.starts_with(b"PASS") {
            b"32"
        } else if rest.starts_with(b"BLOCK") {
            b"33"
        } else {
            b"1;31"
        };
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        out.extend_from_slice(b"\x1b[");
        out.extend_from_slice(code);
        out.push(b'm');
        out.extend_from_slice(body);
        out.extend_from_slice(b"\x1b[0m");
        if body.len() < line.len() {
            out.push(b'\n');
        }
    }
    Cow::Owned(out)
}

/// `completions SHELL`: the completion script, from the command-line definition.
pub(super) fn run_completions(shell: clap_complete::Shell) -> Exit {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "omission-gate", &mut out);
    write_report(&out, Exit::Success)
}

/// `man`: the man page omission-gate(1), from the command-line definition.
pub(super) fn run_man() -> Exit {
    let mut out = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut out) {
        Ok(()) => write_report(&out, Exit::Success),
        Err(e) => {
            warn(&format!(
                "omission-gate: cannot write the man page: {}",
                io_reason(&e)
            ));
            Exit::Error
        }
    }
}

/// Lets go of what a one-shot command built, without freeing it: the process ends once
/// its report is written, and freeing a large store's and report's many small
/// allocations (made on the loader's threads) would cost milliseconds for nothing. Only
/// for values built once per process.
pub(super) fn exiting_with<T>(built: T) {
    std::mem::forget(built);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_verdict_line_is_painted() {
        let report = b"action    : t {}\nverdict   : BLOCK (x) exit 1\nsha256    : ab\n";
        assert_eq!(
            paint(report).as_ref(),
            b"action    : t {}\n\x1b[33mverdict   : BLOCK (x) exit 1\x1b[0m\nsha256    : ab\n"
        );
        assert_eq!(
            paint(b"verdict   : PASS exit 0").as_ref(),
            b"\x1b[32mverdict   : PASS exit 0\x1b[0m"
        );
        assert_eq!(
            paint(b"verdict   : ERROR (invalid-input) exit 2\n").as_ref(),
            b"\x1b[1;31mverdict   : ERROR (invalid-input) exit 2\x1b[0m\n"
        );
        let json = b"{\n  \"verdict\": \"PASS\"\n}\n";
        assert!(matches!(paint(json), Cow::Borrowed(_)));
        assert!(!colour(false));
    }
}
