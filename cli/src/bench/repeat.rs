//! `flotilla bench --repeat N`: the same scenario measured N times, each
//! figure summarised by its median and range, so that a figure quoted is
//! never one lucky (or unlucky) run.

use serde::Serialize;

use super::Report;

/// The median and range of one figure over the runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut sorted: Vec<f64> = values.into_iter().collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        Some(Spread { median, min: sorted[0], max: sorted[n - 1] })
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let precision = f.precision().unwrap_or(2);
        write!(f, "{:.p$} ({:.p$}–{:.p$})", self.median, self.min, self.max, p = precision)
    }
}

/// One process's figures over the runs.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessSpread {
    /// Its role, as in each run's report.
    pub name: String,
    /// CPU seconds during the measurement.
    pub cpu_s: Spread,
    /// CPU seconds per wall second.
    pub cores: Spread,
    /// Peak resident memory, bytes.
    pub peak_rss_bytes: Spread,
}

/// What `flotilla bench --repeat N` reports: the runs, and the median and
/// range of each figure.
#[derive(Debug, Clone, Serialize)]
pub struct Repeated {
    /// The scenario.
    pub scenario: String,
    /// The clock mode.
    pub clock: String,
    /// How many runs.
    pub repeat: usize,
    /// Real-time factor.
    pub rtf: Spread,
    /// Laser beams per CPU second of the laser processes.
    pub beams_per_s_per_core: Spread,
    /// Every process present in every run, in the first run's order.
    pub processes: Vec<ProcessSpread>,
    /// cmd_vel → odometry latency, p99, ms (scenario `latency`).
    pub latency_p99_ms: Option<Spread>,
    /// Each run's report.
    pub runs: Vec<Report>,
}

/// Summarises `runs` (at least one) of one scenario.
pub fn summarise(runs: Vec<Report>) -> Repeated {
    assert!(!runs.is_empty(), "a summary of no run");
    let first = &runs[0];
    let spread = |figure: &dyn Fn(&Report) -> f64| spread_of(runs.iter().map(figure));
    let processes = first
        .processes
        .iter()
        .filter_map(|p| {
            let of_run = |r: &Report| r.processes.iter().find(|q| q.name == p.name).cloned();
            let all: Vec<_> = runs.iter().filter_map(of_run).collect();
            (all.len() == runs.len()).then(|| ProcessSpread {
                name: p.name.clone(),
                cpu_s: spread_of(all.iter().map(|q| q.cpu_s)),
                cores: spread_of(all.iter().map(|q| q.cores)),
                peak_rss_bytes: spread_of(all.iter().map(|q| q.peak_rss_bytes as f64)),
            })
        })
        .collect();
    let latency_p99_ms = Spread::of(runs.iter().filter_map(|r| r.latency.as_ref().map(|l| l.p99_ms)));
    Repeated {
        scenario: first.scenario.clone(),
        clock: first.clock.clone(),
        repeat: runs.len(),
        rtf: spread(&|r| r.rtf),
        beams_per_s_per_core: spread(&|r| r.beams_per_s_per_core),
        processes,
        latency_p99_ms,
        runs,
    }
}

/// [`Spread::of`], all zero for no values (a summary always has a run).
fn spread_of(values: impl IntoIterator<Item = f64>) -> Spread {
    Spread::of(values).unwrap_or(Spread { median: 0.0, min: 0.0, max: 0.0 })
}

/// Prints the summary of a repeated measurement.
pub fn print(r: &Repeated) {
    println!("{} runs of {}, clock {}: median (min–max)", r.repeat, r.scenario, r.clock);
    println!("real-time factor: {}×", r.rtf);
    if r.beams_per_s_per_core.max > 0.0 {
        let m = |s: Spread| Spread { median: s.median / 1e6, min: s.min / 1e6, max: s.max / 1e6 };
        println!("laser: {} M beams/s per laser-process core", m(r.beams_per_s_per_core));
    }
    if let Some(p99) = r.latency_p99_ms {
        println!("cmd_vel → odometry latency p99: {p99} ms");
    }
    println!("{:<10} {:>22} {:>22}", "process", "CPU s", "cores");
    for p in &r.processes {
        println!("{:<10} {:>22} {:>22}", p.name, p.cpu_s.to_string(), format!("{:.3}", p.cores));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::ProcessReport;

    fn run(rtf: f64, world_cpu_s: f64, with_sonar: bool) -> Report {
        let process = |name: &str, cpu_s: f64| ProcessReport {
            name: name.into(),
            cpu_s,
            cores: cpu_s / 10.0,
            peak_rss_bytes: 1_000_000,
            threads: vec![],
        };
        let mut processes = vec![process("world", world_cpu_s), process("laser", 8.0)];
        if with_sonar {
            processes.push(process("sonar", 0.5));
        }
        Report::of_office_50(rtf, 20.0, processes)
    }

    #[test]
    fn the_median_is_the_middle_run_or_the_mean_of_the_two_middle_ones() {
        assert_eq!(Spread::of([3.0, 1.0, 2.0]), Some(Spread { median: 2.0, min: 1.0, max: 3.0 }));
        assert_eq!(Spread::of([4.0, 1.0, 2.0, 3.0]), Some(Spread { median: 2.5, min: 1.0, max: 4.0 }));
        assert_eq!(Spread::of([]), None);
        assert_eq!(format!("{}", Spread { median: 2.5, min: 1.0, max: 4.0 }), "2.50 (1.00–4.00)");
    }

    #[test]
    fn every_figure_is_summarised_over_the_runs_and_the_runs_are_kept() {
        let summary = summarise(vec![run(30.0, 4.0, true), run(28.0, 5.0, false), run(33.0, 4.5, true)]);
        assert_eq!((summary.repeat, summary.scenario.as_str()), (3, "office-50"));
        assert_eq!(summary.rtf, Spread { median: 30.0, min: 28.0, max: 33.0 });
        let names: Vec<&str> = summary.processes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["world", "laser"], "a process missing from a run is left out");
        assert_eq!(summary.processes[0].cpu_s, Spread { median: 4.5, min: 4.0, max: 5.0 });
        assert_eq!(summary.latency_p99_ms, None);
        assert_eq!(summary.runs.len(), 3);
    }
}
