#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]
//! One update of a crowd of 1,000 and 10,000 social-force walkers, at a
//! density of one person per 10 m² in a walled square with rows of
//! shelves, each walking to the far side: the cost of the crowd's 50 Hz
//! update, the figure that sets how many agents a core can walk.

use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flotilla_crowd_model::crowd::{AgentSetup, Crowd, Move, Snapshot};
use flotilla_crowd_model::grid::WallGrid;
use flotilla_crowd_model::vec2::Vec2;
use flotilla_plugins::pedestrian::PedestrianConfig;
use flotilla_plugins::PluginContext;

/// A square room for `agents` at 10 m² each, with shelves 8 m long every
/// 10 m, and the agents on a jittered grid with their velocities.
fn scene(agents: usize) -> (Crowd, Vec<Vec2>, Vec<Vec2>) {
    let side = (agents as f64 * 10.0).sqrt();
    let mut walls = vec![
        (Vec2::new(0.0, 0.0), Vec2::new(side, 0.0)),
        (Vec2::new(side, 0.0), Vec2::new(side, side)),
        (Vec2::new(side, side), Vec2::new(0.0, side)),
        (Vec2::new(0.0, side), Vec2::new(0.0, 0.0)),
    ];
    let mut y = 5.0;
    while y < side {
        let mut x = 1.0;
        while x + 8.0 < side {
            walls.push((Vec2::new(x, y), Vec2::new(x + 8.0, y)));
            x += 10.0;
        }
        y += 10.0;
    }
    let layers = ["floor".to_string()];
    let ctx = PluginContext::single_body(Path::new("bench"), "person", "base", &layers);
    let per_row = (side / 10f64.sqrt()).ceil() as usize;
    let mut setups = Vec::new();
    let mut positions = Vec::new();
    let mut velocities = Vec::new();
    for i in 0..agents {
        let (row, col) = (i / per_row, i % per_row);
        let jitter = ((i * 7919) % 100) as f64 / 100.0;
        let p = Vec2::new((col as f64 + 0.3 + 0.4 * jitter) * 10f64.sqrt(), (row as f64 + 0.5) * 10f64.sqrt());
        let goal = [side - p.x, side - p.y];
        let entry = serde_yaml::from_str(&format!("{{body: base, waypoints: [[{}, {}]]}}", goal[0], goal[1])).unwrap();
        let config = PedestrianConfig::parse(&entry, "walk", &ctx).unwrap();
        setups.push(AgentSetup { config, seed: i as u64, walls: 0 });
        positions.push(p);
        velocities.push((Vec2::new(goal[0], goal[1]) - p).unit() * 1.2);
    }
    (Crowd::new(setups, vec![WallGrid::new(walls, 2.25)]), positions, velocities)
}

fn update(c: &mut Criterion) {
    let mut group = c.benchmark_group("crowd_update");
    for agents in [1_000, 10_000] {
        let (mut crowd, positions, velocities) = scene(agents);
        let mut moves: Vec<Move> = Vec::with_capacity(agents);
        let headings = vec![0.0; agents];
        group.throughput(Throughput::Elements(agents as u64));
        group.bench_with_input(BenchmarkId::from_parameter(agents), &agents, |b, _| {
            let mut now_ns = 0;
            b.iter(|| {
                moves.clear();
                now_ns += 20_000_000;
                let snapshot =
                    Snapshot { positions: &positions, velocities: &velocities, headings: &headings, robots: &[] };
                crowd.update(now_ns, snapshot, |_| true, &mut moves);
                moves.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, update);
criterion_main!(benches);
