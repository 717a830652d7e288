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
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<code>.*)'\nkind = \"heading\"\nuser_frames = true\n",
            "pattern[0].user_frames",
            "only finding and location patterns",
        ),
        (
            "name = \"x\"\n[[pattern]]\nregex = '(?P<file>.*)'\nkind = \"context\"\nuser_frames = true\n",
            "pattern[0].user_frames",
            "only finding and location patterns",
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
        (
            "name = \"x\"\n[[rule_help]]\nuri = 'http://example.com/{code}'\n",
            "rule_help[0].uri",
            "is not an https:// URL",
        ),
        (
            "name = \"x\"\n[[rule_help]]\nuri = 'https://example.com/rules'\n",
            "rule_help[0].uri",
            "has no {code}",
        ),
        (
            "name = \"x\"\n[[rule_help]]\nuri = 'https://example.com/{rule}'\n",
            "rule_help[0].uri",
            "has no {code}",
        ),
        (
            "name = \"x\"\n[[rule_help]]\nuri = 'https://example.com/{code}'\n[[rule_help]]\nuri = 'https://example.com/{code}/{id}'\n",
            "rule_help[1].uri",
            "has {id}: the only placeholder is {code}",
        ),
        (
            "name = \"x\"\n[[rule_help]]\ncode = '(x'\nuri = 'https://example.com/{code}'\n",
            "rule_help[0].code",
            "invalid regex",
        ),
        (
            "name = \"x\"\n[[rule_help]]\ncode = 'SC\\d+'\n",
            "rule_help[0]",
            "missing field `uri`",
        ),
        (
            "name = \"x\"\n[[rule_help]]\nuri = 'https://example.com/{code}'\nurl = 'x'\n",
            "rule_help[0].url",
            "unknown field",
        ),
    ];
    for (text, key, reason) in table {
        let error = compile("p.toml", text).unwrap_err().to_string();
        assert!(error.starts_with("p.toml"), "{error}");
        assert!(error.contains(&format!("{key}:")), "{key} not in {error}");
        assert!(error.contains(reason), "{reason} not in {error}");
    }
}

#[test]
fn rule_help_links_the_codes_it_matches() {
    let parser = compile(
        "p.toml",
        "name = \"x\"\n[[rule_help]]\ncode = 'x::(?P<code>[a-z_]+)'\nuri = 'https://example.com/lints#{code}'\n\
         [[rule_help]]\nuri = 'https://example.com/rules/{code}.html'\n",
    )
    .unwrap();
    let help = crate::parse::Parser::rule_help(&parser).unwrap();
    assert_eq!(
        help.uri("x::needless_return").as_deref(),
        Some("https://example.com/lints#needless_return")
    );
    assert_eq!(
        help.uri("E0425").as_deref(),
        Some("https://example.com/rules/E0425.html")
    );
    assert_eq!(help.uri("plugin/rule"), None);
    let without = compile("p.toml", "name = \"x\"\n").unwrap();
    assert!(crate::parse::Parser::rule_help(&without).is_none());
}
