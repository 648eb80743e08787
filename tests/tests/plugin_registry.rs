//! Every plugin type in the registry is served: each of its roles has a
//! binary, built with the workspace, whose server serves that role (the
//! binary reports the roles its server takes from the registry). The
//! bridge's surface of each type is checked in `world-file/tests/surface.rs`, and
//! each type's example entry and topics in the registry's own tests.

mod common;

use flotilla_plugins::registry;

#[test]
fn every_registered_role_has_a_binary_that_serves_it() {
    for role in registry::roles() {
        let binary = common::bin(role.binary);
        assert!(binary.exists(), "{role:?}: no binary {} (is it declared and built?)", binary.display());
        let output = std::process::Command::new(&binary).arg("--served-role").output().unwrap();
        assert!(output.status.success(), "{role:?}: {}", String::from_utf8_lossy(&output.stderr));
        let served = String::from_utf8_lossy(&output.stdout);
        let wanted = format!("{}/{}", role.plugin_type, role.aspect);
        assert!(
            served.lines().any(|line| line == wanted),
            "{} does not serve {wanted}, which the registry gives it; it serves {served:?}",
            role.binary
        );
    }
}

/// The registry is the only place that knows what a plugin type is: a
/// type's name appears as a string in non-test code only in its own config
/// module (`plugins/src/<type>.rs`, where `PluginConfig::TYPE` and its roles
/// are written) and the registry. Anything else asks the registry (a robot
/// is `RobotModel::is_robot`, a sensor role is `RoleKind::Sensor`) or names
/// the config's `TYPE`, so adding or renaming a type touches one module.
#[test]
fn plugin_type_strings_appear_only_in_their_config_module_and_the_registry() {
    let root = common::root();
    let mut offences = Vec::new();
    for file in rust_sources(&root) {
        let relative = file.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        let in_tests = relative.starts_with("tests/")
            || relative.contains("/tests/")
            || relative.contains("/benches/")
            || relative.starts_with("fuzz/")
            || relative.ends_with("/tests.rs");
        if in_tests || relative == "plugins/src/registry.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // A file's unit tests are its `#[cfg(test)]` module, at its end.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for plugin_type in registry::REGISTRY {
            let literal = format!("\"{}\"", plugin_type.name);
            let own_module = plugin_config_module(&root, plugin_type.name);
            if own_module.as_deref() == Some(relative.as_str()) {
                continue;
            }
            for (number, line) in code.lines().enumerate() {
                let is_comment = line.trim_start().starts_with("//");
                if line.contains(&literal) && !is_comment {
                    offences.push(format!("{relative}:{}: {}", number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "plugin type strings outside the registry and the config modules:\n{}",
        offences.join("\n")
    );
}

/// The config module that declares `plugin_type` (`const TYPE: &'static str = "<type>"`).
fn plugin_config_module(root: &std::path::Path, plugin_type: &str) -> Option<String> {
    let declaration = format!("const TYPE: &'static str = \"{plugin_type}\";");
    let dir = root.join("plugins/src");
    std::fs::read_dir(&dir).unwrap().flatten().map(|entry| entry.path()).find_map(|path| {
        let text = std::fs::read_to_string(&path).ok()?;
        text.contains(&declaration).then(|| path.strip_prefix(root).unwrap().to_string_lossy().into_owned())
    })
}

/// Every `.rs` file of the workspace's crates (not `target/`, not hidden).
fn rust_sources(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_registered_type_has_a_config_module() {
    let root = common::root();
    for plugin_type in registry::REGISTRY {
        assert!(
            plugin_config_module(&root, plugin_type.name).is_some(),
            "{}: no module of plugins/src/ declares `const TYPE: &'static str = \"{}\";`",
            plugin_type.name,
            plugin_type.name
        );
    }
}
