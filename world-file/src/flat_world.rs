//! Flat world files: where robots change maps
//! (`../shared/seeds/flat-world-transitions.txt`).
//!
//! ```text
//! # a comment
//! WORLD <world-name> <default-map>
//! MAP <map-name>
//! TRANSITION (x y radius [command]) <new-map-name> [(new-x new-y new-theta)]
//! ```
//!
//! Keywords are upper case; units are millimetres and degrees. `WORLD` is
//! read and, as in Flat, not used. Each `TRANSITION` applies on the map of
//! the `MAP` line above it. Map names are those of the world's `maps`
//! property; a name written as a path (`/u/robot/env/taylor-5.env`, as in
//! Flat's own files) stands for the map named by its file stem
//! (`taylor-5`). Where Flat's parser wants no blank at the start of a line,
//! this one allows it; anything else it cannot read is an error naming the
//! line.

use std::path::Path;

use flotilla_plugins::config::LoadError;
use flotilla_wire::description::MapTransition;
use flotilla_wire::geometry::Pose2;

/// Millimetres per metre.
const MM_PER_M: f64 = 1000.0;

/// Reads the Flat world file at `path`, resolving its map names with
/// `map_named` (which gives the world's name for a written one, or `None`).
pub fn load(path: &Path, map_named: &dyn Fn(&str) -> Option<String>) -> Result<Vec<MapTransition>, LoadError> {
    crate::sources::note(path);
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why =
            if e.kind() == std::io::ErrorKind::NotFound { "file does not exist".to_string() } else { e.to_string() };
        LoadError::new(path, "transitions", format!("cannot read {}: {why}", path.display()))
    })?;
    parse(&text, path, map_named)
}

/// [`load`] of a text already read.
pub fn parse(
    text: &str,
    path: &Path,
    map_named: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<MapTransition>, LoadError> {
    let mut transitions = Vec::new();
    let mut current_map: Option<String> = None;
    let mut seen_world = false;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let error = |message: String| LoadError::new(path, format!("line {line_no}"), message);
        let resolve = |written: &str| {
            map_named(written).ok_or_else(|| error(format!("map {written:?} is not one of the world's maps")))
        };
        let tokens = tokenize(line).map_err(&error)?;
        let (keyword, args) = tokens.split_first().ok_or_else(|| error("empty line".into()))?;
        match keyword {
            Token::Word(w) if w == "WORLD" => {
                if seen_world {
                    return Err(error("a second WORLD line; a file describes one world".into()));
                }
                seen_world = true;
                match args {
                    [Token::Word(_name), Token::Word(_default_map)] => {}
                    _ => return Err(error("expected WORLD <world-name> <default-map>".into())),
                }
            }
            Token::Word(w) if w == "MAP" => match args {
                [Token::Word(map)] => current_map = Some(resolve(map)?),
                _ => return Err(error("expected MAP <map-name>".into())),
            },
            Token::Word(w) if w == "TRANSITION" => {
                let from_map = current_map.clone().ok_or_else(|| error("TRANSITION before any MAP line".into()))?;
                let usage = "expected TRANSITION (x y radius [command]) <new-map> [(new-x new-y new-theta)]";
                let (place, to_map, landing) = match args {
                    [Token::Group(place), Token::Word(to)] => (place, to, None),
                    [Token::Group(place), Token::Word(to), Token::Group(landing)] => (place, to, Some(landing)),
                    _ => return Err(error(usage.into())),
                };
                let (center_m, radius_m, command) = read_place(place).map_err(&error)?;
                let pose = landing.map(|l| read_landing(l)).transpose().map_err(&error)?;
                transitions.push(MapTransition {
                    from_map,
                    center_m,
                    radius_m,
                    command,
                    to_map: resolve(to_map)?,
                    pose,
                    source: format!("{}:{line_no}", path.display()),
                });
            }
            Token::Word(w) if ["world", "map", "transition"].contains(&w.to_lowercase().as_str()) => {
                return Err(error(format!("keywords are upper case: {}", w.to_uppercase())));
            }
            _ => return Err(error(format!("unknown line {line:?}; expected WORLD, MAP, TRANSITION or # comment"))),
        }
    }
    Ok(transitions)
}

/// `(x y radius [command])`: centre and radius in metres, and the command.
fn read_place(words: &[String]) -> Result<([f64; 2], f64, Option<String>), String> {
    let (numbers, command) = match words {
        [x, y, r] => ([x, y, r], None),
        [x, y, r, command] => ([x, y, r], Some(command.clone())),
        _ => return Err(format!("the place must be (x y radius [command]), got ({})", words.join(" "))),
    };
    let [x, y, r] = numbers.map(|n| number(n));
    let (x, y, r) = (x?, y?, r?);
    if r <= 0.0 {
        return Err(format!("the radius must be positive, got {r} mm"));
    }
    Ok(([x / MM_PER_M, y / MM_PER_M], r / MM_PER_M, command))
}

/// `(new-x new-y new-theta)`, millimetres and degrees.
fn read_landing(words: &[String]) -> Result<Pose2, String> {
    let [x, y, theta] = words else {
        return Err(format!("the new location must be (x y theta), got ({})", words.join(" ")));
    };
    Ok(Pose2::new(number(x)? / MM_PER_M, number(y)? / MM_PER_M, number(theta)?.to_radians()))
}

fn number(word: &str) -> Result<f64, String> {
    word.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("{word:?} is not a number"))
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Group(Vec<String>),
}

/// Splits a line into words and parenthesised groups of words.
fn tokenize(line: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = line;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with('#') {
            return Ok(tokens);
        }
        if let Some(inner) = rest.strip_prefix('(') {
            let end = inner.find(')').ok_or("a \"(\" without its \")\"")?;
            if inner[..end].contains('(') {
                return Err("parentheses do not nest".into());
            }
            tokens.push(Token::Group(inner[..end].split_whitespace().map(str::to_string).collect()));
            rest = &inner[end + 1..];
        } else if rest.starts_with(')') {
            return Err("a \")\" without its \"(\"".into());
        } else {
            let end = rest.find(|c: char| c.is_whitespace() || c == '(' || c == ')').unwrap_or(rest.len());
            tokens.push(Token::Word(rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
}

/// The map a written name stands for, among `maps`: the same name, or else
/// the one named by its file stem (`/u/env/floor-2.env` → `floor-2`).
pub fn map_named<'a>(maps: impl IntoIterator<Item = &'a str> + Clone, written: &str) -> Option<String> {
    let exact = maps.clone().into_iter().find(|m| *m == written);
    let stem = || {
        let stem = Path::new(written).file_stem()?.to_str()?;
        maps.into_iter().find(|m| *m == stem)
    };
    exact.or_else(stem).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: [&str; 4] = ["floor-1", "floor-2", "elevator", "room"];

    fn parse_text(text: &str) -> Result<Vec<MapTransition>, LoadError> {
        parse(text, Path::new("building.world"), &|w| map_named(MAPS, w))
    }

    #[test]
    fn reads_the_four_kinds_of_transition_in_millimetres_and_degrees() {
        let t = parse_text(
            "# comment\n\
             WORLD Taylor-Hall /u/robot/env/floor-1.env\n\
             \n\
             MAP  /u/robot/env/floor-1.env\n\
             TRANSITION (29800 9700 500 CLOSE-DOOR) elevator (1000 2000 90)\n\
             TRANSITION (29800 9700 500 test2) floor-2\n\
             MAP room\n\
             TRANSITION (1000 -2000 250) floor-1\n\
             TRANSITION (1000 -2000 250) floor-2 (0 0 -180)\n",
        )
        .unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!((t[0].from_map.as_str(), t[0].to_map.as_str()), ("floor-1", "elevator"));
        assert_eq!((t[0].center_m, t[0].radius_m), ([29.8, 9.7], 0.5));
        assert_eq!(t[0].command.as_deref(), Some("CLOSE-DOOR"));
        let landing = t[0].pose.unwrap();
        assert_eq!((landing.x_m, landing.y_m), (1.0, 2.0));
        assert!((landing.theta_rad - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!((t[1].command.as_deref(), t[1].pose), (Some("test2"), None));
        assert_eq!((t[2].from_map.as_str(), t[2].command.as_deref(), t[2].pose), ("room", None, None));
        assert_eq!(t[2].center_m, [1.0, -2.0]);
        assert!(t[3].command.is_none() && t[3].pose.is_some());
        assert_eq!(t[3].source, "building.world:9");
    }

    #[test]
    fn refuses_malformed_lines_naming_them() {
        let cases = [
            ("TRANSITION (1 2 3) room", "line 1", "before any MAP"),
            ("MAP room\nTRANSITION (1 2) floor-1", "line 2", "(x y radius [command])"),
            ("MAP room\nTRANSITION (1 2 0) floor-1", "line 2", "radius must be positive"),
            ("MAP room\nTRANSITION (1 2 x) floor-1", "line 2", "\"x\" is not a number"),
            ("MAP room\nTRANSITION (1 2 3 a b) floor-1", "line 2", "(x y radius [command])"),
            ("MAP room\nTRANSITION (1 2 3) floor-1 (1 2)", "line 2", "(x y theta)"),
            ("MAP room\nTRANSITION (1 2 3 floor-1", "line 2", "without its"),
            ("MAP room\nTRANSITION (1 2 3) basement", "line 2", "\"basement\" is not one of the world's maps"),
            ("MAP attic", "line 1", "\"attic\" is not one"),
            ("map room", "line 1", "upper case: MAP"),
            ("GOTO room", "line 1", "unknown line"),
            ("WORLD a b\nWORLD a b", "line 2", "second WORLD"),
            ("WORLD a", "line 1", "WORLD <world-name>"),
        ];
        for (text, entity, message) in cases {
            let e = parse_text(text).unwrap_err();
            assert_eq!(e.entity, entity, "{text}");
            assert!(e.message.contains(message), "{text}: {}", e.message);
        }
    }

    #[test]
    fn a_path_stands_for_its_file_stem_and_a_plain_name_for_itself() {
        assert_eq!(map_named(MAPS, "/u/env/floor-2.env").as_deref(), Some("floor-2"));
        assert_eq!(map_named(MAPS, "elevator").as_deref(), Some("elevator"));
        assert_eq!(map_named(MAPS, "elevator.env").as_deref(), Some("elevator"));
        assert_eq!(map_named(MAPS, "/u/env/cellar.env"), None);
    }
}
