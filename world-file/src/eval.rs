//! The subset of Flatland's Lua `$eval` that its documentation shows:
//! numbers, strings, `true`/`false`/`nil`, `env(NAME[, DEFAULT])`,
//! `param(NAME[, DEFAULT])`, `..` concatenation, `+ - * /` with parentheses,
//! and an optional leading `return`. Anything else is a clear error rather
//! than a silent guess. The result is read back as a YAML scalar, so
//! `env("FLAG")` with `FLAG=true` gives a boolean, as in Flatland.

use serde_yaml::Value;

#[derive(Debug, Clone, PartialEq)]
enum Lua {
    Nil,
    Bool(bool),
    Num(f64),
    Str(String),
}

/// Evaluates an expression; the error says what was not understood.
pub fn evaluate(source: &str) -> Result<Value, String> {
    let source = source.trim();
    let source = source.strip_prefix("return").map(str::trim_start).unwrap_or(source);
    let mut parser = Parser { chars: source.chars().collect(), pos: 0 };
    let value = parser.concat()?;
    parser.skip_ws();
    if parser.pos != parser.chars.len() {
        return Err(format!(
            "unsupported syntax at {:?} (Flotilla evaluates literals, env(), param(), .. and + - * /)",
            parser.chars[parser.pos..].iter().collect::<String>()
        ));
    }
    Ok(match value {
        Lua::Nil => Value::Null,
        Lua::Bool(b) => Value::Bool(b),
        Lua::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => Value::from(n as i64),
        Lua::Num(n) => Value::from(n),
        Lua::Str(s) if s.is_empty() => Value::String(s),
        Lua::Str(s) => serde_yaml::from_str::<Value>(&s)
            .ok()
            .filter(|v| !v.is_mapping() && !v.is_sequence())
            .unwrap_or(Value::String(s)),
    })
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        let end = self.pos + token.chars().count();
        if end <= self.chars.len() && self.chars[self.pos..end].iter().copied().eq(token.chars()) {
            self.pos = end;
            true
        } else {
            false
        }
    }

    fn concat(&mut self) -> Result<Lua, String> {
        let mut left = self.sum()?;
        while self.eat("..") {
            let right = self.sum()?;
            left = Lua::Str(format!("{}{}", to_text(&left), to_text(&right)));
        }
        Ok(left)
    }

    fn sum(&mut self) -> Result<Lua, String> {
        let mut left = self.product()?;
        loop {
            self.skip_ws();
            let op = match self.chars.get(self.pos) {
                Some('+') => '+',
                Some('-') => '-',
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.product()?;
            left = Lua::Num(match op {
                '+' => number(&left)? + number(&right)?,
                _ => number(&left)? - number(&right)?,
            });
        }
    }

    fn product(&mut self) -> Result<Lua, String> {
        let mut left = self.unary()?;
        loop {
            self.skip_ws();
            let op = match self.chars.get(self.pos) {
                Some('*') => '*',
                Some('/') => '/',
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary()?;
            left = Lua::Num(match op {
                '*' => number(&left)? * number(&right)?,
                _ => number(&left)? / number(&right)?,
            });
        }
    }

    fn unary(&mut self) -> Result<Lua, String> {
        if self.eat("-") {
            return Ok(Lua::Num(-number(&self.unary()?)?));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Lua, String> {
        self.skip_ws();
        let Some(&c) = self.chars.get(self.pos) else { return Err("expression ends too early".into()) };
        if c == '(' {
            self.pos += 1;
            let v = self.concat()?;
            if !self.eat(")") {
                return Err("missing )".into());
            }
            return Ok(v);
        }
        if c == '"' || c == '\'' {
            self.pos += 1;
            let start = self.pos;
            while self.chars.get(self.pos).is_some_and(|&d| d != c) {
                self.pos += 1;
            }
            if self.pos >= self.chars.len() {
                return Err("unterminated string".into());
            }
            let s: String = self.chars[start..self.pos].iter().collect();
            self.pos += 1;
            return Ok(Lua::Str(s));
        }
        if c.is_ascii_digit() || c == '.' {
            let start = self.pos;
            while self.chars.get(self.pos).is_some_and(|d| d.is_ascii_alphanumeric() || *d == '.') {
                self.pos += 1;
            }
            let text: String = self.chars[start..self.pos].iter().collect();
            return text.parse::<f64>().map(Lua::Num).map_err(|_| format!("not a number: {text}"));
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = self.pos;
            while self.chars.get(self.pos).is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_') {
                self.pos += 1;
            }
            let word: String = self.chars[start..self.pos].iter().collect();
            return match word.as_str() {
                "true" => Ok(Lua::Bool(true)),
                "false" => Ok(Lua::Bool(false)),
                "nil" => Ok(Lua::Nil),
                "env" | "param" => self.call(&word),
                other => Err(format!("unknown name {other:?}")),
            };
        }
        Err(format!("unexpected {c:?}"))
    }

    fn call(&mut self, function: &str) -> Result<Lua, String> {
        if !self.eat("(") {
            return Err(format!("{function} must be called as {function}(...)"));
        }
        let name = self.concat()?;
        let default = if self.eat(",") { Some(self.concat()?) } else { None };
        if !self.eat(")") {
            return Err(format!("missing ) after {function}(...)"));
        }
        let name = to_text(&name);
        Ok(match function {
            "env" => match std::env::var(&name) {
                Ok(v) => Lua::Str(v),
                Err(_) => default.unwrap_or(Lua::Str(String::new())),
            },
            // There is no ROS parameter server behind a Flotilla world: a
            // param() always yields its default, as Flatland does when the
            // parameter is not set.
            _ => default.unwrap_or(Lua::Str(String::new())),
        })
    }
}

fn number(v: &Lua) -> Result<f64, String> {
    match v {
        Lua::Num(n) => Ok(*n),
        Lua::Str(s) => s.trim().parse().map_err(|_| format!("cannot do arithmetic on the string {s:?}")),
        other => Err(format!("cannot do arithmetic on {other:?}")),
    }
}

fn to_text(v: &Lua) -> String {
    match v {
        Lua::Nil => "nil".into(),
        Lua::Bool(b) => b.to_string(),
        Lua::Num(n) if n.fract() == 0.0 => format!("{}", *n as i64),
        Lua::Num(n) => n.to_string(),
        Lua::Str(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatland_documented_examples() {
        assert_eq!(evaluate(r#"env("FLOTILLA_TEST_UNSET_VAR")"#).unwrap(), Value::from(""));
        assert_eq!(evaluate(r#"env("FLOTILLA_TEST_UNSET_VAR", false)"#).unwrap(), Value::Bool(false));
        assert_eq!(evaluate(r#"param("/test/param", 0)/2.0"#).unwrap(), Value::from(0));
        assert_eq!(evaluate(r#"param("/test/param", 5)/2.0 + 1"#).unwrap(), Value::from(3.5));
        assert_eq!(evaluate(r#"return 2 * (3 + 4)"#).unwrap(), Value::from(14));
        assert_eq!(evaluate(r#""a" .. 1"#).unwrap(), Value::from("a1"));
    }

    #[test]
    fn environment_values_read_back_as_yaml_scalars() {
        // PATH is always set; a numeric or boolean variable would come back typed.
        assert!(matches!(evaluate(r#"env("PATH")"#).unwrap(), Value::String(_)));
    }

    #[test]
    fn unsupported_lua_is_an_error() {
        assert!(evaluate("if x then return 1 end").is_err());
        assert!(evaluate("os.exit()").is_err());
    }
}
