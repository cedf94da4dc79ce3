//! Tests of the flag parsers.

use super::*;
use crate::record::DEFAULT_MAX_INPUT_BYTES;

#[test]
fn byte_counts_parse_with_binary_suffixes() {
    assert_eq!(parse_bytes("1G"), Ok(DEFAULT_MAX_INPUT_BYTES));
    assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
    assert_eq!(parse_bytes("512k"), Ok(512 << 10));
    assert_eq!(parse_bytes("64M"), Ok(64 << 20));
    for bad in ["", "0", "G", "1T", "-1", "1.5G", "99999999999G", "1 G"] {
        assert!(parse_bytes(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_help_shows_each_limit_and_its_default() {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    cli.build();
    let help = cli
        .find_subcommand_mut("check")
        .map(|c| c.render_help().to_string())
        .unwrap_or_default();
    assert!(help.contains("--max-input-bytes <BYTES>"), "{help}");
    assert!(help.contains("[default: 1G]"), "{help}");
    assert!(help.contains("--max-predicate-depth <LEVELS>"), "{help}");
    assert!(help.contains("[default: 64]"), "{help}");
}
