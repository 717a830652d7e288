use clap::CommandFactory;

use super::Cli;

#[test]
fn the_command_line_is_well_formed() {
    Cli::command().debug_assert();
}

#[test]
fn help_of_every_command() {
    let mut command = Cli::command().term_width(100);
    insta::assert_snapshot!("help", command.render_long_help().to_string());
    for sub in command.get_subcommands_mut() {
        let name = sub.get_name().to_string();
        let help = sub.clone().term_width(100).render_long_help().to_string();
        insta::assert_snapshot!(format!("help_{name}"), help);
    }
}

/// Where the book's command pages are: `docs/src/commands.md` and `docs/src/commands/*.md`.
fn book_source() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src")
}

/// The note at the top of every generated page.
const GENERATED: &str = "<!-- Generated from src/cli.rs by the test `cli::help_tests::command_pages_are_the_help`. \
Do not edit: `UPDATE_DOCS=1 cargo test --lib command_pages` rewrites it. -->";

/// A help text as a page shows it: as clap renders it, without the blanks that end its lines.
fn help_text(command: &clap::Command) -> String {
    let help = command.clone().render_long_help().to_string();
    help.lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect()
}

/// The book's command pages, by path relative to `docs/src`: the overview, from the top-level
/// help, and one page per command with its long help as the binary prints it.
fn command_pages() -> Vec<(String, String)> {
    let mut command = Cli::command();
    command.build();
    let commands: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
        .collect();
    let mut overview = format!(
        "# Command reference\n\n{GENERATED}\n\nEach page is a command's `--help`, as the binary \
         prints it.\n\n"
    );
    let mut pages = Vec::new();
    for sub in &commands {
        let name = sub.get_name();
        let about = sub
            .get_about()
            .map(|about| about.to_string())
            .unwrap_or_default();
        overview.push_str(&format!("- [`{name}`](commands/{name}.md): {about}\n"));
        let help = help_text(sub);
        pages.push((
            format!("commands/{name}.md"),
            format!("# `refine-loop {name}`\n\n{GENERATED}\n\n```text\n{help}```\n"),
        ));
    }
    let help = help_text(&command);
    overview.push_str(&format!("\n## `refine-loop`\n\n```text\n{help}```\n"));
    pages.insert(0, ("commands.md".to_string(), overview));
    pages
}

/// The command pages in the book are the `--help` of the command line they document: a page
/// cannot drift from src/cli.rs. With `UPDATE_DOCS=1`, rewrites them (and removes a page of a
/// command that is gone) instead of failing.
#[test]
fn command_pages_are_the_help() {
    let root = book_source();
    let pages = command_pages();
    let update = std::env::var_os("UPDATE_DOCS").is_some_and(|value| value == "1");
    let listed: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("commands"))
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    for path in listed {
        let relative = format!(
            "commands/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        if !pages.iter().any(|(page, _)| *page == relative) {
            assert!(
                update,
                "docs/src/{relative} documents no command: run `UPDATE_DOCS=1 cargo test --lib command_pages`"
            );
            std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    let summary = std::fs::read_to_string(root.join("SUMMARY.md")).unwrap_or_default();
    for (page, text) in &pages {
        let path = root.join(page);
        if update {
            std::fs::create_dir_all(root.join("commands")).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == *text,
            "docs/src/{page} is not the help of src/cli.rs: run `UPDATE_DOCS=1 cargo test --lib command_pages` \
             and commit the pages it rewrites"
        );
        assert!(
            summary.contains(&format!("]({page})")),
            "docs/src/SUMMARY.md does not list {page}: add it under \"Command reference\""
        );
    }
}
