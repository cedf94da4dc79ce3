//! The `omission-gate` binary: everything happens in the library's `cli` module.

fn main() -> std::process::ExitCode {
    omission_gate::cli::main()
}
