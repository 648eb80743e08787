//! CPU time and memory of a process, from Linux's /proc.

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
    fn this_process_can_be_sampled() {
        let s = sample(std::process::id()).unwrap();
        assert!(s.peak_rss_bytes >= s.rss_bytes && s.rss_bytes > 0);
    }
}
