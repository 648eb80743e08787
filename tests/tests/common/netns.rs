//! Machines emulated with network namespaces, for the tests of several
//! machines and of network partitions (they need root and iproute2).

use std::path::Path;
use std::process::{Child, Command};

/// Runs `ip` with `args`; panics with its error when it fails.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("iproute2 (ip) is installed");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// Starts Flotilla binary `binary` in namespace `ns`, logging to `log`.
pub fn run(ns: &str, binary: &str, args: &[&str], log: &Path) -> Child {
    let program = super::bin(binary);
    let mut all = vec!["netns", "exec", ns, program.to_str().unwrap()];
    all.extend_from_slice(args);
    super::spawn(Path::new("ip"), &all, log)
}
