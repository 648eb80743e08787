//! `flotilla bench --compare-clocks N`: what lockstep costs against fast
//! mode, in N rounds of two runs each, one fast and one in lockstep, each
//! with fresh processes.
//!
//! As for `--record-cost`, the two runs of a round follow each other within
//! seconds, so that a round's ratio (the fast run's real-time factor over
//! the lockstep run's) is measured in the same minutes of the host, whose
//! speed drifts by more than the difference between rounds. The report's
//! ratio is the median of the rounds'; each process's CPU, and each kind
//! of thread's in it, is given per step, in µs, in both modes: where the
//! CPU lockstep adds goes (Zenoh's `net` threads receiving and routing,
//! its `tx` threads sending, the node's own work).

use serde::Serialize;

use super::repeat::Spread;
use super::Report;

/// One round: the scenario fast, then in lockstep.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// Real-time factor fast.
    pub rtf_fast: f64,
    /// Real-time factor in lockstep.
    pub rtf_lockstep: f64,
    /// How many times slower lockstep ran this round.
    pub ratio: f64,
}

/// One process's CPU per step over the rounds, in both modes.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessPerStep {
    /// Its role, as in each run's report.
    pub name: String,
    /// CPU µs per step, fast.
    pub cpu_us_per_step_fast: Spread,
    /// CPU µs per step, lockstep.
    pub cpu_us_per_step_lockstep: Spread,
    /// Each kind of thread present in every run, busiest in lockstep first.
    pub threads: Vec<ThreadPerStep>,
}

/// One kind of thread's CPU per step over the rounds, in both modes.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadPerStep {
    /// The threads' name without its `-<number>`.
    pub name: String,
    /// CPU µs per step, fast.
    pub cpu_us_per_step_fast: Spread,
    /// CPU µs per step, lockstep.
    pub cpu_us_per_step_lockstep: Spread,
}

/// What `flotilla bench --compare-clocks N` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ClockComparison {
    /// The scenario.
    pub scenario: String,
    /// Sim seconds measured per run.
    pub sim_seconds: f64,
    /// Each round, in order.
    pub rounds: Vec<Round>,
    /// The rounds' ratios: the median is the figure to quote.
    pub ratio: Spread,
    /// Real-time factor fast.
    pub rtf_fast: Spread,
    /// Real-time factor in lockstep.
    pub rtf_lockstep: Spread,
    /// Wall µs per step, fast and lockstep (medians): a step rate of 10⁶
    /// over it.
    pub wall_us_per_step: (f64, f64),
    /// Latency added to each direction between the world's machine and
    /// the nodes' (`--link-latency`), ms; `None` on one machine.
    pub link_latency_ms: Option<f64>,
    /// Every process present in every run, in the first run's order.
    pub processes: Vec<ProcessPerStep>,
    /// The sum over the processes of the median CPU µs per step, fast and
    /// lockstep.
    pub all_us_per_step: (f64, f64),
    /// Each run's report, fast and lockstep per round.
    pub runs: Vec<(Report, Report)>,
}

/// The comparison of `rounds` (at least one), each a fast run and a
/// lockstep run of one scenario.
pub fn summarise(rounds: Vec<(Report, Report)>) -> ClockComparison {
    assert!(!rounds.is_empty(), "a comparison of no round");
    let spread = |values: Vec<f64>| Spread::of(values).expect("at least one round");
    let summary: Vec<Round> = rounds
        .iter()
        .map(|(fast, lockstep)| Round {
            rtf_fast: fast.rtf,
            rtf_lockstep: lockstep.rtf,
            ratio: fast.rtf / lockstep.rtf,
        })
        .collect();
    let steps = |run: &Report| run.sim_seconds / (run.step_ms * 1e-3);
    let us_per_step =
        |run: &Report, name: &str| run.processes.iter().find(|p| p.name == name).map(|p| p.cpu_s * 1e6 / steps(run));
    let thread_us_per_step = |run: &Report, name: &str, thread: &str| {
        let process = run.processes.iter().find(|p| p.name == name)?;
        process.threads.iter().find(|t| t.name == thread).map(|t| t.cpu_s * 1e6 / steps(run))
    };
    let processes: Vec<ProcessPerStep> = rounds[0]
        .0
        .processes
        .iter()
        .filter_map(|process| {
            let name = process.name.as_str();
            let fast: Vec<f64> = rounds.iter().filter_map(|(fast, _)| us_per_step(fast, name)).collect();
            let lockstep: Vec<f64> = rounds.iter().filter_map(|(_, lockstep)| us_per_step(lockstep, name)).collect();
            // A process missing from some runs (one that died) says nothing.
            if fast.len() != rounds.len() || lockstep.len() != rounds.len() {
                return None;
            }
            let mut threads: Vec<ThreadPerStep> = process
                .threads
                .iter()
                .filter_map(|thread| {
                    let in_all = |pick: fn(&(Report, Report)) -> &Report| -> Option<Vec<f64>> {
                        rounds.iter().map(|round| thread_us_per_step(pick(round), name, &thread.name)).collect()
                    };
                    Some(ThreadPerStep {
                        name: thread.name.clone(),
                        cpu_us_per_step_fast: spread(in_all(|round| &round.0)?),
                        cpu_us_per_step_lockstep: spread(in_all(|round| &round.1)?),
                    })
                })
                .collect();
            threads.sort_by(|a, b| b.cpu_us_per_step_lockstep.median.total_cmp(&a.cpu_us_per_step_lockstep.median));
            Some(ProcessPerStep {
                name: name.to_string(),
                cpu_us_per_step_fast: spread(fast),
                cpu_us_per_step_lockstep: spread(lockstep),
                threads,
            })
        })
        .collect();
    let all = |pick: fn(&ProcessPerStep) -> &Spread| processes.iter().map(|p| pick(p).median).sum::<f64>();
    let step_ms = rounds[0].0.step_ms;
    let wall_us_per_step = |rtf: &Spread| step_ms * 1e3 / rtf.median;
    let (rtf_fast, rtf_lockstep) = (
        spread(summary.iter().map(|r| r.rtf_fast).collect()),
        spread(summary.iter().map(|r| r.rtf_lockstep).collect()),
    );
    ClockComparison {
        scenario: rounds[0].0.scenario.clone(),
        sim_seconds: rounds[0].0.sim_seconds,
        ratio: spread(summary.iter().map(|r| r.ratio).collect()),
        wall_us_per_step: (wall_us_per_step(&rtf_fast), wall_us_per_step(&rtf_lockstep)),
        link_latency_ms: rounds[0].0.link_latency_ms,
        rtf_fast,
        rtf_lockstep,
        all_us_per_step: (all(|p| &p.cpu_us_per_step_fast), all(|p| &p.cpu_us_per_step_lockstep)),
        processes,
        rounds: summary,
        runs: rounds,
    }
}

/// Prints the comparison.
pub fn print(comparison: &ClockComparison) {
    println!(
        "lockstep against fast in {} rounds of {}, {:.0} sim s a run: median (min–max)",
        comparison.rounds.len(),
        comparison.scenario,
        comparison.sim_seconds
    );
    println!("lockstep is {} times slower", comparison.ratio);
    if let Some(latency) = comparison.link_latency_ms {
        println!("the world on one machine, the nodes on another, {latency} ms added each way between them");
    }
    println!("real-time factor: {}× fast, {}× lockstep", comparison.rtf_fast, comparison.rtf_lockstep);
    let (fast, lockstep) = comparison.wall_us_per_step;
    println!(
        "wall time per step: {fast:.0} µs fast ({:.0} steps/s), {lockstep:.0} µs lockstep ({:.0} steps/s)",
        1e6 / fast,
        1e6 / lockstep
    );
    println!("{:<10} {:>26} {:>26}", "process", "CPU µs/step fast", "CPU µs/step lockstep");
    for p in &comparison.processes {
        println!(
            "{:<10} {:>26} {:>26}",
            p.name,
            p.cpu_us_per_step_fast.to_string(),
            p.cpu_us_per_step_lockstep.to_string()
        );
        // Threads that take less than a µs a step in both modes are noise.
        let busy = |t: &&ThreadPerStep| t.cpu_us_per_step_fast.median.max(t.cpu_us_per_step_lockstep.median) >= 1.0;
        for t in p.threads.iter().filter(busy) {
            println!(
                "  {:<18} {:>16} {:>26}",
                t.name,
                t.cpu_us_per_step_fast.to_string(),
                t.cpu_us_per_step_lockstep.to_string()
            );
        }
    }
    let (fast, lockstep) = comparison.all_us_per_step;
    println!("{:<10} {:>26.1} {:>26.1}", "all", fast, lockstep);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of 10 sim s (2000 steps of 5 ms) at `rtf`, its processes' CPU
    /// seconds as given.
    fn run(rtf: f64, processes: &[(&str, f64)]) -> Report {
        Report::of_office_50_using(rtf, 10.0, processes)
    }

    #[test]
    fn the_ratio_is_the_median_of_the_rounds_each_against_its_own_fast_run() {
        // The host slows down between rounds: each round's ratio is still
        // 2, 1.5 and 2.5, whatever the speeds.
        let rounds = vec![
            (run(60.0, &[("world", 0.2)]), run(30.0, &[("world", 0.4)])),
            (run(45.0, &[("world", 0.2)]), run(30.0, &[("world", 0.5)])),
            (run(50.0, &[("world", 0.2)]), run(20.0, &[("world", 0.6)])),
        ];
        let comparison = summarise(rounds);
        let ratios: Vec<f64> = comparison.rounds.iter().map(|r| r.ratio).collect();
        assert_eq!(ratios, [2.0, 1.5, 2.5]);
        assert_eq!(comparison.ratio.median, 2.0);
        assert_eq!((comparison.rtf_fast.median, comparison.rtf_lockstep.median), (50.0, 30.0));
    }

    #[test]
    fn cpu_is_given_per_step_and_a_process_missing_from_a_run_is_left_out() {
        // 0.2 CPU s over 2000 steps is 100 µs a step.
        let rounds = vec![
            (run(50.0, &[("world", 0.2), ("laser", 1.0)]), run(25.0, &[("world", 0.4), ("laser", 1.2)])),
            (run(50.0, &[("world", 0.2), ("laser", 1.0)]), run(25.0, &[("world", 0.4)])),
        ];
        let comparison = summarise(rounds);
        let names: Vec<&str> = comparison.processes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["world"]);
        let world = &comparison.processes[0];
        assert!((world.cpu_us_per_step_fast.median - 100.0).abs() < 1e-9);
        assert!((world.cpu_us_per_step_lockstep.median - 200.0).abs() < 1e-9);
        assert!((comparison.all_us_per_step.1 - 200.0).abs() < 1e-9);
    }

    #[test]
    fn each_kind_of_thread_is_given_per_step_when_it_ran_in_every_run() {
        // 2000 steps: 0.1 CPU s is 50 µs a step.
        let with_threads = |rtf: f64, threads: &[(&str, f64)]| {
            let mut report = run(rtf, &[("world", 0.4)]);
            report.processes[0].threads =
                threads.iter().map(|&(name, cpu_s)| crate::bench::ThreadReport { name: name.into(), cpu_s }).collect();
            report
        };
        let rounds = vec![
            (
                with_threads(50.0, &[("net", 0.1), ("flotilla-world", 0.2)]),
                with_threads(25.0, &[("net", 0.3), ("flotilla-world", 0.2), ("tx", 0.1)]),
            ),
            (
                with_threads(50.0, &[("net", 0.1), ("flotilla-world", 0.2)]),
                with_threads(25.0, &[("net", 0.3), ("flotilla-world", 0.2)]),
            ),
        ];
        let world = &summarise(rounds).processes[0];
        let threads: Vec<(&str, f64, f64)> = world
            .threads
            .iter()
            .map(|t| (t.name.as_str(), t.cpu_us_per_step_fast.median, t.cpu_us_per_step_lockstep.median))
            .collect();
        // `tx` ran in one lockstep run only; `net` is the busiest in lockstep.
        assert_eq!(threads.len(), 2);
        assert_eq!(threads[0].0, "net");
        assert!((threads[0].1 - 50.0).abs() < 1e-9 && (threads[0].2 - 150.0).abs() < 1e-9);
        assert_eq!(threads[1].0, "flotilla-world");
    }
}
