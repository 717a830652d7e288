//! The `refine-loop` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    let code = refine_loop::app::main();
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
