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
