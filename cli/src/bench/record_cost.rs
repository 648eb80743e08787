//! `flotilla bench --record-cost N`: what recording costs a scenario, in
//! N rounds of two runs each, one without a recorder and one with
//! (`--record`), each with fresh processes.
//!
//! The two runs of a round follow each other within seconds, so that the
//! cost of a round (one minus the ratio of the two real-time factors) is
//! measured in the same minutes of the host: on the shared machines this
//! project is measured on, a scenario's speed drifts by 15 % within minutes
//! and by 30 % within hours, far more than the cost being measured.
//! The report's cost is the median of the rounds'; the
//! CPU each process adds is the difference of its medians.

use serde::Serialize;

use super::repeat::Spread;
use super::Report;

/// One round: the scenario without a recorder, then with one.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// Real-time factor without a recorder.
    pub rtf_without: f64,
    /// Real-time factor with one.
    pub rtf_with: f64,
    /// What recording cost this round, percent of the speed without it.
    pub cost_percent: f64,
}

/// One process's CPU seconds over the rounds, without and with a recorder.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessCost {
    /// Its role, as in each run's report (`record` for the recorder).
    pub name: String,
    /// CPU seconds in the runs without a recorder (absent for the recorder).
    pub cpu_s_without: Option<Spread>,
    /// CPU seconds in the runs with one.
    pub cpu_s_with: Spread,
    /// The difference of the medians: the CPU seconds recording adds.
    pub added_cpu_s: f64,
}

/// What `flotilla bench --record-cost N` reports.
#[derive(Debug, Clone, Serialize)]
pub struct RecordCost {
    /// The scenario.
    pub scenario: String,
    /// The clock mode.
    pub clock: String,
    /// The recording's chunk compression.
    pub compression: String,
    /// Sim seconds measured per run.
    pub sim_seconds: f64,
    /// Each round, in order.
    pub rounds: Vec<Round>,
    /// The rounds' costs, percent: the median is the figure to quote.
    pub cost_percent: Spread,
    /// Real-time factor without a recorder.
    pub rtf_without: Spread,
    /// Real-time factor with one.
    pub rtf_with: Spread,
    /// Every process of the runs with a recorder, in their order.
    pub processes: Vec<ProcessCost>,
    /// The sum of what recording adds, CPU seconds.
    pub added_cpu_s: f64,
    /// Each run's report, without and with a recorder per round.
    pub runs: Vec<(Report, Report)>,
}

/// What recording cost in `rounds` (at least one), each a run without a
/// recorder and one with, recording with `compression`.
pub fn summarise(rounds: Vec<(Report, Report)>, compression: &str) -> RecordCost {
    assert!(!rounds.is_empty(), "a cost of no round");
    let spread = |values: Vec<f64>| Spread::of(values).expect("at least one round");
    let summary: Vec<Round> = rounds
        .iter()
        .map(|(without, with)| Round {
            rtf_without: without.rtf,
            rtf_with: with.rtf,
            cost_percent: 100.0 * (1.0 - with.rtf / without.rtf),
        })
        .collect();
    let cpu_of = |run: &Report, name: &str| run.processes.iter().find(|p| p.name == name).map(|p| p.cpu_s);
    let (first_without, first_with) = &rounds[0];
    let processes: Vec<ProcessCost> = first_with
        .processes
        .iter()
        .filter_map(|process| {
            let name = process.name.as_str();
            let with: Vec<f64> = rounds.iter().filter_map(|(_, with)| cpu_of(with, name)).collect();
            let without: Vec<f64> = rounds.iter().filter_map(|(without, _)| cpu_of(without, name)).collect();
            // A process missing from some runs (one that died) says nothing.
            if with.len() < rounds.len() || (cpu_of(first_without, name).is_some() && without.len() < rounds.len()) {
                return None;
            }
            let cpu_s_with = spread(with);
            let cpu_s_without = Spread::of(without);
            let added_cpu_s = cpu_s_with.median - cpu_s_without.map_or(0.0, |s| s.median);
            Some(ProcessCost { name: name.to_string(), cpu_s_without, cpu_s_with, added_cpu_s })
        })
        .collect();
    RecordCost {
        scenario: first_with.scenario.clone(),
        clock: first_with.clock.clone(),
        compression: compression.to_string(),
        sim_seconds: first_with.sim_seconds,
        cost_percent: spread(summary.iter().map(|r| r.cost_percent).collect()),
        rtf_without: spread(summary.iter().map(|r| r.rtf_without).collect()),
        rtf_with: spread(summary.iter().map(|r| r.rtf_with).collect()),
        added_cpu_s: processes.iter().map(|p| p.added_cpu_s).sum(),
        processes,
        rounds: summary,
        runs: rounds,
    }
}

/// Prints what recording cost.
pub fn print(cost: &RecordCost) {
    println!(
        "recording's cost in {} rounds of {}, clock {}, {:.0} sim s a run, chunks {}: median (min–max)",
        cost.rounds.len(),
        cost.scenario,
        cost.clock,
        cost.sim_seconds,
        cost.compression
    );
    println!("cost: {:.1} % of the speed", cost.cost_percent);
    println!("real-time factor: {}× without a recorder, {}× with", cost.rtf_without, cost.rtf_with);
    println!("{:<10} {:>22} {:>22} {:>10}", "process", "CPU s without", "CPU s with", "added");
    for p in &cost.processes {
        let without = p.cpu_s_without.map_or_else(|| "–".to_string(), |s| s.to_string());
        println!("{:<10} {:>22} {:>22} {:>10.3}", p.name, without, p.cpu_s_with.to_string(), p.added_cpu_s);
    }
    println!("{:<10} {:>22} {:>22} {:>10.3}", "all", "", "", cost.added_cpu_s);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run at `rtf`, its processes' CPU seconds as given.
    fn run(rtf: f64, processes: &[(&str, f64)]) -> Report {
        Report::of_office_50_using(rtf, 60.0, processes)
    }

    #[test]
    fn the_cost_is_the_median_of_the_rounds_each_measured_against_its_own_run_without() {
        // The host slows down between rounds: each round's cost is still
        // 10 %, 20 % and 5 %, whatever the speeds.
        let rounds = vec![
            (run(50.0, &[("world", 0.5)]), run(45.0, &[("world", 0.5), ("record", 0.2)])),
            (run(40.0, &[("world", 0.6)]), run(32.0, &[("world", 0.7), ("record", 0.3)])),
            (run(30.0, &[("world", 0.8)]), run(28.5, &[("world", 0.8), ("record", 0.25)])),
        ];
        let cost = summarise(rounds, "none");
        let costs: Vec<f64> = cost.rounds.iter().map(|r| (r.cost_percent * 1e6).round() / 1e6).collect();
        assert_eq!(costs, [10.0, 20.0, 5.0]);
        assert!((cost.cost_percent.median - 10.0).abs() < 1e-9);
        assert_eq!((cost.rtf_without.median, cost.rtf_with.median), (40.0, 32.0));
        assert_eq!(cost.compression, "none");
        assert_eq!(cost.runs.len(), 3, "the runs are kept");
    }

    #[test]
    fn each_process_adds_the_difference_of_its_medians_and_the_recorder_all_of_its_own() {
        let rounds = vec![
            (run(50.0, &[("world", 0.5), ("odom", 0.1)]), run(45.0, &[("world", 0.6), ("odom", 0.2), ("record", 0.2)])),
            (run(50.0, &[("world", 0.7), ("odom", 0.1)]), run(45.0, &[("world", 0.7), ("odom", 0.3), ("record", 0.4)])),
        ];
        let cost = summarise(rounds, "lz4");
        let added: Vec<(&str, f64)> =
            cost.processes.iter().map(|p| (p.name.as_str(), (p.added_cpu_s * 1e6).round() / 1e6)).collect();
        assert_eq!(added, [("world", 0.05), ("odom", 0.15), ("record", 0.3)]);
        assert_eq!(cost.processes[2].cpu_s_without, None, "no recorder in the runs without one");
        assert!((cost.added_cpu_s - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_process_missing_from_a_run_is_left_out() {
        let rounds = vec![
            (run(50.0, &[("world", 0.5), ("laser", 1.0)]), run(45.0, &[("world", 0.5), ("record", 0.2)])),
            (run(50.0, &[("world", 0.5)]), run(45.0, &[("world", 0.5), ("laser", 1.0), ("record", 0.2)])),
        ];
        let names: Vec<String> = summarise(rounds, "none").processes.into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["world", "record"]);
    }
}
