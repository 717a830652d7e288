//! The gate's own files: the scripts a check's `run` names (`scripts/lint.sh`, `python
//! tools/check.py`), the files a runner it calls reads (`make` reads `Makefile`), the config
//! file and the folders of extra parsers and integrity entries. A delegate's change to one of
//! them changes the gate itself.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::Catalogue;

/// How a file belongs to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// A check's command names it, or it is refine-loop's own configuration.
    ByCommand,
    /// A runner a check calls reads it (`Makefile`, `package.json`).
    ByRunner,
}

/// The gate's own files, relative to the target.
#[derive(Debug, Clone, Default)]
pub struct GateFiles {
    named: BTreeSet<String>,
    /// Folders whose every file is the gate's.
    folders: Vec<String>,
    by_runner: BTreeSet<String>,
    /// Files the gate would read that need not exist yet, by pattern (a makefile's `-include
    /// $(wildcard mk/*.mk)`, a module `python -m unittest` would import from the check's folder
    /// before the standard library's): a file a change adds there is the gate's.
    patterns: Vec<(globset::GlobMatcher, Named)>,
    /// The folders Python puts first on its path for a check (the script's, or the working
    /// folder for `-m`): a module there named like one of the standard library's is the gate's.
    python_first: BTreeSet<String>,
    /// Such modules that were there already: the project's own.
    python_own: BTreeSet<String>,
}

/// One check, as far as its files go.
#[derive(Debug, Clone, Copy)]
pub struct CheckCommand<'a> {
    pub run: &'a str,
    /// Absolute.
    pub cwd: &'a Path,
}

impl GateFiles {
    /// The files of `checks` in the target at `target`, with `config_file` and the `folders` of
    /// extra definitions (absolute paths); the checks find their programs on this process's
    /// `PATH`.
    pub fn resolve(
        catalogue: &Catalogue,
        target: &Path,
        config_file: &Path,
        checks: &[CheckCommand<'_>],
        folders: &[PathBuf],
    ) -> Self {
        let path = std::env::var_os("PATH");
        Self::resolve_on(
            catalogue,
            target,
            config_file,
            checks,
            folders,
            path.as_deref(),
        )
    }

    /// [`Self::resolve`], the checks finding their programs on `search_path`.
    fn resolve_on(
        catalogue: &Catalogue,
        target: &Path,
        config_file: &Path,
        checks: &[CheckCommand<'_>],
        folders: &[PathBuf],
        search_path: Option<&std::ffi::OsStr>,
    ) -> Self {
        let target = target
            .canonicalize()
            .unwrap_or_else(|_| target.to_path_buf());
        let mut files = Self::default();
        let relative = |path: &Path| -> Option<String> {
            let path = path.canonicalize().ok()?;
            let relative = path.strip_prefix(&target).ok()?;
            Some(relative.to_string_lossy().into_owned())
        };
        files.named.extend(relative(config_file));
        files
            .folders
            .extend(folders.iter().filter_map(|f| relative(f)));
        // The folders on `PATH` inside the target (a tracked `bin/` a `.envrc` puts there): a
        // program there named like one a check runs is run in its place.
        let on_path: Vec<String> = search_path
            .map(|path| std::env::split_paths(path).collect::<Vec<_>>())
            .unwrap_or_default()
            .iter()
            .filter_map(|folder| relative(folder))
            .collect();
        for check in checks {
            let cwd = check
                .cwd
                .canonicalize()
                .unwrap_or_else(|_| check.cwd.to_path_buf());
            let folder = cwd.strip_prefix(&target).ok().map(Path::to_path_buf);
            for command in commands(check.run, 2) {
                if !command.program.is_empty() && !command.words[0].contains('/') {
                    for folder in &on_path {
                        let at = normal(&Path::new(folder).join(&command.program));
                        files.add_pattern(&globset::escape(&at), Named::ByCommand);
                    }
                }
                for word in command.run_files() {
                    let candidate = cwd.join(word);
                    if candidate.is_file()
                        && let Some(path) = relative(&candidate)
                    {
                        files.named.insert(path);
                    }
                }
                if let (Some(first), Some(folder)) = (command.python_path_first(), &folder) {
                    let first = normal(&folder.join(first));
                    for name in PYTHON_STANDARD {
                        for own in [format!("{name}.py"), (*name).to_string()] {
                            let at = normal(&Path::new(&first).join(&own));
                            if target.join(&at).symlink_metadata().is_ok() {
                                files.python_own.insert(at);
                            }
                        }
                    }
                    files.python_first.insert(first);
                }
                if let (Some(module), Some(folder)) = (command.module(), &folder) {
                    // `python -m unittest` imports `unittest` from its folder first.
                    let at = normal(&folder.join(module));
                    files.add_pattern(&format!("{at}.py"), Named::ByCommand);
                    files.add_pattern(&format!("{at}/**"), Named::ByCommand);
                }
                let Some(folder) = &folder else {
                    continue;
                };
                // `make -C sub` reads `sub/Makefile`.
                let folder = command
                    .changed_folder()
                    .map_or_else(|| folder.clone(), |sub| folder.join(sub));
                for entry in catalogue.entries() {
                    let runners = entry.runners.iter();
                    for runner in runners.filter(|r| r.command.contains(&command.program)) {
                        for file in &runner.files {
                            files.by_runner.insert(normal(&folder.join(file)));
                        }
                    }
                }
            }
        }
        files.add_loaded(&target);
        files
    }

    /// Adds the files the gate's files load in turn: what a shell script sources (`.
    /// "$(dirname "$0")/lib.sh"`), what a Makefile includes, a few levels deep.
    fn add_pattern(&mut self, pattern: &str, how: Named) {
        match globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
        {
            Ok(glob) => self.patterns.push((glob.compile_matcher(), how)),
            Err(error) => {
                tracing::debug!(%error, pattern, "not a pattern the gate's files can use")
            }
        }
    }

    fn add_loaded(&mut self, target: &Path) {
        let mut pending: Vec<(String, Named)> = (self.named.iter())
            .map(|path| (path.clone(), Named::ByCommand))
            .chain(
                self.by_runner
                    .iter()
                    .map(|path| (path.clone(), Named::ByRunner)),
            )
            .collect();
        for _ in 0..LOAD_DEPTH {
            let mut next = Vec::new();
            for (path, how) in pending {
                let (loaded, patterns) = loaded_by(target, &path);
                for pattern in patterns {
                    self.add_pattern(&pattern, how);
                }
                for loaded in loaded {
                    let set = match how {
                        Named::ByCommand => &mut self.named,
                        Named::ByRunner => &mut self.by_runner,
                    };
                    if set.insert(loaded.clone()) {
                        next.push((loaded, how));
                    }
                }
            }
            pending = next;
        }
    }

    /// Whether the file at `path` (relative to the target) is the gate's, and how.
    pub fn holds(&self, path: &str) -> Option<Named> {
        let in_folder = self.folders.iter().any(|folder| {
            folder.is_empty()
                || path
                    .strip_prefix(folder.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        let shadows = self.python_first.iter().any(|first| {
            let rest = match first.as_str() {
                "" => Some(path),
                first => path
                    .strip_prefix(first)
                    .and_then(|rest| rest.strip_prefix('/')),
            };
            rest.is_some_and(|rest| {
                let (top, below) = rest.split_once('/').unwrap_or((rest, ""));
                let name = if below.is_empty() {
                    top.strip_suffix(".py")
                } else {
                    Some(top)
                };
                let own = if below.is_empty() {
                    path.to_string()
                } else {
                    path[..path.len() - below.len() - 1].to_string()
                };
                name.is_some_and(|name| PYTHON_STANDARD.contains(&name))
                    && !self.python_own.contains(&own)
            })
        });
        let by_pattern = |how: Named| {
            (self.patterns.iter()).any(|(glob, named)| *named == how && glob.is_match(path))
        };
        if self.named.contains(path) || in_folder || shadows || by_pattern(Named::ByCommand) {
            Some(Named::ByCommand)
        } else if self.by_runner.contains(path) || by_pattern(Named::ByRunner) {
            Some(Named::ByRunner)
        } else {
            None
        }
    }
}

/// How many levels of `source` and `include` are followed.
const LOAD_DEPTH: usize = 3;

/// The largest file read for what it loads.
const MAX_LOADER_BYTES: u64 = 1 << 20;

/// The files (relative to `target`) the file at `path` loads: the scripts a shell script
/// sources or runs, the makefiles a makefile includes and the scripts its recipes run; only
/// files that exist in the target. With the patterns (relative to `target`) of those a makefile
/// includes by a wildcard, which need not exist yet.
fn loaded_by(target: &Path, path: &str) -> (Vec<String>, Vec<String>) {
    let file = target.join(path);
    let Ok(metadata) = file.metadata() else {
        return (Vec::new(), Vec::new());
    };
    if !metadata.is_file() || metadata.len() > MAX_LOADER_BYTES {
        return (Vec::new(), Vec::new());
    }
    let Ok(bytes) = std::fs::read(&file) else {
        return (Vec::new(), Vec::new());
    };
    let text = String::from_utf8_lossy(&bytes);
    let own_folder = file.parent().unwrap_or(target).to_path_buf();
    let name = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let makefile = name.ends_with(".mk") || name.to_ascii_lowercase().ends_with("makefile");
    let shell = [".sh", ".bash", ".zsh", ".ksh", ".bats"]
        .iter()
        .any(|extension| name.ends_with(extension))
        || text
            .lines()
            .next()
            .is_some_and(|first| first.starts_with("#!") && first.contains("sh"));
    let mut words = Vec::new();
    let mut patterns = Vec::new();
    let folder_of_file = Path::new(path).parent().map(normal).unwrap_or_default();
    let runs = |line: &str, words: &mut Vec<String>| {
        for command in commands(line, 0) {
            if command.program == "source" || command.program == "." {
                words.extend(command.words.get(1).cloned());
            } else {
                words.extend(command.run_files().into_iter().map(str::to_string));
            }
        }
    };
    for raw in text.lines() {
        let line = raw.trim_start();
        if makefile {
            if let Some(rest) = ["include ", "-include ", "sinclude "]
                .iter()
                .find_map(|keyword| line.strip_prefix(keyword))
            {
                for word in included(rest) {
                    if word.contains(['*', '?', '[']) {
                        patterns.push(normal(&Path::new(&folder_of_file).join(&word)));
                    } else {
                        words.push(word);
                    }
                }
            } else if raw.starts_with('\t') {
                // A recipe: a shell command line (its leading `@`, `-`, `+` aside).
                runs(line.trim_start_matches(['@', '-', '+']), &mut words);
            }
        } else if shell && !line.starts_with('#') {
            runs(line, &mut words);
        }
    }
    if shell {
        for pattern in sourced_in_a_loop(&text) {
            // `"$(dirname "$0")/lint.d/*.sh"`: the rest after the last expansion, from the
            // script's folder; a plain pattern, from the target's root and the script's folder.
            match pattern.rfind(['$', ')', '}']) {
                Some(at) => {
                    if let Some(slash) = pattern[at..].find('/') {
                        let rest = &pattern[at + slash + 1..];
                        patterns.push(normal(&Path::new(&folder_of_file).join(rest)));
                    }
                }
                None => {
                    patterns.push(normal(Path::new(&pattern)));
                    patterns.push(normal(&Path::new(&folder_of_file).join(&pattern)));
                }
            }
        }
    }
    let target_root = target
        .canonicalize()
        .unwrap_or_else(|_| target.to_path_buf());
    let mut found = Vec::new();
    for word in words {
        // `"$(dirname "$0")/lib.sh"`, `"${BASH_SOURCE%/*}/lib.sh"`, `$ROOT/lib.sh`: the rest
        // after the last expansion, from the script's folder, then from the target's root.
        let (rest, bases) = match word.rfind(['$', ')', '}']) {
            Some(at) => match word[at..].find('/') {
                Some(slash) => (
                    &word[at + slash + 1..],
                    vec![own_folder.clone(), target.to_path_buf()],
                ),
                None => continue,
            },
            None => (
                word.as_str(),
                vec![target.to_path_buf(), own_folder.clone()],
            ),
        };
        if rest.is_empty() || rest.contains(['$', '*', '?', '`']) {
            continue;
        }
        let candidate = bases
            .iter()
            .map(|base| base.join(rest))
            .find(|candidate| candidate.is_file());
        let relative = candidate
            .and_then(|candidate| candidate.canonicalize().ok())
            .and_then(|candidate| {
                (candidate.strip_prefix(&target_root).ok())
                    .map(|relative| relative.to_string_lossy().into_owned())
            });
        found.extend(relative);
    }
    (found, patterns)
}

/// The patterns a shell script sources file by file in a loop (`for f in lint.d/*.sh; do .
/// "$f"; done`): the `for` words with a wildcard whose variable a `.` or `source` is given.
fn sourced_in_a_loop(text: &str) -> Vec<String> {
    static LOOP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\bfor[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+in[ \t]+([^;\n]*)")
            .expect("a fixed pattern compiles (a test runs it)")
    });
    let mut patterns = Vec::new();
    for found in LOOP.captures_iter(text) {
        let variable = regex::escape(&found[1]);
        let sourced = regex::Regex::new(&format!(
            r#"(?:^|[;&|(\s])(?:\.|source)[ \t]+"?\$\{{?{variable}\}}?"?"#
        ));
        if !sourced.is_ok_and(|sourced| sourced.is_match(text)) {
            continue;
        }
        patterns.extend(
            found[2]
                .split_whitespace()
                .map(|word| word.replace(['"', '\''], ""))
                .filter(|word| word.contains(['*', '?', '['])),
        );
    }
    patterns
}

/// The words of a makefile's `include` line, with `$(wildcard …)` opened to its patterns.
fn included(rest: &str) -> Vec<String> {
    let rest = rest.replace("$(wildcard ", " ").replace("${wildcard ", " ");
    rest.split_whitespace()
        .map(|word| word.trim_end_matches([')', '}']).to_string())
        .filter(|word| !word.is_empty())
        .collect()
}

/// The standard library's top-level modules (Python 3.11's `sys.stdlib_module_names`, less the
/// private ones), and the two it imports at start-up from the path: a file or package of one of
/// these names in the folder Python puts first on its path is imported in place of the
/// standard library's, by the tool or by what it imports.
const PYTHON_STANDARD: &[&str] = &[
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "sitecustomize",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "usercustomize",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// Words that run the command after them (`env`, `uv run`, `xargs -0`).
const WRAPPERS: &[&str] = &[
    "env", "time", "nice", "nohup", "exec", "command", "xargs", "timeout", "npx", "pnpx", "bunx",
    "pipx", "uv", "uvx", "poetry", "pdm", "hatch", "run", "stdbuf", "sudo",
];

/// Options whose value is a tool's configuration file (`--config=ruff-ci.toml`, `-c x.yml`).
const CONFIG_OPTIONS: &[&str] = &[
    "-c",
    "-p",
    "--config",
    "--config-file",
    "--configfile",
    "--rcfile",
    "--settings",
    "--settings-path",
    "--rules",
    "--ruleset",
    "--project",
    "--ignore-path",
    "--ignore-file",
    "--exclude-from",
    "--baseline",
    "--resolve-plugins-relative-to",
];

/// A program that runs a file it is given, and how it reads its options.
#[derive(Debug, Clone, Copy)]
struct Interpreter {
    /// Options after which it runs no file (a command given inline, a module).
    inline: &'static [&'static str],
    /// Options that take the next word as their value.
    valued: &'static [&'static str],
    /// A subcommand before the file (`deno run x.ts`).
    subcommand: Option<&'static str>,
}

impl Interpreter {
    fn of(program: &str) -> Option<Self> {
        let (inline, valued, subcommand): (&[&str], &[&str], _) = match program {
            "sh" | "bash" | "dash" | "zsh" | "ksh" => (&["-c"], &["-o", "-O", "+o", "+O"], None),
            "source" | "." => (&[], &[], None),
            p if p == "python" || p.starts_with("python3") || p == "python2" => {
                (&["-c", "-m"], &["-W", "-X"], None)
            }
            "node" => (
                &["-e", "--eval", "-p", "--print"],
                &[
                    "-r",
                    "--require",
                    "--import",
                    "--loader",
                    "--experimental-loader",
                    "-C",
                    "--conditions",
                ],
                None,
            ),
            "deno" | "bun" => (&["-e", "--eval"], &[], Some("run")),
            "ruby" | "perl" => (&["-e", "-E"], &["-I", "-r"], None),
            "php" => (&["-r"], &["-d", "-c"], None),
            "pwsh" => (&["-Command", "-c"], &[], None),
            "Rscript" | "tclsh" => (&["-e"], &[], None),
            _ => return None,
        };
        Some(Self {
            inline,
            valued,
            subcommand,
        })
    }

    /// The script among `arguments`: the first word that is not an option or its value.
    fn script(self, arguments: &[String]) -> Option<&str> {
        let mut words = arguments.iter().peekable();
        if let Some(subcommand) = self.subcommand
            && words.peek().is_some_and(|word| *word == subcommand)
        {
            words.next();
        }
        while let Some(word) = words.next() {
            if self.inline.contains(&word.as_str()) {
                return None;
            }
            if self.valued.contains(&word.as_str()) {
                words.next();
                continue;
            }
            if !word.starts_with('-') && !word.starts_with('+') {
                return Some(word);
            }
        }
        None
    }
}

/// One simple command of a check's `run`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SimpleCommand {
    /// Its program's file name (`make` of `/usr/bin/make`).
    program: String,
    /// As written: the program, then its arguments.
    words: Vec<String>,
}

impl SimpleCommand {
    /// The folder (relative to the command's) Python puts first on its path: the script's for
    /// `python x/y.py`, the working folder for `-m` and `-c`; `None` for another program.
    fn python_path_first(&self) -> Option<PathBuf> {
        let interpreter = Interpreter::of(&self.program).filter(|i| i.inline.contains(&"-m"))?;
        match interpreter.script(&self.words[1..]) {
            Some(script) => Some(
                Path::new(script)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            ),
            None => self.words[1..]
                .iter()
                .any(|word| word == "-m" || word == "-c")
                .then(PathBuf::new),
        }
    }

    /// The module a Python interpreter is told to run (`python -m unittest`), as its first
    /// name (`pkg` of `pkg.cli`).
    fn module(&self) -> Option<&str> {
        let python = Interpreter::of(&self.program).is_some_and(|i| i.inline.contains(&"-m"));
        if !python {
            return None;
        }
        let at = self.words.iter().position(|word| word == "-m")?;
        let module = self.words.get(at + 1)?;
        module.split('.').next().filter(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
    }

    /// The folder a runner is told to work in (`make -C sub`, `just --working-directory sub`).
    fn changed_folder(&self) -> Option<&str> {
        let mut words = self.words[1..].iter();
        while let Some(word) = words.next() {
            if word == "-C" || word == "--directory" || word == "--working-directory" {
                return words.next().map(String::as_str);
            }
            if let Some(folder) = word.strip_prefix("--directory=") {
                return Some(folder);
            }
        }
        None
    }

    /// The files it runs or reads its rules from: the program itself when it is a path, the
    /// script an interpreter is given, the values of configuration options.
    fn run_files(&self) -> Vec<&str> {
        let mut files = Vec::new();
        let Some(first) = self.words.first() else {
            return files;
        };
        if first.contains('/') {
            files.push(first.as_str());
        }
        if let Some(interpreter) = Interpreter::of(&self.program) {
            files.extend(interpreter.script(&self.words[1..]));
            return files;
        }
        let mut words = self.words[1..].iter();
        let make = ["make", "gmake"].contains(&self.program.as_str());
        while let Some(word) = words.next() {
            if make && (word == "-f" || word == "--file" || word == "--makefile") {
                files.extend(words.next().map(String::as_str));
                continue;
            }
            match word.split_once('=') {
                Some((option, value)) if CONFIG_OPTIONS.contains(&option) => files.push(value),
                _ if CONFIG_OPTIONS.contains(&word.as_str()) => {
                    if let Some(value) = words.next() {
                        files.push(value);
                    }
                }
                _ => {}
            }
        }
        files
    }
}

/// The simple commands of a shell command line, as sh splits it into words and at `&&`, `||`,
/// `;`, `|`; a word that holds a command of its own (`sh -c '…'`) is split too, `depth` times.
/// Variable assignments and wrappers (`env`, `uv run`, `xargs -0`) before a program are passed
/// over.
fn commands(line: &str, depth: u32) -> Vec<SimpleCommand> {
    let split =
        shlex::split(line).unwrap_or_else(|| line.split_whitespace().map(str::to_string).collect());
    let mut found = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let finish = |current: &mut Vec<String>, found: &mut Vec<SimpleCommand>| {
        let words = std::mem::take(current);
        // The program: the first word that is not an assignment (`FOO=1`), a wrapper, one of
        // its options or a number (`timeout 60`).
        let assignment = |word: &str| word.contains('=') && !word.contains('/');
        let start = words.iter().position(|word| {
            !(assignment(word)
                || WRAPPERS.contains(&word.as_str())
                || word.starts_with('-')
                || word.parse::<f64>().is_ok())
        });
        if let Some(start) = start {
            let words = words[start..].to_vec();
            let program = Path::new(&words[0])
                .file_name()
                .map_or_else(|| words[0].clone(), |n| n.to_string_lossy().into_owned());
            found.push(SimpleCommand { program, words });
        }
    };
    for word in split {
        let ends_command = word.len() > 1 && word.ends_with(';');
        let word = if ends_command {
            &word[..word.len() - 1]
        } else {
            word.as_str()
        };
        // `!` negates a command where one starts; elsewhere it is an argument (`test ! -s x`).
        let negation = word == "!" && current.is_empty();
        if negation || ["&&", "||", ";", "|", "&", "(", ")", "{", "}"].contains(&word) {
            finish(&mut current, &mut found);
            continue;
        }
        if depth > 0 && word.contains(char::is_whitespace) {
            found.extend(commands(word, depth - 1));
        } else {
            current.push(word.to_string());
        }
        if ends_command {
            finish(&mut current, &mut found);
        }
    }
    finish(&mut current, &mut found);
    found
}

/// `path` without `.` and with `..` taken back, `/`-separated.
fn normal(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    impl GateFiles {
        /// The gate's files are `paths`, each named by a command.
        pub fn of_paths(paths: &[String]) -> Self {
            Self {
                named: paths.iter().cloned().collect(),
                ..Self::default()
            }
        }
    }

    #[test]
    fn the_files_a_command_runs_or_reads_its_rules_from() {
        let table: [(&str, &[&str]); 16] = [
            ("scripts/lint.sh --fast", &["scripts/lint.sh"]),
            ("./gate", &["./gate"]),
            ("sh -c 'bash ci/check.sh && make lint'", &["ci/check.sh"]),
            (
                "FOO=1 uv run python tools/check.py src",
                &["tools/check.py"],
            ),
            ("python3 -m pytest -q tests/test_a.py", &[]),
            (
                "ruff check --config=ruff-ci.toml src/app.py",
                &["ruff-ci.toml"],
            ),
            (
                "eslint -c ci.eslintrc.js . | tee out.txt",
                &["ci.eslintrc.js"],
            ),
            ("cat findings.txt; test ! -s src/findings.txt", &[]),
            ("! grep -q FIXME src/m000/*.rs", &[]),
            (
                "git ls-files -z -- '*.sh' | xargs -0 -r shellcheck -f gcc",
                &[],
            ),
            ("shellcheck scripts/deploy.sh", &[]),
            ("bash -e -o pipefail ci/check.sh", &["ci/check.sh"]),
            ("python -W error tools/check.py", &["tools/check.py"]),
            (
                "node -r ts-node/register scripts/lint.ts",
                &["scripts/lint.ts"],
            ),
            (
                "deno run --allow-read scripts/gate.ts",
                &["scripts/gate.ts"],
            ),
            ("make -f ci.mk lint", &["ci.mk"]),
        ];
        for (line, expected) in table {
            let files: Vec<String> = commands(line, 2)
                .iter()
                .flat_map(|c| c.run_files().into_iter().map(str::to_string))
                .collect();
            assert_eq!(files, expected, "{line}");
        }
        let programs: Vec<String> =
            commands("cd sub && FOO=1 make -j4 lint; xargs -0 -r shellcheck", 1)
                .into_iter()
                .map(|c| c.program)
                .collect();
        assert_eq!(programs, ["cd", "make", "shellcheck"]);
    }

    #[test]
    fn files_a_check_names_and_a_runner_reads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "scripts/lint.sh",
            "Makefile",
            "refine-loop.toml",
            "sub/tool.py",
        ] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), "x").unwrap();
        }
        let catalogue = Catalogue::built_in().unwrap();
        let checks = [
            CheckCommand {
                run: "bash scripts/lint.sh && make test && make -C docs check && cat refine-loop.toml",
                cwd: root,
            },
            CheckCommand {
                run: "python tool.py --strict",
                cwd: &root.join("sub"),
            },
        ];
        let files = GateFiles::resolve(
            &catalogue,
            root,
            &root.join("refine-loop.toml"),
            &checks,
            &[root.join("parsers")],
        );
        let table = [
            ("scripts/lint.sh", Some(Named::ByCommand)),
            ("refine-loop.toml", Some(Named::ByCommand)),
            ("sub/tool.py", Some(Named::ByCommand)),
            ("Makefile", Some(Named::ByRunner)),
            ("GNUmakefile", Some(Named::ByRunner)),
            ("docs/Makefile", Some(Named::ByRunner)),
            ("src/app.py", None),
            ("scripts/lint.sh.bak", None),
        ];
        for (path, expected) in table {
            assert_eq!(files.holds(path), expected, "{path}");
        }
    }

    #[test]
    fn files_the_gate_files_source_or_include() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            (
                "scripts/lint.sh",
                "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\nsource scripts/env.sh\n\
                 [ -f x ] && . \"${BASH_SOURCE%/*}/more.sh\"\n. \"$HOME/.profile\"\n",
            ),
            ("scripts/lib.sh", "#!/bin/sh\n. ./scripts/deep.sh\n"),
            ("scripts/env.sh", "export A=1\n"),
            ("scripts/more.sh", ""),
            ("scripts/deep.sh", ""),
            ("scripts/unsourced.sh", ""),
            ("tools/check.py", "import os\nprint('done. ok')\n"),
            (
                "Makefile",
                "include common.mk\n-include local.mk\n-include $(wildcard mk/*.mk)\n\
                 lint:\n\t@sh scripts/recipe.sh\n",
            ),
            ("common.mk", ""),
            ("scripts/recipe.sh", ""),
            (
                "scripts/run.sh",
                "#!/bin/sh\nsh scripts/impl.sh \"$@\"\nbash \"$(dirname \"$0\")/impl2.sh\"\n\
                 ./scripts/impl3.sh && python3 tools/impl.py\n# sh scripts/commented.sh\n",
            ),
            ("scripts/impl.sh", ""),
            ("scripts/impl2.sh", ""),
            ("scripts/impl3.sh", ""),
            ("scripts/commented.sh", ""),
            ("tools/impl.py", ""),
            (
                "types.py",
                "# the project's own module named like the standard library's\n",
            ),
            (
                "scripts/plugins.sh",
                "HERE=$(dirname \"$0\")\nfor f in \"$HERE\"/lint.d/*.sh; do . \"$f\"; done\n\
                 for g in checks/*.sh; do\n  source \"${g}\"\ndone\nfor t in tests/*.sh; do sh \"$t\"; done\n",
            ),
        ];
        for (file, text) in files {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), text).unwrap();
        }
        let checks = [
            CheckCommand {
                run: "scripts/lint.sh && python tools/check.py && make lint",
                cwd: root,
            },
            CheckCommand {
                run: "sh scripts/run.sh && python3 -m unittest discover -s tests",
                cwd: root,
            },
            CheckCommand {
                run: "python3 -W error tests/run.py --verbose",
                cwd: root,
            },
            CheckCommand {
                run: "sh scripts/plugins.sh",
                cwd: root,
            },
        ];
        let catalogue = Catalogue::built_in().unwrap();
        // `bin/` is on the checks' PATH (a `.envrc` puts it there).
        std::fs::create_dir_all(root.join("bin")).unwrap();
        let path = std::ffi::OsString::from(format!("{}:/usr/bin", root.join("bin").display()));
        let files = GateFiles::resolve_on(
            &catalogue,
            root,
            &root.join("x.toml"),
            &checks,
            &[],
            Some(&path),
        );
        let table = [
            ("scripts/lib.sh", Some(Named::ByCommand)),
            ("scripts/env.sh", Some(Named::ByCommand)),
            ("scripts/more.sh", Some(Named::ByCommand)),
            ("scripts/deep.sh", Some(Named::ByCommand)),
            ("common.mk", Some(Named::ByRunner)),
            ("local.mk", None),
            ("scripts/unsourced.sh", None),
            // Run, not sourced: a script a gate script or a recipe runs is the gate's too.
            ("scripts/recipe.sh", Some(Named::ByRunner)),
            ("scripts/impl.sh", Some(Named::ByCommand)),
            ("scripts/impl2.sh", Some(Named::ByCommand)),
            ("scripts/impl3.sh", Some(Named::ByCommand)),
            ("tools/impl.py", Some(Named::ByCommand)),
            ("scripts/commented.sh", None),
            // What a makefile includes by a wildcard, or Python imports for `-m` from the
            // check's folder before its own, though it does not exist yet.
            ("mk/zz-local.mk", Some(Named::ByRunner)),
            ("mk/sub/deep.mk", None),
            ("unittest/__main__.py", Some(Named::ByCommand)),
            ("unittest.py", Some(Named::ByCommand)),
            // Or a module the standard library's would be imported from there in place of (by
            // the tool, or by what it imports): in the folder Python puts first on its path.
            ("difflib.py", Some(Named::ByCommand)),
            ("pprint/__init__.py", Some(Named::ByCommand)),
            ("sitecustomize.py", Some(Named::ByCommand)),
            ("tests/difflib.py", Some(Named::ByCommand)),
            ("tests/unittest/__init__.py", Some(Named::ByCommand)),
            ("types.py", None),
            ("src/difflib.py", None),
            ("tests/helpers.py", None),
            // What a script sources file by file in a loop, one a change adds too; not what it
            // runs in one (the tests).
            ("scripts/lint.d/00-first.sh", Some(Named::ByCommand)),
            // A program on the checks' PATH in the tree, named like one a check runs.
            ("bin/python3", Some(Named::ByCommand)),
            ("bin/make", Some(Named::ByCommand)),
            ("bin/helper", None),
            ("checks/more.sh", Some(Named::ByCommand)),
            ("tests/test_new.sh", None),
        ];
        for (path, expected) in table {
            assert_eq!(files.holds(path), expected, "{path}");
        }
    }
}
