//! The lean loader's loads for each command (see [`crate::input::load_lean_from`]): the
//! CLI hands it the input's path (or stdin's bytes) and the flags as read.

use super::*;

/// Lets go of what a one-shot command built, without freeing it: the process ends once
/// its report is written, and freeing a large store's and report's many small
/// allocations (made on the loader's threads) would cost milliseconds for nothing. Only
/// for values built once per process.
pub(super) fn exiting_with<T>(built: T) {
    std::mem::forget(built);
}

/// A load by the lean loader for precheck or pin (`purpose` given the `--tools` flag's
/// tools, if any), when it can decide. `None` sends the caller to the exact path.
pub(super) fn lean_load(
    path: &str,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    tools_flag: Option<&Result<FlagText, InputError>>,
    purpose: fn(Option<Vec<Tool>>) -> Purpose,
) -> Option<input::LeanFor> {
    lean_load_then(path, stdin, kept, tools_flag, purpose, Ok)
}

/// [`lean_load`], handing the load to `then` while the loader's last checks run (see
/// [`input::load_lean_with`]).
pub(super) fn lean_load_then<R>(
    path: &str,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    tools_flag: Option<&Result<FlagText, InputError>>,
    purpose: fn(Option<Vec<Tool>>) -> Purpose,
    then: impl FnOnce(input::LeanFor) -> Result<R, Fallback>,
) -> Option<R> {
    let tools = match tools_flag {
        Some(Ok((o, text, _))) => Some(input::tools_from_flag(o, text).ok()?),
        Some(Err(_)) => return None,
        None => None,
    };
    input::load_lean_from(
        origin_name(path),
        path,
        stdin,
        kept.map(|(_, text, from_file)| (text.as_str(), *from_file)),
        purpose(tools),
        limits(),
        then,
    )
    .ok()
}
