//! Integration tests: the real `refine-loop` binary against real temporary git repositories.
//! All of them compile into this one test binary.

#![allow(
    clippy::disallowed_macros,
    reason = "the tests may say what they measured; the rules on output are the program's"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail loudly; a panic is the test failing"
)]

mod action;
mod baseline_and_scope;
mod book;
mod campaigns;
mod ci_files;
mod ci_framing;
mod config_errors;
mod config_layers;
mod confine;
mod delegate_usage;
mod delivery;
mod fault_injection;
mod file_kinds;
mod gate_output;
mod gate_process;
mod gate_writes;
mod http_delegate;
mod http_server;
mod ignored_files;
mod image;
mod init;
mod init_projects;
mod install;
mod integrity;
mod isolate;
mod junit_xml;
mod leftovers;
mod merge;
mod new_since;
mod nightly;
mod parse_command;
mod parser_catalogue;
mod parser_fixtures;
mod parser_generic;
mod problem_matchers;
mod provenance;
mod readme;
mod real_tools;
mod recover;
mod repository_shapes;
mod rollback_exact;
mod run_fixers;
mod run_loop;
mod runs_follow;
mod sarif_report;
mod secrets;
mod spending;
mod support;
mod sweep;
mod tree_watch;
mod unmasking;
