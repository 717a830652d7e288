use super::*;

#[test]
fn bad_definitions_name_the_key() {
    let table = [
        (
            "name = \"x\"\n[[pattern]]\nregex = '('\n",
            "pattern[0].regex",
            "invalid regex",
        ),
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<filename>.*)'\n",
            "pattern[0].regex",
            "unknown group name \"filename\"",
        ),
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<file>.*)'\n",
            "pattern[0].regex",
            "message",
        ),
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<file>.*)'\nkind = \"location\"\n",
            "pattern[0].regex",
            "(?P<code>",
        ),
        (
            "name = \"x\"\n[[skip]]\nregex = '(?P<file>a)'\n",
            "skip[0].regex",
            "takes no named",
        ),
        (
            "name = \"x\"\n[[summary]]\nregex = 'Found'\n",
            "summary",
            "at least one",
        ),
        ("name = \"x\"\nbogus = 1\n", "bogus", "unknown field"),
        ("name = \"\"\n", "name", "must not be empty"),
        (
            "name = \"x\"\n[severity]\nE = \"fatal\"\n",
            "severity.E",
            "not a severity",
        ),
        (
            "name = \"x\"\n[[category_rule]]\ncode = '('\ncategory = \"types\"\n",
            "category_rule[0].code",
            "invalid regex",
        ),
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<message>.*)'\n[[pattern.continuation]]\nregex = '(?P<bogus>x)'\n",
            "pattern[0].continuation[0].regex",
            "unknown group name",
        ),
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<line>.*)'\nkind = \"context\"\n",
            "pattern[0].regex",
            "(?P<file>",
        ),
        ("name = \n", "(syntax)", ""),
    ];
    for (text, key, reason) in table {
        let error = compile("p.toml", text).unwrap_err().to_string();
        assert!(error.starts_with("p.toml"), "{error}");
        assert!(error.contains(&format!("{key}:")), "{key} not in {error}");
        assert!(error.contains(reason), "{reason} not in {error}");
    }
}
