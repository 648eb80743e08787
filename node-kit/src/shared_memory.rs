//! Whether this process may use Zenoh's shared memory.
//!
//! Between processes on one machine, Zenoh can pass a large message (3 kB
//! and up) as a reference into a shared-memory pool instead of copying it
//! through a socket: the sender copies it into its pool once, the receiver
//! reads it in place. A recording of office-50 in fast mode ran about a
//! fifth faster that way, its nodes' batches no longer
//! passing through TCP and Zenoh's reassembly of fragments.
//!
//! Zenoh locks every pool it creates or maps into memory (`mlock`), and a
//! process that cannot lock a partner's pool drops the messages that come
//! in it (Zenoh logs that at debug level only). So shared memory is left on
//! only where locking cannot fail for lack of a limit: the process has the
//! `CAP_IPC_LOCK` capability (root outside most containers), or its
//! locked-memory limit (`ulimit -l`) is unlimited. Anywhere else it is
//! turned off, and messages go through the socket as before.
//!
//! Zenoh 1.10 removes "orphaned" pools (`/dev/shm/*.zenoh` files that no
//! process holds a lock on) whenever a process first uses shared memory
//! and again when it exits. A pool being created is not locked yet for a
//! moment after its file appears, so a process starting or exiting at
//! that very moment can remove another's brand-new pool. Its owner goes
//! on writing into it, but no process that had not opened it before can
//! open it any more: every message of 3 kB and up from the owner is lost
//! to those, for as long as it runs (a node started after the world lost
//! its pool never gets the world's description). Only that race removes
//! a pool in use (a pool anyone has locked is never removed), so a
//! process that finds a pool it maps removed says so, with what to do
//! ([`watch_for_removed_pools`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Once;
use std::time::Duration;

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

/// The pools (`/dev/shm/<id>.zenoh`) that a `/proc/<pid>/maps` text shows
/// mapped but removed from `/dev/shm`, each once.
pub fn removed_pools(maps: &str) -> BTreeSet<String> {
    maps.lines()
        .filter_map(|line| line.strip_suffix(" (deleted)"))
        .filter_map(|line| line.split_whitespace().last())
        .filter(|path| path.starts_with("/dev/shm/") && path.ends_with(".zenoh"))
        .map(String::from)
        .collect()
}

/// [`watch_for_removed_pools`] when `config` turns shared memory on.
pub fn watch_if_enabled(config: &zenoh::Config) {
    if config.get_json("transport/shared_memory/enabled").is_ok_and(|enabled| enabled == "true") {
        watch_for_removed_pools();
    }
}

/// How often a process looks for its pools being removed.
const REMOVED_POOLS_CHECKED_EVERY: Duration = Duration::from_secs(2);

/// Starts (once per process) a thread that checks this process's mapped
/// pools every `REMOVED_POOLS_CHECKED_EVERY` and logs a warning for
/// each one removed while in use (see the module docs).
pub fn watch_for_removed_pools() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let watcher = std::thread::Builder::new().name("shm-watch".into()).spawn(|| {
            let mut reported = BTreeSet::new();
            loop {
                std::thread::sleep(REMOVED_POOLS_CHECKED_EVERY);
                let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
                let removed = removed_pools(&maps);
                for pool in removed.difference(&reported) {
                    tracing::warn!(
                        "Zenoh's shared-memory pool {pool}, which this process maps, was removed from /dev/shm \
                         while in use, most likely by another process starting or exiting at the moment it was made \
                         (a race in Zenoh 1.10's cleanup of orphaned pools). If it is this process's own pool, a \
                         process of this machine that had not read from it before no longer receives this process's \
                         messages of 3 kB and up (a node started from now on never gets the world's description): \
                         if that shows, restart this process, or turn shared memory off for the simulation (docs/several-machines.md, \
                         \"Shared memory on one machine\")"
                    );
                }
                reported.extend(removed);
            }
        });
        if let Err(e) = watcher {
            tracing::warn!("cannot start the thread that watches Zenoh's shared-memory pools: {e}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_pools_are_read_from_the_maps_each_once() {
        let maps = "\
55d0c0a00000-55d0c0a21000 r--p 00000000 fd:01 1234                       /usr/bin/flotilla-world
7f2a10000000-7f2a10400000 rw-s 00000000 00:1a 5678                       /dev/shm/912873461.zenoh
7f2a10400000-7f2a10540000 rw-s 00000000 00:1a 5679                       /dev/shm/12345.zenoh (deleted)
7f2a10540000-7f2a10680000 rw-s 00000000 00:1a 5679                       /dev/shm/12345.zenoh (deleted)
7f2a10680000-7f2a10690000 rw-s 00000000 00:1a 5680                       /dev/shm/other-program (deleted)
7f2a106a0000-7f2a106b0000 rw-p 00000000 00:00 0 
7ffd4d9e0000-7ffd4da01000 rw-p 00000000 00:00 0                          [stack]
";
        assert_eq!(removed_pools(maps), BTreeSet::from(["/dev/shm/12345.zenoh".to_string()]));
        assert!(removed_pools("").is_empty());
    }

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
