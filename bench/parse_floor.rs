//! The parse floor: the cost of merely reading a JSON Lines store once.
//!
//! Reads the file line by line into one reused buffer and lets serde_json validate
//! each non-blank line into `serde::de::IgnoredAny`, keeping nothing. Prints the
//! number of validated lines on stdout, and bytes, seconds and MB/s on stderr.
//!
//!     cargo run --release --example parse_floor -- bench/data/store_1m.jsonl
//!
//! Wired in Cargo.toml as:
//!
//!     [[example]]
//!     name = "parse_floor"
//!     path = "bench/parse_floor.rs"
//!
//! Exit 0 on success, 2 on an unreadable file or an invalid line (named by number).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::ExitCode;
use std::time::Instant;

use serde::de::IgnoredAny;

fn run(path: &str) -> Result<(u64, u64), String> {
    let input: Box<dyn Read> = if path == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).map_err(|e| format!("{path}: {e}"))?)
    };
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 12);
    let mut lines: u64 = 0;
    let mut bytes: u64 = 0;
    let mut lineno: u64 = 0;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("{path}: {e}"))?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        lineno += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        serde_json::from_slice::<IgnoredAny>(&buf).map_err(|e| format!("{path}:{lineno}: {e}"))?;
        lines += 1;
    }
    Ok((lines, bytes))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: parse_floor PATH|-");
        return ExitCode::from(2);
    };
    let start = Instant::now();
    match run(path) {
        Ok((lines, bytes)) => {
            let secs = start.elapsed().as_secs_f64();
            println!("{lines}");
            let _ = io::stdout().flush();
            eprintln!(
                "parse_floor: {lines} lines, {bytes} bytes, {secs:.3} s, {:.0} MB/s",
                bytes as f64 / 1e6 / secs.max(1e-9)
            );
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("parse_floor: {msg}");
            ExitCode::from(2)
        }
    }
}
