//! Machines emulated with network namespaces, for the tests of several
//! machines and of network partitions (they need root and iproute2).

use std::path::Path;
use std::process::{Child, Command};

/// Runs `ip` with `args`; panics with its error when it fails.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("iproute2 (ip) is installed");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// A third address byte for the links of a test tagged `tag`, in
/// 10.`net`.x.0/24 for each of `nets`, that no address of this (root)
/// namespace uses: a run killed before it cleaned up leaves its links'
/// ends here, and with the same subnet this run's packets would be routed
/// to them.
#[allow(dead_code)] // not every test binary with namespaces asks
pub fn free_subnet(tag: u32, nets: &[u32]) -> u32 {
    let out = Command::new("ip").args(["-br", "addr"]).output().expect("iproute2 (ip) is installed");
    let used = String::from_utf8_lossy(&out.stdout);
    (0..240)
        .map(|k| 10 + (tag + k) % 240)
        .find(|subnet| !nets.iter().any(|net| used.contains(&format!(" 10.{net}.{subnet}."))))
        .expect("a free subnet: remove old test namespaces and links (ip netns list, ip -br link)")
}

/// Starts Flotilla binary `binary` in namespace `ns`, logging to `log`.
pub fn run(ns: &str, binary: &str, args: &[&str], log: &Path) -> Child {
    let program = super::bin(binary);
    let mut all = vec!["netns", "exec", ns, program.to_str().unwrap()];
    all.extend_from_slice(args);
    super::spawn(Path::new("ip"), &all, log)
}
