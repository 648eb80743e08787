//! Whether this process may use Zenoh's shared memory.
//!
//! Between processes on one machine, Zenoh can pass a large message (3 kB
//! and up) as a reference into a shared-memory pool instead of copying it
//! through a socket: the sender copies it into its pool once, the receiver
//! reads it in place. A recording of office-50 in fast mode ran about a
//! fifth faster that way (BENCHMARKS.md), its nodes' batches no longer
//! passing through TCP and Zenoh's reassembly of fragments.
//!
//! Zenoh locks every pool it creates or maps into memory (`mlock`), and a
//! process that cannot lock a partner's pool drops the messages that come
//! in it (Zenoh logs that at debug level only). So shared memory is left on
//! only where locking cannot fail for lack of a limit: the process has the
//! `CAP_IPC_LOCK` capability (root outside most containers), or its
//! locked-memory limit (`ulimit -l`) is unlimited. Anywhere else it is
//! turned off, and messages go through the socket as before.

use std::path::Path;

/// The capability that lifts the locked-memory limit (`CAP_IPC_LOCK`,
/// bit 14 of the capability sets).
const CAP_IPC_LOCK_BIT: u32 = 14;

/// Whether this process can lock as much memory as Zenoh's shared-memory
/// pools take (Linux; anywhere else, no).
pub fn memory_lockable() -> bool {
    let read = |path: &str| std::fs::read_to_string(Path::new(path)).unwrap_or_default();
    has_ipc_lock(&read("/proc/self/status")) || locked_memory_unlimited(&read("/proc/self/limits"))
}

/// Whether the effective capabilities of a `/proc/<pid>/status` text hold
/// `CAP_IPC_LOCK`.
fn has_ipc_lock(status: &str) -> bool {
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK_BIT) != 0)
}

/// Whether the soft locked-memory limit of a `/proc/<pid>/limits` text is
/// unlimited.
fn locked_memory_unlimited(limits: &str) -> bool {
    limits
        .lines()
        .find_map(|line| line.strip_prefix("Max locked memory"))
        .and_then(|rest| rest.split_whitespace().next())
        .is_some_and(|soft| soft == "unlimited")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_ipc_lock_is_read_from_the_effective_set() {
        let status = |eff: &str| format!("Name:\tflotilla-world\nCapInh:\t0000000000000000\nCapEff:\t{eff}\n");
        assert!(has_ipc_lock(&status("000001ffffffffff")), "root outside a container has every capability");
        assert!(has_ipc_lock(&status("0000000000004000")), "CAP_IPC_LOCK alone");
        // Docker's default set for root: no CAP_IPC_LOCK.
        assert!(!has_ipc_lock(&status("00000000a80425fb")));
        assert!(!has_ipc_lock(&status("0000000000000000")), "an ordinary user");
        assert!(!has_ipc_lock("Name:\tno capabilities line\n"));
    }

    #[test]
    fn only_an_unlimited_soft_limit_counts() {
        let limits = |soft: &str, hard: &str| {
            format!(
                "Limit                     Soft Limit           Hard Limit           Units     \n\
                 Max open files            1024                 1048576              files     \n\
                 Max locked memory         {soft:<20} {hard:<20} bytes     \n"
            )
        };
        assert!(locked_memory_unlimited(&limits("unlimited", "unlimited")));
        assert!(!locked_memory_unlimited(&limits("8388608", "8388608")), "the usual 8 MiB");
        assert!(!locked_memory_unlimited(&limits("8388608", "unlimited")), "the soft limit is what applies");
        assert!(!locked_memory_unlimited(""));
    }
}
