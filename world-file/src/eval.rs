//! Flatland's `$eval`: a Lua chunk (Lua 5.1, as Flatland links), compiled
//! from source into the binary (mlua's vendored Lua: nothing to install),
//! with Flatland's `env()` and `param()` helpers and its rules:
//!
//! * a chunk without `return ` gets one in front;
//! * the first value returned is the result: a number or string becomes
//!   its Lua text (a number with 14 significant digits), a boolean
//!   `true`/`false`, nil the empty string;
//! * the text is then read as a YAML scalar, so `1234` is a number and
//!   `true` a boolean, as yaml-cpp reads Flatland's string nodes (a text of
//!   several lines stays a string).
//!
//! Sandboxed, unlike Flatland's: only the base, string, table and math
//! libraries, without `dofile`, `loadfile`, `load`, `loadstring`,
//! `require`, `module`, `getfenv`/`setfenv`, `collectgarbage` and `print`;
//! at most [`MAX_INSTRUCTIONS`] instructions and [`MAX_MEMORY_BYTES`] of
//! memory, so a world file can neither read files, run programs nor hang or
//! exhaust the loader. Where Flatland logs a failing chunk and leaves the
//! `$eval` text in place, Flotilla refuses the file with Lua's message.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mlua::{HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Value as LuaValue, VmState};
use serde_yaml::Value;

/// Instructions one `$eval` may run.
pub const MAX_INSTRUCTIONS: u64 = 10_000_000;
/// Memory one `$eval` may hold, bytes.
pub const MAX_MEMORY_BYTES: usize = 16 << 20;
/// How often the instruction budget is checked, instructions.
const HOOK_EVERY: u32 = 10_000;

/// What `param(NAME)` reads: ROS-style parameter names (`/robot/speed`)
/// with scalar values. A Flotilla world has no ROS parameter server; these
/// come from the YAML file named by `FLOTILLA_PARAMS` (see docs/worlds.md).
pub type Params = BTreeMap<String, Value>;

/// The environment variable naming the parameters file.
pub const PARAMS_VAR: &str = "FLOTILLA_PARAMS";

/// The parameters of the YAML file `FLOTILLA_PARAMS` names (a mapping of
/// parameter names to numbers, strings or booleans); none when unset.
pub fn params_from_env() -> Result<Params, String> {
    let Ok(path) = std::env::var(PARAMS_VAR) else { return Ok(Params::new()) };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{PARAMS_VAR}={path}: {e}"))?;
    let params: Params = serde_yaml::from_str(&text)
        .map_err(|e| format!("{PARAMS_VAR}={path}: not a mapping of parameter names to values: {e}"))?;
    if let Some((name, _)) = params.iter().find(|(_, v)| !(v.is_number() || v.is_string() || v.is_bool())) {
        return Err(format!("{PARAMS_VAR}={path}: parameter {name:?} is not a number, string or boolean"));
    }
    Ok(params)
}

/// Evaluates one `$eval` chunk; the error is Lua's, or says which limit
/// was hit.
pub fn evaluate(source: &str, params: &Params) -> Result<Value, String> {
    evaluate_in(source, params, Arc::new(|name: &str| std::env::var(name).ok()))
}

/// Where `env()` reads variables from.
type Environment = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// [`evaluate`] with `env()` reading `environment`.
fn evaluate_in(source: &str, params: &Params, environment: Environment) -> Result<Value, String> {
    let source = source.trim();
    let chunk = if source.contains("return ") { source.to_string() } else { format!("return {source}") };
    let lua = sandbox(params, environment).map_err(|e| format!("cannot set up Lua: {e}"))?;
    let values: MultiValue = lua.load(&chunk).set_name("$eval").eval().map_err(|e| describe(&e))?;
    let text = match values.into_iter().next().unwrap_or(LuaValue::Nil) {
        LuaValue::Nil => return Ok(Value::String(String::new())),
        LuaValue::Boolean(b) => return Ok(Value::Bool(b)),
        value @ (LuaValue::Integer(_) | LuaValue::Number(_) | LuaValue::String(_)) => {
            lua.coerce_string(value).ok().flatten().map(|s| s.to_string_lossy()).unwrap_or_default()
        }
        other => return Err(format!("the result is a {}, not a number, string, boolean or nil", other.type_name())),
    };
    Ok(scalar(text))
}

/// The text as yaml-cpp would read a scalar node holding it.
fn scalar(text: String) -> Value {
    if text.is_empty() || text.contains('\n') {
        return Value::String(text);
    }
    serde_yaml::from_str::<Value>(&text)
        .ok()
        .filter(|v| !v.is_mapping() && !v.is_sequence() && !v.is_null())
        .unwrap_or(Value::String(text))
}

/// Lua's message without mlua's stack traceback.
fn describe(error: &mlua::Error) -> String {
    let text = error.to_string();
    text.split("\nstack traceback:").next().unwrap_or(&text).trim().to_string()
}

/// A Lua state with the safe libraries, the helpers and the limits.
fn sandbox(params: &Params, environment: Environment) -> mlua::Result<Lua> {
    let lua = Lua::new_with(StdLib::STRING | StdLib::TABLE | StdLib::MATH, LuaOptions::default())?;
    lua.set_memory_limit(MAX_MEMORY_BYTES)?;
    let globals = lua.globals();
    for unsafe_name in [
        "dofile",
        "loadfile",
        "load",
        "loadstring",
        "require",
        "module",
        "getfenv",
        "setfenv",
        "collectgarbage",
        "print",
    ] {
        globals.set(unsafe_name, LuaValue::Nil)?;
    }
    let spent = Arc::new(AtomicU64::new(0));
    lua.set_hook(HookTriggers::new().every_nth_instruction(HOOK_EVERY), move |_, _| {
        if spent.fetch_add(u64::from(HOOK_EVERY), Ordering::Relaxed) + u64::from(HOOK_EVERY) > MAX_INSTRUCTIONS {
            Err(mlua::Error::runtime(format!("stopped after {MAX_INSTRUCTIONS} instructions (an endless loop?)")))
        } else {
            Ok(VmState::Continue)
        }
    });
    // env(NAME[, DEFAULT]): the variable, as a number when it reads as one;
    // unset, the default, or nil.
    let env =
        lua.create_function(move |lua, (name, default): (String, Option<LuaValue>)| match environment(&name) {
            Some(text) => match text.trim().parse::<f64>() {
                Ok(number) => Ok(LuaValue::Number(number)),
                Err(_) => Ok(LuaValue::String(lua.create_string(&text)?)),
            },
            None => Ok(default.unwrap_or(LuaValue::Nil)),
        })?;
    globals.set("env", env)?;
    // param(NAME[, DEFAULT]): the parameter (a boolean as "true"/"false",
    // as Flatland); unset, the default, or nil.
    let params = params.clone();
    let param = lua.create_function(move |lua, (name, default): (String, Option<LuaValue>)| {
        Ok(match params.get(&name) {
            Some(Value::Number(n)) => LuaValue::Number(n.as_f64().unwrap_or(f64::NAN)),
            Some(Value::String(s)) => LuaValue::String(lua.create_string(s)?),
            Some(Value::Bool(b)) => LuaValue::String(lua.create_string(if *b { "true" } else { "false" })?),
            _ => default.unwrap_or(LuaValue::Nil),
        })
    })?;
    globals.set("param", param)?;
    Ok(lua)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flatland's test setting: parameters /string, /int, /float and the
    /// variables VALIDSTRING=Bar, VALIDNUMBER=123.4.
    fn eval(source: &str) -> Result<Value, String> {
        let params: Params = serde_yaml::from_str("{/string: Foo, /int: 7, /float: 10.5}").unwrap();
        let environment = |name: &str| match name {
            "VALIDSTRING" => Some("Bar".to_string()),
            "VALIDNUMBER" => Some("123.4".to_string()),
            _ => None,
        };
        evaluate_in(source, &params, Arc::new(environment))
    }

    #[test]
    fn flatland_s_own_preprocessor_cases() {
        // flatland_server/test/yaml_preprocessor/yaml/eval.strings.yaml
        let cases: [(&str, Value); 26] = [
            (r#"return "Hello World""#, "Hello World".into()),
            (r#"return string.gsub("Hello banana", "banana", "World")"#, "Hello World".into()),
            (r#"string.gsub("Hello banana", "banana", "World")"#, "Hello World".into()),
            ("1234", 1234.into()),
            ("12.34", 12.34.into()),
            (r#""B""#, "B".into()),
            ("[[Some\nmultiline\nstring\n]]", "Some\nmultiline\nstring\n".into()),
            (r#"env("VALIDSTRING")"#, "Bar".into()),
            (r#"env("VALIDNUMBER")"#, 123.4.into()),
            (r#"env("VALIDSTRING","YYY")"#, "Bar".into()),
            (r#"env("VALIDNUMBER","333.3")"#, 123.4.into()),
            (r#"env("INVALID")"#, "".into()),
            (r#"env("INVALID","444.4")"#, 444.4.into()),
            (r#"env("INVALID","ZZZ")"#, "ZZZ".into()),
            (r#"env("INVALID", true)"#, true.into()),
            (r#"param("/string")"#, "Foo".into()),
            (r#"param("/int")"#, 7.into()),
            (r#"param("/string","AAA")"#, "Foo".into()),
            (r#"param("/float","111")"#, 10.5.into()),
            (r#"param("/invalid")"#, "".into()),
            (r#"param("/invalid","222")+1"#, 223.into()),
            (r#"param("/invalid","BBB").."C""#, "BBBC".into()),
            (r#"param("/invalid", true)"#, true.into()),
            ("true", true.into()),
            // Lua 5.1 writes numbers with 14 significant digits, as in Flatland.
            ("math.sqrt(2)", "1.4142135623731".parse::<f64>().unwrap().into()),
            ("2^2", 4.into()),
        ];
        for (source, expected) in cases {
            assert_eq!(eval(source), Ok(expected), "$eval {source}");
        }
        assert_eq!(eval("(function(x) return x * 3 end)(5)"), Ok(15.into()), "functions");
    }

    #[test]
    fn the_sandbox_refuses_files_programs_and_endless_loops() {
        for escape in [
            r#"os.execute("true")"#,
            r#"io.open("/etc/passwd")"#,
            r#"dofile("/etc/passwd")"#,
            r#"loadstring("return 1")()"#,
            r#"require("os")"#,
        ] {
            let error = eval(escape).unwrap_err();
            assert!(error.contains("nil"), "{escape}: {error}");
        }
        let error = eval("return (function() while true do end end)()").unwrap_err();
        assert!(error.contains("instructions"), "{error}");
        let error = eval("return string.rep('x', 64 * 1024 * 1024)").unwrap_err();
        assert!(error.to_lowercase().contains("memory"), "{error}");
        assert!(eval("return {1, 2}").unwrap_err().contains("table"));
        assert!(eval("return 1 +").is_err(), "a syntax error");
    }
}
