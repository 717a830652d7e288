//! The project's own command lines for a tool: where its package scripts, task runners or CI
//! run it, the options and paths they give it, so that the gate reads what the project's own
//! job reads (`ruff check mkdocs docs`, not `ruff check .`).

use super::detect::Project;

/// A tool as `init` looks for it in the project's command lines.
#[derive(Debug, Clone, Copy)]
pub struct Tool<'a> {
    /// The names it is run by (`markdownlint`, `markdownlint-cli`).
    pub names: &'a [&'a str],
    /// Its subcommand, when the check is one (`ruff check`).
    pub sub: Option<&'a str>,
    /// Options left out: modes init sets itself, fix modes, output formats, an exit-zero.
    /// `--x` also drops `--x=value`.
    pub dropped: &'a [&'a str],
    /// Of those, the ones whose value is the next word (`--output-format github`).
    pub valued: &'a [&'a str],
}

impl Tool<'_> {
    /// A tool known by one name, with no subcommand.
    pub const fn named<'a>(names: &'a [&'a str], dropped: &'a [&'a str]) -> Tool<'a> {
        Tool {
            names,
            sub: None,
            dropped,
            valued: &[],
        }
    }
}

/// What the project's own command line gives a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The arguments, as the line quotes them, after the tool (and its subcommand), without
    /// those init leaves out; empty when there are none.
    pub args: String,
    /// Where the line was found (`.github/workflows/ci.yml`).
    pub source: String,
    /// It runs the tool as a Python module (`python -m pytest`).
    pub module: bool,
    /// Among the arguments is a word that is no option (a path, a module): the tool reads what
    /// they name, not its default.
    pub operands: bool,
}

/// Files of commands, in the order they are read: the scripts a project's CI calls come first,
/// since their lines are the tool's own (a CI line often runs `npm run lint`).
const RUNNERS: &[&str] = &[
    "package.json",
    "pyproject.toml",
    "tox.ini",
    "tox.toml",
    "noxfile.py",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    ".gitlab-ci.yml",
    ".circleci/config.yml",
];

/// Words that may come before a tool on its line: launchers, their options, variables.
const LAUNCHERS: &[&str] = &[
    "npx", "npm", "pnpm", "yarn", "bunx", "exec", "run", "dlx", "uv", "uvx", "poetry", "pipx",
    "pdm", "hatch", "rye", "python", "python3", "py", "-m", "env", "time", "--",
];

impl Project {
    /// The project's own invocation of `tool`: the first command line, in [`RUNNERS`] and then
    /// in the CI workflows, that runs it with arguments init can use as they are (no variable,
    /// redirection or placeholder, not `--version`).
    pub fn invocation(&self, tool: Tool<'_>) -> Option<Invocation> {
        self.invocations(tool).next()
    }

    /// Every such invocation, in the same order.
    pub fn invocations<'s>(&'s self, tool: Tool<'s>) -> impl Iterator<Item = Invocation> + 's {
        self.commands()
            .filter_map(move |(source, command)| arguments(&command, tool, source))
    }

    /// The first of the project's commands that runs `tool` (with any arguments, read or not):
    /// where it is, and whether it runs it as a Python module (`python -m pytest`).
    pub fn commands_running(&self, tool: Tool<'_>) -> Option<(String, bool)> {
        self.commands().find_map(|(source, command)| {
            launch(&command, tool).map(|(_, _, module)| (source, module))
        })
    }

    /// The project's own script for `tool` that its CI or a task runner runs: a tracked file
    /// named after the tool (`shellcheck.sh`, `scripts/shellcheck`), as the command that runs
    /// it from the top (`./shellcheck.sh`), and where it is run.
    pub fn own_script(&self, tool: &str) -> Option<(String, String)> {
        let scripts: Vec<&String> = self
            .files
            .iter()
            .filter(|f| {
                let name = f.rsplit('/').next().unwrap_or(f);
                matches!(name.split_once('.'), None | Some((_, "sh" | "bash")))
                    && name.split('.').next() == Some(tool)
            })
            .collect();
        if scripts.is_empty() {
            return None;
        }
        self.commands().find_map(|(source, command)| {
            let words = shlex::split(command.trim())?;
            let program = words
                .iter()
                .find(|word| !matches!(word.as_str(), "bash" | "sh" | "-e" | "-x" | "-eu"))?;
            let path = program.trim_start_matches("./");
            scripts
                .iter()
                .find(|script| script.as_str() == path)
                .map(|script| (format!("./{}", shell_word(script)), source))
        })
    }

    /// Every command of the project's files of commands, with the file it is in: [`RUNNERS`]
    /// first, then the CI workflows.
    fn commands(&self) -> impl Iterator<Item = (String, String)> + '_ {
        let workflows = self.files.iter().filter(|f| {
            f.starts_with(".github/workflows/") && (f.ends_with(".yml") || f.ends_with(".yaml"))
        });
        RUNNERS
            .iter()
            .filter(|name| self.has(name))
            .map(|name| name.to_string())
            .chain(workflows.cloned())
            .flat_map(|source| {
                command_lines(&source, &self.read(&source))
                    .into_iter()
                    .flat_map(|line| {
                        line.split(['&', '|', ';'])
                            .map(str::to_string)
                            .collect::<Vec<_>>()
                    })
                    .map(move |command| (source.clone(), command))
            })
    }
}

/// The command lines of a file of `source`'s kind: package scripts, the script tables of
/// pyproject.toml (hatch, pdm, poe, taskipy), nox's `session.run(...)`, and the lines of the
/// rest (recipes, `run:` steps, tox `commands`), continuation lines joined.
fn command_lines(source: &str, text: &str) -> Vec<String> {
    match source {
        "package.json" => serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|manifest| {
                manifest.get("scripts")?.as_object().map(|scripts| {
                    scripts
                        .values()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
            })
            .unwrap_or_default(),
        "pyproject.toml" => pyproject_scripts(text),
        "tox.toml" => text
            .parse::<toml::Table>()
            .map(|table| tox_commands(&table))
            .unwrap_or_default(),
        "noxfile.py" => nox_runs(text),
        ".pre-commit-config.yaml" | ".pre-commit-config.yml" => {
            let mut lines = hook_commands(text);
            lines.extend(text.lines().map(command_text));
            lines
        }
        _ => {
            let mut lines = Vec::new();
            let mut pending = String::new();
            for line in text.lines() {
                let line = line.trim();
                if let Some(start) = line.strip_suffix('\\') {
                    pending.push_str(start);
                    pending.push(' ');
                    continue;
                }
                pending.push_str(line);
                lines.push(command_text(&std::mem::take(&mut pending)));
            }
            lines
        }
    }
}

/// A line of a YAML, INI or make file as the command it holds: without a list dash, a key
/// (`run:`, `- script:`, `commands =`), quotes around the whole, or make's `@`/`-` prefixes.
fn command_text(line: &str) -> String {
    let mut text = line.trim().trim_start_matches("- ").trim();
    for key in [
        "run:",
        "script:",
        "entry:",
        "command:",
        "cmd:",
        "commands =",
        "commands=",
    ] {
        if let Some(rest) = text.strip_prefix(key) {
            text = rest.trim();
        }
    }
    let text = text.trim_start_matches(['@', '-', '+']).trim();
    let quoted = |q: char| text.len() >= 2 && text.starts_with(q) && text.ends_with(q);
    if quoted('"') || quoted('\'') {
        text[1..text.len() - 1].to_string()
    } else {
        text.to_string()
    }
}

/// The scripts of pyproject.toml's task tables: hatch's `[tool.hatch.envs.*.scripts]`, and
/// pdm's, poe's and taskipy's tasks (a string, a list of them, or a table's `cmd`/`shell`).
fn pyproject_scripts(text: &str) -> Vec<String> {
    let Ok(document) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let tool = document.get("tool").and_then(toml::Value::as_table);
    let at = |path: &[&str]| {
        path.iter()
            .try_fold(tool?, |table, key| table.get(*key)?.as_table())
    };
    let mut tables: Vec<&toml::Table> = Vec::new();
    if let Some(envs) = at(&["hatch", "envs"]) {
        tables.extend(
            envs.values()
                .filter_map(|env| env.get("scripts")?.as_table()),
        );
    }
    tables.extend(
        [
            &["pdm", "scripts"][..],
            &["poe", "tasks"],
            &["taskipy", "tasks"],
        ]
        .iter()
        .filter_map(|path| at(path)),
    );
    let mut lines = tool
        .and_then(|tool| tool.get("tox")?.as_table())
        .map(tox_commands)
        .unwrap_or_default();
    for task in tables.iter().flat_map(|table| table.values()) {
        let task = match task {
            toml::Value::Table(table) => table.get("cmd").or_else(|| table.get("shell")),
            other => Some(other),
        };
        match task {
            Some(toml::Value::String(line)) => lines.push(line.clone()),
            Some(toml::Value::Array(items)) => lines.extend(
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_string)),
            ),
            _ => {}
        }
    }
    lines
}

/// tox's TOML commands (tox.toml, or pyproject.toml's `[tool.tox]`): each env's `commands`, a
/// list of commands that are lists of words.
fn tox_commands(tox: &toml::Table) -> Vec<String> {
    let envs = tox
        .get("env")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|envs| envs.values())
        .chain(tox.get("env_run_base"));
    envs.filter_map(|env| env.get("commands")?.as_array())
        .flatten()
        .filter_map(|command| {
            let words: Option<Vec<String>> = command
                .as_array()?
                .iter()
                .map(|word| word.as_str().map(shell_word))
                .collect();
            words.map(|words| words.join(" "))
        })
        .collect()
}

/// pre-commit's hooks as the commands they run: the hook's id as its tool (ruff's `ruff-check`
/// and `ruff-format` as `ruff check` and `ruff format`), with the hook's `args` (a flow list or
/// a block one). pre-commit gives the files itself: the commands name none.
fn hook_commands(text: &str) -> Vec<String> {
    // (id, entry, args)
    let mut hooks: Vec<(String, Option<String>, Vec<String>)> = Vec::new();
    let mut in_args: Option<usize> = None;
    let scalar = |item: &str| item.trim().trim_matches(['"', '\'']).to_string();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let item = line.trim().trim_start_matches("- ").trim();
        if let Some(id) = item.strip_prefix("id:") {
            hooks.push((scalar(id), None, Vec::new()));
            in_args = None;
        } else if let Some(entry) = item.strip_prefix("entry:")
            && let Some((_, at, _)) = hooks.last_mut()
        {
            *at = Some(scalar(entry));
            in_args = None;
        } else if let Some(list) = item.strip_prefix("args:") {
            let list = list.trim();
            if let Some(inner) = list.strip_prefix('[').and_then(|l| l.strip_suffix(']'))
                && let Some((_, _, args)) = hooks.last_mut()
            {
                args.extend(flow_items(inner).map(scalar).filter(|a| !a.is_empty()));
            }
            in_args = list.is_empty().then_some(indent);
        } else if let Some(at) = in_args {
            match (line.trim().strip_prefix("- "), hooks.last_mut()) {
                (Some(arg), Some((_, _, args))) if indent >= at => args.push(scalar(arg)),
                _ => in_args = None,
            }
        }
    }
    hooks
        .into_iter()
        .map(|(id, entry, args)| {
            // A local hook runs its entry; a hook of a tool's own repository, the tool.
            let tool = match (entry, id.as_str()) {
                (Some(entry), _) => entry,
                (None, "ruff" | "ruff-check") => "ruff check".to_string(),
                (None, "ruff-format") => "ruff format".to_string(),
                (None, other) => shell_word(other),
            };
            let args: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
            format!("{tool} {}", args.join(" "))
        })
        .collect()
}

/// The items of a YAML flow list's inside (`--fix, '--select=E,W'`): split at the commas no
/// quote holds.
fn flow_items(inner: &str) -> impl Iterator<Item = &str> {
    let mut quote = None;
    inner
        .split(move |c: char| {
            match (quote, c) {
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                _ => {}
            }
            c == ',' && quote.is_none()
        })
        .map(str::trim)
}

/// nox's `session.run("ruff", "check", "src")` calls as command lines (only their string
/// literals; a call with anything else is left out).
fn nox_runs(text: &str) -> Vec<String> {
    let call = regex::Regex::new(r#"session\.run\(([^)]*)\)"#).expect("a valid regex");
    call.captures_iter(text)
        .filter_map(|found| {
            let words: Option<Vec<String>> = found[1]
                .split(',')
                .map(str::trim)
                .filter(|word| !word.is_empty() && !word.contains('='))
                .map(|word| {
                    let inner = word
                        .strip_prefix('"')
                        .and_then(|w| w.strip_suffix('"'))
                        .or_else(|| word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')))?;
                    Some(shell_word(inner))
                })
                .collect();
            words.map(|words| words.join(" "))
        })
        .collect()
}

/// What `command` gives `tool` (found in `source`); `None` when it does not run the tool, or
/// gives it words init cannot use as they are.
fn arguments(command: &str, tool: Tool<'_>, source: String) -> Option<Invocation> {
    let (words, first, module) = launch(command, tool)?;
    let rest = words[first..].iter();
    let mut kept = Vec::new();
    let mut skip_value = false;
    for (word, written) in rest {
        // hatch's and tox's placeholders for the arguments a user adds.
        if matches!(word.as_str(), "{args}" | "{posargs}" | "{posargs:}")
            || std::mem::take(&mut skip_value)
        {
            continue;
        }
        let flag = word.split_once('=').map_or(word.as_str(), |(flag, _)| flag);
        if tool.dropped.contains(&flag) {
            skip_value = !word.contains('=') && tool.valued.contains(&flag);
            continue;
        }
        if word.contains(['$', '>', '<', '`', '{', '}']) {
            return None;
        }
        kept.push((word.as_str(), *written));
    }
    // A run that asks for the tool's version or help checks nothing.
    let asks = |word: &str| matches!(word, "--version" | "-V" | "--help" | "-h");
    if kept.iter().any(|(word, _)| asks(word)) {
        return None;
    }
    let args: Vec<&str> = kept.iter().map(|(_, written)| *written).collect();
    Some(Invocation {
        args: args.join(" "),
        source,
        module,
        operands: kept.iter().any(|(word, _)| !word.starts_with('-')),
    })
}

/// Where `command` runs `tool` (and its subcommand): its words (as the tool gets each, and as
/// written), the place of the first argument after them, and whether it runs as a Python
/// module (`python -m pytest`).
type Launch<'c> = (Vec<(String, &'c str)>, usize, bool);

fn launch<'c>(command: &'c str, tool: Tool<'_>) -> Option<Launch<'c>> {
    let raw = raw_words(command.trim())?;
    // Each word as the tool gets it, next to the word as written (quotes kept: a glob the
    // project quotes is the tool's to expand, one it does not is the shell's).
    let words: Vec<(String, &str)> = raw
        .iter()
        .map(|word| Some((shlex::split(word)?.concat(), *word)))
        .collect::<Option<_>>()?;
    let position = words.iter().position(|(word, _)| {
        let name = word.rsplit('/').next().unwrap_or(word);
        tool.names.contains(&name)
    })?;
    let before = &words[..position];
    let launched = before.iter().all(|(word, _)| {
        LAUNCHERS.contains(&word.as_str())
            || word.starts_with('-')
            || (word.contains('=') && !word.starts_with('='))
    });
    if !launched {
        return None;
    }
    let module = before.last().is_some_and(|(word, _)| word == "-m");
    let mut first = position + 1;
    if let Some(sub) = tool.sub {
        if words.get(first).map(|(word, _)| word.as_str()) != Some(sub) {
            return None;
        }
        first += 1;
    }
    Some((words, first, module))
}

/// `command` split into words as `sh` splits it, each as written (its quotes kept); `None` when
/// a quote is left open.
fn raw_words(command: &str) -> Option<Vec<&str>> {
    let mut words = Vec::new();
    let mut start = None;
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in command.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some(_), '\\') if quote == Some('"') => escaped = true,
            (Some(_), _) => {}
            (None, c) if c.is_whitespace() => {
                if let Some(from) = start.take() {
                    words.push(&command[from..i]);
                }
            }
            (None, c) => {
                start.get_or_insert(i);
                match c {
                    '\'' | '"' => quote = Some(c),
                    '\\' => escaped = true,
                    _ => {}
                }
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if let Some(from) = start {
        words.push(&command[from..]);
    }
    Some(words)
}

/// `word` as one `sh` word: as it is when it needs no quotes, else single-quoted.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:@+%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUFF: Tool<'static> = Tool {
        names: &["ruff"],
        sub: Some("check"),
        dropped: &["--fix", "--no-fix", "--output-format", "--exit-zero", "-q"],
        valued: &["--output-format"],
    };

    #[test]
    fn a_command_gives_the_tool_the_arguments_init_can_use() {
        // (command, arguments, as a module)
        let table: &[(&str, Option<(&str, bool)>)] = &[
            (
                "ruff check mkdocs docs {args}",
                Some(("mkdocs docs", false)),
            ),
            (
                "uv run ruff check --output-format github src",
                Some(("src", false)),
            ),
            (
                "python -m ruff check --fix src tests",
                Some(("src tests", true)),
            ),
            (
                ".venv/bin/ruff check -q --exit-zero src",
                Some(("src", false)),
            ),
            (
                "ruff check --select=E,W 'a dir'",
                Some(("--select=E,W 'a dir'", false)),
            ),
            ("ruff check .", Some((".", false))),
            ("ruff check --version", None),
            ("ruff check --preview", Some(("--preview", false))),
            ("ruff check", Some(("", false))),
            ("ruff format src", None),
            ("ruff check $FILES", None),
            ("ruff check src > out.txt", None),
            ("pre-commit run ruff --all-files", None),
            ("echo ruff check src", None),
            ("FORCE_COLOR=1 npx ruff check lib", Some(("lib", false))),
            ("ruff check \"unterminated", None),
        ];
        for (command, expected) in table {
            let found = arguments(command, RUFF, String::new());
            assert_eq!(
                found.as_ref().map(|i| (i.args.as_str(), i.module)),
                *expected,
                "{command}"
            );
        }
    }

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let project = Project::scan(dir.path());
        (dir, project)
    }

    #[test]
    fn the_invocation_is_found_where_projects_write_it() {
        let ci = ".github/workflows/ci.yml";
        // (file, its text, the arguments found)
        let table: &[(&str, &str, Option<&str>)] = &[
            (
                "pyproject.toml",
                "[tool.hatch.envs.style.scripts]\nlint = [\"ruff check mkdocs docs {args}\"]\n\
                 [tool.hatch.envs.style]\ndependencies = [\"ruff\"]\n",
                Some("mkdocs docs"),
            ),
            (
                "pyproject.toml",
                "[tool.poe.tasks]\nlint = { cmd = \"ruff check src\" }\n",
                Some("src"),
            ),
            (
                "pyproject.toml",
                "[project]\ndependencies = [\"ruff check src\"]\n",
                None,
            ),
            (
                "package.json",
                r#"{"scripts": {"lint:py": "ruff check scripts && eslint ."}}"#,
                Some("scripts"),
            ),
            (
                "tox.ini",
                "[testenv:lint]\ncommands = ruff check src {posargs}\n",
                Some("src"),
            ),
            (
                "noxfile.py",
                "def lint(session):\n    session.run(\"ruff\", \"check\", \"src\", 'tests')\n",
                Some("src tests"),
            ),
            (
                "Makefile",
                "lint:\n\t@ruff check \\\n\t  src tools\n",
                Some("src tools"),
            ),
            (
                ci,
                "jobs:\n  lint:\n    steps:\n      - run: |\n          pip install ruff\n          \
                 ruff check --output-format=github pkg\n",
                Some("pkg"),
            ),
            (ci, "      - run: ruff check ${{ matrix.dir }}\n", None),
            (
                ".pre-commit-config.yaml",
                "  - repo: local\n    hooks:\n      - id: ruff\n        entry: ruff check src\n",
                Some("src"),
            ),
            ("docs/Makefile", "lint:\n\truff check src\n", None),
            (
                "pyproject.toml",
                "[tool.tox.env.lint]\ncommands = [[\"ruff\", \"check\", \"src dir\"]]\n",
                Some("'src dir'"),
            ),
            (
                "tox.toml",
                "[env_run_base]\ncommands = [[\"ruff\", \"check\", \"--fix\", \"lib\"]]\n",
                Some("lib"),
            ),
            (
                ".pre-commit-config.yaml",
                "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    hooks:\n      \
                 - id: ruff-check\n        args: [--fix, '--select=E,W']\n      - id: ruff-format\n",
                Some("--select=E,W"),
            ),
            (
                ".pre-commit-config.yaml",
                "  - repo: x\n    hooks:\n      - id: ruff\n        args:\n          - --exit-zero\n          \
                 - --extend-select=I\n      - id: other\n        args: [--x]\n",
                Some("--extend-select=I"),
            ),
        ];
        for (file, text, expected) in table {
            let (_dir, project) = project(&[(file, text)]);
            let found = project.invocation(RUFF);
            assert_eq!(
                found.as_ref().map(|i| i.args.as_str()),
                *expected,
                "{file}: {text}"
            );
            if let Some(found) = found {
                assert_eq!(found.source, *file);
            }
        }
    }

    #[test]
    fn a_script_named_after_the_tool_is_the_projects_own_when_it_is_run() {
        let ci = ".github/workflows/tests.yml";
        // (files, the command)
        type Files<'a> = &'a [(&'a str, &'a str)];
        let table: &[(Files<'_>, Option<&str>)] = &[
            (
                &[
                    ("shellcheck.sh", "#!/bin/bash"),
                    (ci, "        run: |\n          ./shellcheck.sh\n"),
                ],
                Some("./shellcheck.sh"),
            ),
            (
                &[
                    ("scripts/shellcheck", "#!/bin/sh"),
                    ("Makefile", "lint:\n\tbash scripts/shellcheck\n"),
                ],
                Some("./scripts/shellcheck"),
            ),
            // Not run by anything the project runs.
            (&[("shellcheck.sh", "#!/bin/bash")], None),
            (
                &[("shellcheck.py", ""), (ci, "  - run: ./shellcheck.py\n")],
                None,
            ),
        ];
        for (files, expected) in table {
            let (_dir, project) = project(files);
            assert_eq!(
                project.own_script("shellcheck").map(|(c, _)| c).as_deref(),
                *expected,
                "{files:?}"
            );
        }
    }

    #[test]
    fn the_package_scripts_come_before_the_ci_lines() {
        let (_dir, project) = project(&[
            (".github/workflows/ci.yml", "      - run: ruff check ci\n"),
            ("Makefile", "lint:\n\truff check make\n"),
        ]);
        assert_eq!(project.invocation(RUFF).unwrap().args, "make");
    }
}
