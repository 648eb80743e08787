//! CPU time and memory of a process, and the CPU time of its threads,
//! from Linux's /proc.

use std::collections::BTreeMap;

use anyhow::Context;

/// What /proc says about one process at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcSample {
    /// User + system CPU time so far, seconds.
    pub cpu_s: f64,
    /// Resident memory now, bytes.
    pub rss_bytes: u64,
    /// Highest resident memory so far (VmHWM), bytes.
    pub peak_rss_bytes: u64,
}

/// Reads `/proc/<pid>/stat` and `/proc/<pid>/status`.
pub fn sample(pid: u32) -> anyhow::Result<ProcSample> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).with_context(|| format!("process {pid}"))?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).with_context(|| format!("process {pid}"))?;
    parse(&stat, &status, clock_ticks_per_s())
}

/// The CPU seconds so far of each kind of thread in process `pid`, by the
/// thread's name without a trailing `-<number>` (Zenoh's `net-0` and
/// `net-1` are one pool, `net`). A thread that has ended is not counted:
/// compare two of these per kind, and the process's own total for all.
pub fn threads_cpu_s(pid: u32) -> anyhow::Result<BTreeMap<String, f64>> {
    let ticks_per_s = clock_ticks_per_s();
    let mut kinds = BTreeMap::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).with_context(|| format!("threads of process {pid}"))?;
    for task in tasks {
        let path = task?.path();
        // A thread may end between the listing and the reading.
        let (Ok(comm), Ok(stat)) =
            (std::fs::read_to_string(path.join("comm")), std::fs::read_to_string(path.join("stat")))
        else {
            continue;
        };
        let cpu_s = parse(&stat, "", ticks_per_s)?.cpu_s;
        *kinds.entry(thread_kind(comm.trim()).to_string()).or_insert(0.0) += cpu_s;
    }
    Ok(kinds)
}

/// A thread's name without a trailing `-<number>`.
fn thread_kind(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((kind, n)) if !kind.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => kind,
        _ => name,
    }
}

fn clock_ticks_per_s() -> f64 {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(ticks)) if ticks > 0 => ticks as f64,
        _ => 100.0, // Linux's USER_HZ everywhere in practice
    }
}

fn parse(stat: &str, status: &str, ticks_per_s: f64) -> anyhow::Result<ProcSample> {
    // The command name (field 2) may hold spaces and parentheses: fields are
    // counted after its closing parenthesis, where field 3 (state) starts.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).context("malformed /proc/<pid>/stat")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| -> anyhow::Result<f64> {
        fields.get(n - 3).and_then(|v| v.parse::<f64>().ok()).with_context(|| format!("/proc/<pid>/stat field {n}"))
    };
    let (utime, stime) = (field(14)?, field(15)?);
    let kib = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok(ProcSample {
        cpu_s: (utime + stime) / ticks_per_s,
        rss_bytes: kib("VmRSS:") * 1024,
        peak_rss_bytes: kib("VmHWM:") * 1024,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_after_the_command_name() {
        let stat = "4242 (flotilla (x) y) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 3 0 100 1000 200";
        let status = "Name:\tflotilla\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        let s = parse(stat, status, 100.0).unwrap();
        assert_eq!(s.cpu_s, 3.0, "(250 + 50) ticks at 100 Hz");
        assert_eq!(s.rss_bytes, 1024 * 1024);
        assert_eq!(s.peak_rss_bytes, 2048 * 1024);
    }

    #[test]
    fn threads_of_one_pool_are_one_kind() {
        assert_eq!(thread_kind("net-0"), "net");
        assert_eq!(thread_kind("net-12"), "net");
        assert_eq!(thread_kind("tokio-rt-worker"), "tokio-rt-worker");
        assert_eq!(thread_kind("flotilla-drive"), "flotilla-drive");
        assert_eq!(thread_kind("-3"), "-3");
    }

    #[test]
    fn this_process_s_threads_are_sampled_by_kind() {
        // A thread named like one of a pool spins until its kind shows CPU
        // time (a clock tick, 10 ms, at the least), or gives up after 10 s.
        let spinner = std::thread::Builder::new()
            .name("procstat-test-7".into())
            .spawn(|| {
                let start = std::time::Instant::now();
                while start.elapsed() < std::time::Duration::from_secs(10) {
                    let kinds = threads_cpu_s(std::process::id()).unwrap();
                    if kinds.get("procstat-test").is_some_and(|&cpu_s| cpu_s > 0.0) {
                        return true;
                    }
                }
                false
            })
            .unwrap();
        assert!(spinner.join().unwrap(), "the spinning thread's CPU time never showed under its kind");
    }

    #[test]
    fn this_process_can_be_sampled() {
        let s = sample(std::process::id()).unwrap();
        assert!(s.peak_rss_bytes >= s.rss_bytes && s.rss_bytes > 0);
    }
}
