//! The delegate's task, rendered from a template with `{category}`, `{scope}` and `{details}`.

/// The built-in template (`templates/delegate.md`).
pub const DEFAULT_TEMPLATE: &str = include_str!("../../templates/delegate.md");

/// Details listed in a prompt; more are summed up in one line.
const MAX_DETAILS: usize = 100;

/// Fills the template. Unknown `{…}` stay as they are.
pub fn render_prompt(template: &str, category: &str, scope: &str, details: &[String]) -> String {
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
    template
        .replace("{category}", category)
        .replace("{scope}", scope)
        .replace("{details}", &listed.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_default_template() {
        let details = vec!["src/a.rs:1:1: unneeded `return`".to_string()];
        let prompt = render_prompt(DEFAULT_TEMPLATE, "lint", "the whole repository", &details);
        assert!(prompt.starts_with("# Fix the `lint` failures\n\nWork in the whole repository."));
        assert!(prompt.contains("\n- src/a.rs:1:1: unneeded `return`\n"));
        assert!(!prompt.contains("{category}") && !prompt.contains("{details}"));
    }

    #[test]
    fn long_lists_are_summed_up() {
        let details: Vec<String> = (0..150).map(|i| format!("finding {i}")).collect();
        let prompt = render_prompt("{details}", "lint", ".", &details);
        assert_eq!(prompt.lines().count(), 101);
        assert!(prompt.ends_with("- … and 50 more"));
        assert_eq!(
            render_prompt("{details} {x}", "c", ".", &[]),
            "- (the gate gave no details) {x}"
        );
    }
}
