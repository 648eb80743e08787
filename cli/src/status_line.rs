//! The launcher's console: children's log lines, and a status line that is
//! redrawn in place on a terminal and printed every few seconds otherwise.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use flotilla_wire::world_to_nodes::WorldStatus;

/// Shared console of the launcher.
pub struct Console {
    tty: bool,
    status: Option<String>,
    last_plain: Option<Instant>,
}

impl Console {
    /// A console on stderr.
    pub fn new() -> Console {
        Console { tty: std::io::stderr().is_terminal(), status: None, last_plain: None }
    }

    /// Prints a log line above the status line.
    pub fn log(&mut self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.tty && self.status.is_some() {
            let _ = write!(err, "\r\x1b[K");
        }
        let _ = writeln!(err, "{line}");
        if self.tty {
            if let Some(status) = &self.status {
                let _ = write!(err, "{status}");
            }
        }
        let _ = err.flush();
    }

    /// Shows a new status.
    pub fn status(&mut self, line: String) {
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[K{line}");
            let _ = err.flush();
        } else if self.last_plain.is_none_or(|t| t.elapsed() >= Duration::from_secs(5)) {
            let _ = writeln!(err, "{line}");
            self.last_plain = Some(Instant::now());
        }
        self.status = Some(line);
    }

    /// Ends the status line (before exiting).
    pub fn finish(&mut self) {
        if self.tty && self.status.take().is_some() {
            eprintln!();
        }
    }
}

/// The status line for a world status and the launcher's own counts.
pub fn format_status(status: &WorldStatus, processes_up: usize, processes: usize) -> String {
    let t = status.time.as_secs_f64();
    format!(
        "t = {:>9.2} s  {:>6.2}× real time ({})  step {:>8}  {} robots ({} models)  {} nodes live  {}/{} processes up{}",
        t,
        status.real_time_factor,
        match status.clock {
            flotilla_wire::control::ClockMode::Lockstep => format!("lockstep, {} in barrier", status.lockstep_participants),
            other => other.to_string(),
        },
        status.step,
        status.robots,
        status.models,
        status.nodes,
        processes_up,
        processes,
        if status.paused { "  PAUSED" } else { "" }
    ) + &if status.unclaimed_count > 0 { format!("  {} unclaimed", status.unclaimed_count) } else { String::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_wire::time::SimTime;

    #[test]
    fn status_line_shows_time_rate_robots_and_nodes() {
        let status = WorldStatus {
            time: SimTime { nanos: 12_345_000_000 },
            step: 2469,
            real_time_factor: 3.5,
            paused: true,
            clock: flotilla_wire::control::ClockMode::Lockstep,
            lockstep_participants: 3,
            models: 7,
            robots: 6,
            nodes: 4,
            endpoint: "tcp/127.0.0.1:7450".into(),
            unclaimed: vec!["robot1/laser/laser".into()],
            unclaimed_count: 1,
        };
        let line = format_status(&status, 5, 5);
        for part in [
            "12.35 s",
            "3.50× real time",
            "step     2469",
            "6 robots (7 models)",
            "4 nodes live",
            "5/5 processes up",
            "PAUSED",
        ] {
            assert!(line.contains(part), "{line:?} lacks {part:?}");
        }
    }
}
