//! The part of GitHub's expression language that action.yml uses, evaluated against a replay's
//! contexts: `${{ }}` in a value, `if:` conditions, `||`, `&&`, `==`, `!=`, parentheses, string
//! literals, `always()`, `toJSON(matrix)` and context paths. Anything else fails the test, so a
//! new expression in action.yml is not replayed wrongly.

use std::collections::BTreeMap;

/// What the expressions read: `inputs.*`, `github.*`, `steps.<id>.outputs.*`; the matrix is null.
#[derive(Debug, Default)]
pub struct Contexts {
    pub inputs: BTreeMap<String, String>,
    pub github: BTreeMap<String, String>,
    /// Each step's outputs, by its id.
    pub steps: BTreeMap<String, BTreeMap<String, String>>,
    /// Each needed job's outputs, by its id (an example's second job).
    pub needs: BTreeMap<String, BTreeMap<String, String>>,
}

impl Contexts {
    /// A context path's value; what is not set is the empty string, as GitHub's null reads.
    fn lookup(&self, path: &str) -> String {
        let parts: Vec<&str> = path.split('.').collect();
        let found = match parts.as_slice() {
            ["inputs", name] => self.inputs.get(*name),
            ["github", name] => self.github.get(*name),
            ["steps", id, "outputs", name] => self.steps.get(*id).and_then(|o| o.get(*name)),
            ["needs", id, "outputs", name] => self.needs.get(*id).and_then(|o| o.get(*name)),
            _ => panic!("the replay does not know the context path {path}"),
        };
        found.cloned().unwrap_or_default()
    }

    /// `text` with each `${{ expression }}` replaced by its value.
    pub fn substitute(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("a closed ${{") + start;
            out.push_str(&self.evaluate(&rest[start + 3..end]).text());
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Whether a step with this `if:` runs, after `failed` (an earlier step failed): without a
    /// status function the condition is `success() && (...)`, as on GitHub.
    pub fn runs(&self, condition: Option<&str>, failed: bool) -> bool {
        let Some(condition) = condition else {
            return !failed;
        };
        let condition = condition.trim();
        let condition = condition
            .strip_prefix("${{")
            .and_then(|c| c.strip_suffix("}}"))
            .unwrap_or(condition);
        let status_function = condition.contains("always()");
        (status_function || !failed) && self.evaluate(condition).truthy()
    }

    pub fn evaluate(&self, expression: &str) -> Value {
        let tokens = tokenize(expression);
        let mut parser = Parser {
            tokens: &tokens,
            at: 0,
            contexts: self,
        };
        let value = parser.or();
        assert_eq!(parser.at, tokens.len(), "left over in {expression:?}");
        value
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Bool(bool),
}

impl Value {
    fn truthy(&self) -> bool {
        match self {
            Self::Text(text) => !text.is_empty(),
            Self::Bool(value) => *value,
        }
    }

    fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Bool(value) => value.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Literal(String),
    Path(String),
    Call(String),
    Operator(&'static str),
}

fn tokenize(expression: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut rest = expression.trim_start();
    while !rest.is_empty() {
        if let Some(operator) = ["||", "&&", "==", "!=", "(", ")"]
            .into_iter()
            .find(|o| rest.starts_with(o))
        {
            tokens.push(Token::Operator(operator));
            rest = &rest[operator.len()..];
        } else if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted.find('\'').expect("a closed string literal");
            tokens.push(Token::Literal(quoted[..end].to_string()));
            rest = &quoted[end + 1..];
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
                .unwrap_or(rest.len());
            assert!(end > 0, "the replay cannot read {rest:?}");
            let word = &rest[..end];
            rest = &rest[end..];
            if let Some(after) = rest.strip_prefix("()") {
                tokens.push(Token::Call(format!("{word}()")));
                rest = after;
            } else if let Some(after) = rest.strip_prefix("(matrix)") {
                tokens.push(Token::Call(format!("{word}(matrix)")));
                rest = after;
            } else {
                tokens.push(Token::Path(word.to_string()));
            }
        }
        rest = rest.trim_start();
    }
    tokens
}

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    contexts: &'a Contexts,
}

impl Parser<'_> {
    fn eat(&mut self, operator: &str) -> bool {
        let found = matches!(self.tokens.get(self.at), Some(Token::Operator(o)) if *o == operator);
        self.at += usize::from(found);
        found
    }

    /// `a || b`: the first truthy operand, else the last.
    fn or(&mut self) -> Value {
        let mut value = self.and();
        while self.eat("||") {
            let right = self.and();
            if !value.truthy() {
                value = right;
            }
        }
        value
    }

    /// `a && b`: the first falsy operand, else the last.
    fn and(&mut self) -> Value {
        let mut value = self.comparison();
        while self.eat("&&") {
            let right = self.comparison();
            if value.truthy() {
                value = right;
            }
        }
        value
    }

    /// `a == b`, `a != b`: strings compared ignoring ASCII case, as GitHub does.
    fn comparison(&mut self) -> Value {
        let left = self.primary();
        for (operator, equal) in [("==", true), ("!=", false)] {
            if self.eat(operator) {
                let right = self.primary();
                let same = left.text().eq_ignore_ascii_case(&right.text());
                return Value::Bool(same == equal);
            }
        }
        left
    }

    fn primary(&mut self) -> Value {
        if self.eat("(") {
            let value = self.or();
            assert!(self.eat(")"), "an unclosed parenthesis");
            return value;
        }
        let token = self.tokens.get(self.at).cloned().expect("an operand");
        self.at += 1;
        match token {
            Token::Literal(text) => Value::Text(text),
            Token::Path(path) => Value::Text(self.contexts.lookup(&path)),
            Token::Call(call) if call == "always()" => Value::Bool(true),
            Token::Call(call) if call == "toJSON(matrix)" => Value::Text("null".to_string()),
            other => panic!("the replay does not know {other:?}"),
        }
    }
}

#[test]
fn the_replayed_expressions_read_as_githubs_do() {
    let mut contexts = Contexts::default();
    contexts.inputs.insert("campaign".into(), "nightly".into());
    contexts.github.insert("ref_name".into(), "main".into());
    let outputs = BTreeMap::from([("dir".to_string(), "x".to_string())]);
    contexts.steps.insert("one".into(), outputs);
    assert_eq!(
        contexts.substitute("a-${{ github.head_ref || github.ref_name }}-${{ inputs.campaign }}"),
        "a-main-nightly"
    );
    assert_eq!(
        contexts.substitute("${{ steps.one.outputs.dir || inputs.state-dir }}"),
        "x"
    );
    assert_eq!(contexts.substitute("${{ toJSON(matrix) }}"), "null");
    assert!(contexts.runs(Some("inputs.campaign != ''"), false));
    assert!(!contexts.runs(Some("inputs.campaign != ''"), true));
    assert!(contexts.runs(Some("always() && steps.one.outputs.dir != ''"), true));
    assert!(!contexts.runs(Some("always() && steps.two.outputs.dir != ''"), true));
    assert!(!contexts.runs(Some("inputs.campaign == 'weekly'"), false));
    assert!(contexts.runs(Some("(inputs.campaign == 'NIGHTLY')"), false));
    assert!(!contexts.runs(None, true));
}
