//! The `omission-gate` binary: everything happens in the library (`run_cli`).

fn main() -> std::process::ExitCode {
    omission_gate::run_cli()
}
