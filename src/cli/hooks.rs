//! `hook`: the harness adapters' protocol on stdin and stdout.

use super::*;

/// Runs a hook adapter. The payload and the store are read and judged on a worker
/// thread so that our own deadline holds even when stdin never closes or the store is
/// slow to read; a deadline missed or a panic is a reply too (a deny, for the pre-tool
/// adapters), never the harness's fail-open crash or timeout.
pub(super) fn run_hook(args: HookArgs) -> u8 {
    let adapter = args.harness.adapter();
    let timeout_ms = args.timeout_ms;
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("hook".into())
        .spawn(move || {
            let reply = std::panic::catch_unwind(|| hook_reply(adapter, &args));
            let _ = tx.send(reply.ok());
        });
    let reply = match worker {
        Err(_) => hook::failed(adapter, &Failure::Internal),
        Ok(_) => match rx.recv_timeout(std::time::Duration::from_millis(timeout_ms)) {
            Ok(Some(reply)) => reply,
            Ok(None) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                hook::failed(adapter, &Failure::Internal)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                hook::failed(adapter, &Failure::Timeout(timeout_ms))
            }
        },
    };
    write_reply(&reply)
}

/// Reads the payload and the store, then answers.
pub(super) fn hook_reply(adapter: Adapter, args: &HookArgs) -> hook::Reply {
    let mut payload = Vec::new();
    let max = limits().max_input_bytes;
    let mut stdin = io::stdin().lock();
    if let Err(e) = (&mut stdin)
        .take(max.saturating_add(1))
        .read_to_end(&mut payload)
    {
        let err = InputError::at(
            "payload",
            "stdin",
            format!("cannot read: {}", io_reason(&e)),
        );
        return hook::failed(adapter, &Failure::Input(err));
    }
    if let Err(err) = input::check_size("payload", payload.len() as u64, limits()) {
        return hook::failed(adapter, &Failure::Input(err));
    }
    let setup = hook_setup(args);
    hook::answer(adapter, &payload, setup.as_ref())
}

pub(super) fn hook_setup(args: &HookArgs) -> Result<Setup, InputError> {
    if args.store == "-" {
        return Err(InputError::at(
            "--store",
            "`-`",
            "the store must be a file: stdin carries the hook payload",
        ));
    }
    let bytes = read_source(&args.store)?;
    let input = input::load(&args.store, &bytes, limits())?;
    let kept = args
        .kept
        .as_deref()
        .map(|v| {
            let (origin, text, from_file) = flag_text("--kept", v)?;
            input::kept_from_flag(&origin, &text, from_file)
        })
        .transpose()?;
    let tools = args
        .tools
        .as_deref()
        .map(|v| {
            let (origin, text, _) = flag_text("--tools", v)?;
            input::tools_from_flag(&origin, &text)
        })
        .transpose()?
        .map(|ts| ts.into_iter().map(|t| t.name).collect());
    Ok(Setup {
        input,
        kept_origin: if args.kept.is_some() {
            "--kept".to_string()
        } else {
            clean(&args.store).into_owned()
        },
        kept,
        retention: args.retention,
        tools,
        options: CheckOptions {
            allow_unevaluable: args.allow_unevaluable,
        },
    })
}

/// Writes a hook's reply, or its fallback when it cannot be written. When neither can
/// be written the exit code is the larger of the two: a deny still exits 2.
pub(super) fn write_reply(reply: &hook::Reply) -> u8 {
    if write_out(reply) {
        return reply.exit;
    }
    match reply.fallback.as_deref() {
        Some(f) if write_out(f) => f.exit,
        Some(f) => reply.exit.max(f.exit),
        None => reply.exit,
    }
}

pub(super) fn write_out(reply: &hook::Reply) -> bool {
    let out = reply.stdout.is_empty() || emit(&reply.stdout).is_ok();
    let err = reply.stderr.is_empty() || {
        let mut e = io::stderr().lock();
        e.write_all(&reply.stderr).and_then(|()| e.flush()).is_ok()
    };
    out && err
}
