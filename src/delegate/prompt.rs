//! The delegate's task, rendered from a template with `{category}`, `{scope}` and `{details}`
//! ([`crate::template::fill`]: any other `{name}` is an error, found when the config is read).

use crate::template::UnknownPlaceholder;

/// The built-in template (`templates/delegate.md`).
pub const DEFAULT_TEMPLATE: &str = include_str!("../../templates/delegate.md");

/// Details listed in a prompt; more are summed up in one line.
const MAX_DETAILS: usize = 100;

/// Whether `template` names only the placeholders a prompt has.
pub fn check_template(template: &str) -> Result<(), UnknownPlaceholder> {
    render_prompt(template, "", "", &[]).map(drop)
}

/// Fills the template.
pub fn render_prompt(
    template: &str,
    category: &str,
    scope: &str,
    details: &[String],
) -> Result<String, UnknownPlaceholder> {
    let mut listed: Vec<String> = details
        .iter()
        .take(MAX_DETAILS)
        .map(|detail| format!("- {detail}"))
        .collect();
    if details.len() > MAX_DETAILS {
        listed.push(format!("- … and {} more", details.len() - MAX_DETAILS));
    }
    if listed.is_empty() {
        listed.push("- (the gate gave no details)".to_string());
    }
    let details = listed.join("\n");
    crate::template::fill(
        template,
        &[
            ("category", category),
            ("scope", scope),
            ("details", &details),
        ],
    )
}

/// The section a prompt ends with when the delegate's last change was refused for weakening
/// the gate: what it did, and the rule (empty when nothing was refused).
pub fn refused_section(refused: &[String]) -> String {
    if refused.is_empty() {
        return String::new();
    }
    let mut section = String::from(
        "\n\n## Your last change was refused\n\nIt lowered the count by changing what the gate \
         sees, not by fixing the code, so it was rolled back:\n\n",
    );
    for line in refused {
        section.push_str("- ");
        section.push_str(line);
        section.push('\n');
    }
    section.push_str(
        "\nFix the code itself. Do not add suppressions, skip, delete or weaken tests, change the \
         tools' configuration or the gate's scripts, or move code out of the gate's reach: such a \
         change is found and rolled back again.\n",
    );
    section
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_default_template() {
        let details = vec!["src/a.rs:1:1: unneeded `return`".to_string()];
        let prompt =
            render_prompt(DEFAULT_TEMPLATE, "lint", "the whole repository", &details).unwrap();
        assert!(prompt.starts_with("# Fix the `lint` failures\n\nWork in the whole repository."));
        assert!(prompt.contains("\n- src/a.rs:1:1: unneeded `return`\n"));
        assert!(!prompt.contains("{category}") && !prompt.contains("{details}"));
    }

    #[test]
    fn a_refused_change_is_named_in_the_next_prompt() {
        assert_eq!(refused_section(&[]), "");
        let section =
            refused_section(&["`src/a.py:1`: suppression added: `# noqa` (python/noqa)".into()]);
        assert!(
            section.contains("\n- `src/a.py:1`: suppression added: `# noqa` (python/noqa)\n"),
            "{section}"
        );
        assert!(section.contains("Do not add suppressions"), "{section}");
    }

    #[test]
    fn long_lists_are_summed_up() {
        let details: Vec<String> = (0..150).map(|i| format!("finding {i}")).collect();
        let prompt = render_prompt("{details}", "lint", ".", &details).unwrap();
        assert_eq!(prompt.lines().count(), 101);
        assert!(prompt.ends_with("- … and 50 more"));
        assert_eq!(
            render_prompt("{details} {X}", "c", ".", &[]).unwrap(),
            "- (the gate gave no details) {X}"
        );
    }

    #[test]
    fn a_value_is_not_read_as_a_template_and_an_unknown_name_is_an_error() {
        let details = vec!["a finding that says {scope}".to_string()];
        let prompt = render_prompt("{scope}: {details}", "c", "src/", &details).unwrap();
        assert_eq!(prompt, "src/: - a finding that says {scope}");
        let error = check_template("Fix {categroy} in {scope}").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown placeholder {categroy} (known: {category}, {scope}, {details}); write \
             {{categroy}} for the text"
        );
    }

    #[test]
    fn every_built_in_prompt_template_fills() {
        let templates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut checked = 0;
        for folder in ["lenses", "refine"] {
            for entry in std::fs::read_dir(templates.join(folder)).unwrap().flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                check_template(&text).unwrap_or_else(|error| panic!("{entry:?}: {error}"));
                checked += 1;
            }
        }
        check_template(DEFAULT_TEMPLATE).unwrap();
        assert!(checked >= 6, "{checked}");
    }
}
