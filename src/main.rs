//! The `refine-loop` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    // libgit2 keeps every object it parsed in a process-wide cache (up to 256 MB): the loop reads
    // each tree and blob once or twice, so the cache only held memory (the trees of a 100,000
    // file repository: 15 MB).
    git2::opts::enable_caching(false);
    let code = refine_loop::main();
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
