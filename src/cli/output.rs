//! What reaches the terminal: `--quiet`, the verdict line's colour, and the generated
//! shell completions and man page.

use std::borrow::Cow;
use std::io::IsTerminal;

use super::*;

/// Where a command writes its report and its lines: stdout, or nowhere under `--quiet`
/// (the exit code is the verdict). Built once from the flags and handed to each command
/// that writes; `hook` writes its reply with [`emit`] itself, since `--quiet` never
/// silences a hook's stdout (its reply to the harness).
#[derive(Debug, Clone, Copy)]
pub(super) struct Output {
    /// `--quiet`: nothing on stdout.
    pub(super) quiet: bool,
}

/// True when stdout is what Rust makes of a closed stdout: before `main`, the standard
/// library opens `/dev/null` for reading and writing on a closed fd 1, so every write
/// "succeeds" and a report, the verdict's only record beside the exit code, is lost
/// without a word. A shell's `>/dev/null` opens it for writing only and is not this. A
/// caller that opens `/dev/null` for reading and writing on stdout (Python's
/// `subprocess.DEVNULL`) looks the same, and is told to pass `--quiet`. Read from
/// `/proc` on Linux; elsewhere it cannot be told, and is `false`.
pub(super) fn stdout_lost() -> bool {
    if cfg!(not(target_os = "linux")) {
        return false;
    }
    let null =
        std::fs::read_link("/proc/self/fd/1").is_ok_and(|p| p == std::path::Path::new("/dev/null"));
    // `flags:` is the file's open flags in octal; the access mode is its two low bits.
    const O_ACCMODE: u32 = 0o3;
    const O_RDWR: u32 = 0o2;
    null && std::fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| {
        info.lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
            .is_some_and(|flags| flags & O_ACCMODE == O_RDWR)
    })
}

impl Output {
    /// Writes bytes to stdout, unless quiet. A report that cannot be written is exit 2,
    /// never 0.
    pub(super) fn emit(self, bytes: &[u8]) -> Result<(), io::Error> {
        if self.quiet {
            return Ok(());
        }
        emit(bytes)
    }

    /// Writes one line to stdout, unless quiet; a stdout that cannot be written is
    /// ignored (the exit code says what happened).
    pub(super) fn say(self, line: &str) {
        if self.quiet {
            return;
        }
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    /// Writes a rendered report: its exit code, or 2 when it cannot be written.
    pub(super) fn write_report(self, bytes: &[u8], exit: Exit) -> Exit {
        match self.emit(bytes) {
            Ok(()) => exit,
            Err(e) => {
                warn(&format!(
                    "omission-gate: cannot write the report: {}",
                    io_reason(&e)
                ));
                Exit::Error
            }
        }
    }

    pub(super) fn finish(self, report: &Report, format: Format) -> Exit {
        self.write_report(&report.render(format), Exit::from(report.verdict))
    }

    pub(super) fn fail(self, mode: Mode, err: &InputError, format: Format) -> Exit {
        let message = err.to_string();
        warn(&format!("omission-gate: invalid-input: {message}"));
        let _ = self.finish(&Report::invalid_input(mode, &message), format);
        Exit::Error
    }
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
pub(super) fn run_completions(shell: clap_complete::Shell, output: Output) -> Exit {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "omission-gate", &mut out);
    output.write_report(&out, Exit::Success)
}

/// `man`: the man page omission-gate(1), from the command-line definition.
pub(super) fn run_man(output: Output) -> Exit {
    let mut out = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut out) {
        Ok(()) => output.write_report(&out, Exit::Success),
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
