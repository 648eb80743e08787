//! Every plugin type in the registry is served: each of its roles has a
//! binary, built with the workspace, whose server serves that role (the
//! binary reports the roles its server takes from the registry). The
//! bridge's surface of each type is checked in `bridge/src/surface.rs`, and
//! each type's example entry and topics in the registry's own tests.

mod common;

use flotilla_protocol::plugins::registry;

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
