//! The starter config `init` writes: for each kind of project found, gate checks that only read
//! (a tool whose program is not installed is written commented out, with its install line), a
//! fixer made from each check that has a fix mode (`from_check`), and agents to uncomment.

use std::fmt::Write as _;

use super::detect::{Project, installed};
use super::invocation::Tool;

const HEADER: &str = include_str!("../../../templates/init/header.toml");
const GENERIC: &str = include_str!("../../../templates/init/generic.toml");
/// The agents `init` offers, commented out: the ready-made delegates.
const AGENTS: &[(&str, &str)] = &[
    (
        "Claude Code",
        include_str!("../../../templates/delegates/claude.toml"),
    ),
    (
        "OpenAI Codex CLI",
        include_str!("../../../templates/delegates/codex.toml"),
    ),
    (
        "aider",
        include_str!("../../../templates/delegates/aider.toml"),
    ),
    (
        "an OpenAI-compatible endpoint",
        include_str!("../../../templates/delegates/openai.toml"),
    ),
];

/// One gate check as `init` writes it.
#[derive(Debug)]
pub struct Check {
    pub name: &'static str,
    pub category: String,
    pub run: String,
    pub parser: &'static str,
    /// The program that must be installed for the check to run.
    pub program: &'static str,
    /// How to install it.
    pub install: &'static str,
    /// Its tool has a fix mode: a fixer is made from it.
    pub fixes: bool,
    /// Lines written after its table (a deadline, a commented option).
    pub extra: std::borrow::Cow<'static, str>,
    /// The project does not use the tool: the check is offered, commented out, with why it
    /// might help.
    pub optional: Option<&'static str>,
    /// Its fixer rewrites prose people read (markdownlint's): offered commented out.
    pub prose: bool,
    /// Where its paths and options come from (the project's own run of the tool), and what
    /// init could not take from there: a comment above it.
    pub origin: Option<String>,
}

/// A kind of project found, and its checks.
#[derive(Debug)]
pub struct Kind {
    pub name: &'static str,
    pub note: &'static str,
    pub checks: Vec<Check>,
}

/// The config for `project`, with the kinds found (none: a generic gate to edit).
pub fn render(project: &Project, kinds: &[Kind]) -> String {
    let mut text = HEADER.to_string();
    let mut fixers = Vec::new();
    let mut active = 0;
    for kind in kinds {
        text.push('\n');
        text.push_str(&comment_wrapped(&format!("{}: {}", kind.name, kind.note)));
        for check in &kind.checks {
            if let Some(why) = check.optional {
                write_optional(&mut text, check, why);
                continue;
            }
            let ready = installed(check.program, &project.root);
            write_check(&mut text, check, ready);
            active += usize::from(ready);
            if ready && check.fixes {
                fixers.push(check);
            }
        }
    }
    write_unknown(&mut text, project);
    if active == 0 {
        // A gate needs a check: one to replace with the project's own.
        text.push('\n');
        text.push_str(GENERIC);
    }
    write_fixers(&mut text, &mut fixers);
    write_agents(&mut text);
    text
}

fn table(check: &Check) -> String {
    let origin = check
        .origin
        .as_deref()
        .map_or(String::new(), comment_wrapped);
    format!(
        "{origin}[[gate.check]]\nname = \"{}\"\ncategory = \"{}\"\nrun = {}\nparser = \"{}\"\n{}",
        check.name,
        check.category,
        toml_string(&check.run),
        check.parser,
        check.extra
    )
}

/// A check of a tool the project does not use, commented out, with why it might help.
fn write_optional(text: &mut String, check: &Check, why: &str) {
    text.push('\n');
    text.push_str(&comment_wrapped(&format!(
        "Optional: {why}. The project does not use it (no config of its own): uncomment to add it."
    )));
    text.push_str(&comment_out(&table(check)));
}

fn write_check(text: &mut String, check: &Check, ready: bool) {
    let mut table = table(check);
    text.push('\n');
    if !ready {
        let _ = writeln!(
            text,
            "# `{}` is not installed here: install it (`{}`), then uncomment this check.",
            check.program, check.install
        );
        table = comment_out(&table);
    }
    text.push_str(&table);
}

/// Linters, formatters and checkers init writes no check for, looked for among the project's
/// commands: a program, and its subcommand where the program is cargo.
const UNKNOWN: &[(&str, Option<&str>)] = &[
    ("xo", None),
    ("jshint", None),
    ("tslint", None),
    ("oxlint", None),
    ("shfmt", None),
    ("eclint", None),
    ("editorconfig-checker", None),
    ("dockerfile_lint", None),
    ("actionlint", None),
    ("zizmor", None),
    ("typos", None),
    ("cspell", None),
    ("vale", None),
    ("golangci-lint", None),
    ("staticcheck", None),
    ("rubocop", None),
    ("sqlfluff", None),
    ("taplo", None),
    ("djlint", None),
    ("clang-format", None),
    ("cargo", Some("doc")),
    ("cargo", Some("hack")),
    ("cargo", Some("deny")),
    ("cargo", Some("audit")),
    ("cargo", Some("udeps")),
    ("cargo", Some("machete")),
    ("cargo", Some("semver-checks")),
    ("cargo", Some("miri")),
];

/// The tools the project's own commands run that init has no check for: named, so that the
/// gate is not taken for as strict as the project's own when it is not.
fn write_unknown(text: &mut String, project: &Project) {
    let found: Vec<String> = UNKNOWN
        .iter()
        .filter_map(|(program, sub)| {
            let names = [*program];
            let tool = Tool {
                names: &names,
                sub: *sub,
                dropped: &[],
                valued: &[],
            };
            let (source, _) = project.commands_running(tool)?;
            let name = sub.map_or(program.to_string(), |sub| format!("{program} {sub}"));
            Some(format!("{name} ({source})"))
        })
        .collect();
    if found.is_empty() {
        return;
    }
    text.push('\n');
    text.push_str(&comment_wrapped(&format!(
        "The project also runs {}, which init writes no check for: add one with its command \
         and a parser (`refine-loop parsers` lists them; `generic` reads path:line:col lines).",
        found.join(", ")
    )));
}

/// The fixers, formatting first (its changes would otherwise be the linters' findings), each
/// made from its check.
fn write_fixers(text: &mut String, fixers: &mut [&Check]) {
    text.push_str(
        "\n# Fixers. Each runs a gate check's own command in its tool's fix mode (`from_check`), so \
         it\n# works exactly the rules the gate reads; formatting goes first.\n",
    );
    if fixers.is_empty() {
        text.push_str(
            "# No check here has a fix mode (or its tool is not installed): uncomment an agent below.\n",
        );
    }
    fixers.sort_by_key(|check| !check.category.starts_with("format"));
    for check in fixers.iter() {
        let fixer = format!("[[delegate]]\nfrom_check = \"{}\"\n", check.name);
        if check.prose {
            text.push('\n');
            text.push_str(&comment_wrapped(&format!(
                "{}'s fix mode changes text people read (line breaks, headings): uncomment to \
                 let it rewrite the project's prose.",
                check.name
            )));
            text.push_str(&comment_out(&fixer));
        } else {
            let _ = write!(text, "\n{fixer}");
        }
    }
}

fn write_agents(text: &mut String) {
    text.push_str(
        "\n# A coding agent, for what no fixer fixes (failing tests, type errors, lints without an\n\
         # automatic fix). Uncomment one. It runs headless, in a fresh process per failing\n\
         # category; the gate judges its change, which is kept or rolled back to the byte.\n",
    );
    for (name, template) in AGENTS {
        let _ = write!(text, "#\n# --- {name} ---\n{}", comment_out(template));
    }
}

/// `text` as comment lines of at most 100 characters.
fn comment_wrapped(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 100 && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// `text` with every line commented out.
fn comment_out(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with('#') {
                format!("{line}\n")
            } else {
                format!("# {line}\n")
            }
        })
        .collect()
}

/// A TOML basic string, or a literal one when the text holds quotes or backslashes.
fn toml_string(text: &str) -> String {
    if text.contains(['"', '\\']) && !text.contains('\'') {
        format!("'{text}'")
    } else {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
