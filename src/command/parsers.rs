//! `refine-loop parsers`: the catalogue `parse` and the gate draw from.

use std::io::Write;

use serde_json::json;

use super::CommandError;
use super::parse::load_catalogue;
use super::print;
use crate::cli::ParsersArgs;
use crate::exit_code;
use crate::state::format::PARSE as FORMAT_VERSION;

/// Lists the catalogue; returns the exit code.
pub fn parsers(args: &ParsersArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let catalogue = load_catalogue(&args.sources)?;
    let text = if args.json {
        let list: Vec<_> = catalogue
            .iter()
            .map(|(parser, origin)| {
                json!({
                    "name": parser.name(),
                    "category": parser.category(),
                    "description": parser.description(),
                    "command": parser.command(),
                    "source": origin,
                })
            })
            .collect();
        format!(
            "{}\n",
            json!({"format_version": FORMAT_VERSION, "parsers": list})
        )
    } else {
        let width = catalogue.names().map(str::len).max().unwrap_or(4).max(4);
        let mut text = format!("{:<width$}  {:<10}  COMMAND\n", "NAME", "CATEGORY");
        for (parser, _) in catalogue.iter() {
            let line = format!(
                "{:<width$}  {:<10}  {}",
                parser.name(),
                parser.category().unwrap_or("-"),
                parser.command()
            );
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    };
    print(stdout, &text);
    Ok(exit_code::SUCCESS)
}
