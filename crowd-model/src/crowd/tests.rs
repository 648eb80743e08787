use std::path::Path;

use flotilla_plugins::pedestrian::PedestrianConfig;
use flotilla_plugins::PluginContext;

use super::*;

fn config(yaml: &str) -> PedestrianConfig {
    let layers = ["walls".to_string()];
    let ctx = PluginContext::single_body(Path::new("person.model.yaml"), "person", "base", &layers);
    let entry = serde_yaml::from_str(&format!("{{body: base, {yaml}}}")).unwrap();
    PedestrianConfig::parse(&entry, "walk", &ctx).unwrap()
}

fn setup(yaml: &str) -> AgentSetup {
    AgentSetup { config: config(yaml), seed: 7, walls: 0 }
}

/// Walks the crowd for `seconds` at its agents' 50 Hz, moving each agent
/// by its velocity: the positions at the end, and the least distance
/// between any two agents' centres on the way.
fn walk(crowd: &mut Crowd, mut positions: Vec<Vec2>, robots: &[Robot], seconds: f64) -> (Vec<Vec2>, f64) {
    let period_ns = 20_000_000;
    let mut velocities = vec![Vec2::ZERO; positions.len()];
    let mut closest = f64::INFINITY;
    let mut moves = Vec::new();
    for k in 0..(seconds * 50.0) as u64 {
        moves.clear();
        let headings = vec![0.0; positions.len()];
        let snapshot = Snapshot { positions: &positions, velocities: &velocities, headings: &headings, robots };
        crowd.update(k * period_ns, snapshot, |_| true, &mut moves);
        for m in &moves {
            velocities[m.agent] = m.velocity;
            positions[m.agent] += m.velocity * 0.02;
        }
        for (i, a) in positions.iter().enumerate() {
            for b in &positions[i + 1..] {
                closest = closest.min((*a - *b).norm());
            }
        }
    }
    (positions, closest)
}

fn corridor() -> WallGrid {
    // a corridor 3 m wide along x
    WallGrid::new(
        vec![(Vec2::new(-20.0, -1.5), Vec2::new(20.0, -1.5)), (Vec2::new(-20.0, 1.5), Vec2::new(20.0, 1.5))],
        3.0,
    )
}

#[test]
fn two_people_walking_at_each_other_pass_without_touching() {
    let east = setup("waypoints: [[10, 0]], cyclic: false");
    let west = setup("waypoints: [[-10, 0]], cyclic: false");
    let mut crowd = Crowd::new(vec![east, west], vec![corridor()]);
    let start = vec![Vec2::new(-5.0, 0.05), Vec2::new(5.0, -0.05)];
    let (end, closest) = walk(&mut crowd, start, &[], 16.0);
    assert!(closest > 0.5, "their bodies (0.25 m each) touched: {closest} m apart");
    assert!((end[0] - Vec2::new(10.0, 0.0)).norm() < 0.6, "east ended at {:?}", end[0]);
    assert!((end[1] - Vec2::new(-10.0, 0.0)).norm() < 0.6, "west ended at {:?}", end[1]);
}

#[test]
fn a_walker_keeps_off_the_walls() {
    let mut crowd = Crowd::new(vec![setup("waypoints: [[10, 1.45]], cyclic: false")], vec![corridor()]);
    let (end, _) = walk(&mut crowd, vec![Vec2::new(-10.0, 1.0)], &[], 15.0);
    // The waypoint is against the wall: the walker stops short of it.
    assert!(end[0].y < 1.5 - 0.25, "walked into the wall: {:?}", end[0]);
}

#[test]
fn the_order_of_the_agents_changes_nothing() {
    let configs = ["waypoints: [[10, 0]]", "waypoints: [[-10, 1]]", "waypoints: [[0, -10]], noise: 0.3"];
    let starts = [Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.2), Vec2::new(0.0, 1.0)];
    let velocities = [Vec2::new(0.5, 0.0), Vec2::new(-0.5, 0.1), Vec2::ZERO];
    let moves_in = |order: [usize; 3]| {
        let setups = order.iter().map(|&i| AgentSetup { seed: i as u64, ..setup(configs[i]) }).collect();
        let mut crowd = Crowd::new(setups, vec![corridor()]);
        let positions: Vec<Vec2> = order.iter().map(|&i| starts[i]).collect();
        let velocities: Vec<Vec2> = order.iter().map(|&i| velocities[i]).collect();
        let mut moves = Vec::new();
        let snapshot = Snapshot { positions: &positions, velocities: &velocities, headings: &[0.0; 3], robots: &[] };
        crowd.update(0, snapshot, |_| true, &mut moves);
        let mut by_agent: Vec<(usize, Move)> = moves.iter().map(|m| (order[m.agent], *m)).collect();
        by_agent.sort_by_key(|(i, _)| *i);
        by_agent.into_iter().map(|(_, m)| (m.velocity, m.heading_rad)).collect::<Vec<_>>()
    };
    assert_eq!(moves_in([0, 1, 2]), moves_in([2, 0, 1]));
    assert_eq!(moves_in([0, 1, 2]), moves_in([1, 2, 0]));
}

#[test]
fn people_step_aside_for_a_robot_unless_they_ignore_robots_but_always_for_things() {
    let robot = Robot { position: Vec2::new(0.0, 0.0), velocity: Vec2::ZERO, radius_m: 0.4, is_robot: true };
    for (sees, must_keep_off) in [(true, true), (false, false)] {
        let walker = setup(&format!("waypoints: [[8, 0]], cyclic: false, sees_robots: {sees}"));
        let mut crowd = Crowd::new(vec![walker], vec![corridor()]);
        let mut positions = vec![Vec2::new(-6.0, 0.05)];
        let mut velocities = vec![Vec2::ZERO];
        let mut closest = f64::INFINITY;
        let mut moves = Vec::new();
        for k in 0..600 {
            moves.clear();
            let snapshot =
                Snapshot { positions: &positions, velocities: &velocities, headings: &[0.0], robots: &[robot] };
            crowd.update(k * 20_000_000, snapshot, |_| true, &mut moves);
            velocities[0] = moves[0].velocity;
            positions[0] += moves[0].velocity * 0.02;
            closest = closest.min(positions[0].norm());
        }
        assert_eq!(closest > 0.65, must_keep_off, "sees_robots: {sees}, closest {closest} m");
    }
    // a crate is no robot: everyone keeps off it
    let crate_box = Robot { is_robot: false, ..robot };
    let walker = setup("waypoints: [[8, 0]], cyclic: false, sees_robots: false");
    let mut crowd = Crowd::new(vec![walker], vec![corridor()]);
    let (mut position, mut velocity, mut closest) = (Vec2::new(-6.0, 0.05), Vec2::ZERO, f64::INFINITY);
    let mut moves = Vec::new();
    for k in 0..600 {
        moves.clear();
        let snapshot =
            Snapshot { positions: &[position], velocities: &[velocity], headings: &[0.0], robots: &[crate_box] };
        crowd.update(k * 20_000_000, snapshot, |_| true, &mut moves);
        velocity = moves[0].velocity;
        position += velocity * 0.02;
        closest = closest.min(position.norm());
    }
    assert!(closest > 0.65, "walked into the crate: {closest} m");
}

#[test]
fn a_group_keeps_together_where_strangers_drift_apart() {
    // The farthest any of three walkers strays from their centre over 30 s
    // after the first 10, walking 10 m east and back.
    let spread = |member: &str| {
        let mut crowd = Crowd::new(vec![setup(member), setup(member), setup(member)], vec![corridor()]);
        let mut positions = vec![Vec2::new(-8.0, 0.0), Vec2::new(-8.0, 0.8), Vec2::new(-3.0, -0.8)];
        let mut spread: f64 = 0.0;
        for second in 0..30 {
            positions = walk(&mut crowd, positions, &[], 1.0).0;
            let centre = (positions[0] + positions[1] + positions[2]) * (1.0 / 3.0);
            if second >= 10 {
                spread = positions.iter().map(|p| (*p - centre).norm()).fold(spread, f64::max);
            }
        }
        spread
    };
    let family = spread("waypoints: [[10, 0], [-10, 0]], group: family");
    let strangers = spread("waypoints: [[10, 0], [-10, 0]]");
    assert!(family < 1.5, "the family spread {family} m");
    assert!(strangers > 3.0, "the strangers kept within {strangers} m");
}

#[test]
fn a_scripted_agent_keeps_its_speed_and_path_through_a_crowd() {
    let forklift = setup("behaviour: scripted, desired_speed: 1.0, waypoints: [[10, 0]], cyclic: false");
    let bystander = setup("waypoints: [[0, 0.3]]");
    let mut crowd = Crowd::new(vec![forklift, bystander], vec![corridor()]);
    let mut moves = Vec::new();
    let positions = [Vec2::new(-0.5, 0.0), Vec2::new(0.0, 0.3)];
    let snapshot = Snapshot { positions: &positions, velocities: &[Vec2::ZERO; 2], headings: &[0.0; 2], robots: &[] };
    crowd.update(0, snapshot, |i| i == 0, &mut moves);
    assert_eq!(moves, [Move::walk(0, Vec2::new(1.0, 0.0), Some(0.0))]);
    // and lands on its waypoint rather than overshoot it
    let positions = [Vec2::new(9.99, 0.0), Vec2::new(0.0, 0.3)];
    let snapshot = Snapshot { positions: &positions, velocities: &[Vec2::ZERO; 2], headings: &[0.0; 2], robots: &[] };
    moves.clear();
    crowd.update(20_000_000, snapshot, |i| i == 0, &mut moves);
    assert!((moves[0].velocity.x * 0.02 - 0.01).abs() < 1e-12, "{moves:?}");
    // then, facing back along its way, turns on the spot before it goes
    let forklift = setup("behaviour: scripted, desired_speed: 1.0, waypoints: [[10, 0], [0, 0]]");
    let mut crowd = Crowd::new(vec![forklift], vec![]);
    let positions = [Vec2::new(10.0, 0.0)];
    moves.clear();
    let snapshot = Snapshot { positions: &positions, velocities: &[Vec2::ZERO], headings: &[0.0], robots: &[] };
    crowd.update(0, snapshot, |_| true, &mut moves);
    assert_eq!(moves, [Move::walk(0, Vec2::ZERO, Some(std::f64::consts::PI))]);
}

#[test]
fn random_pushes_repeat_with_the_seed() {
    let run = |seed: u64| {
        let mut crowd = Crowd::new(vec![AgentSetup { seed, ..setup("waypoints: [[10, 0]], noise: 0.5") }], vec![]);
        walk(&mut crowd, vec![Vec2::ZERO], &[], 2.0).0
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn an_agent_from_a_source_comes_on_walks_goes_off_and_comes_back_at_its_next_slot() {
    let walker = setup("waypoints: [[5, 0]], cyclic: false, release: {at: [0, 0, 0.5], first: 1.0, every: 4.0}");
    let mut crowd = Crowd::new(vec![walker], vec![]);
    // placed on stage by its model: it goes off at once
    let mut position = Vec2::new(2.0, 2.0);
    let mut velocity = Vec2::ZERO;
    let mut seen = Vec::new();
    let mut moves = Vec::new();
    for k in 0..500u64 {
        // 50 Hz updates, each move held for 20 ms as the world holds it
        let now_ns = k * 20_000_000;
        moves.clear();
        let snapshot = Snapshot { positions: &[position], velocities: &[velocity], headings: &[0.0], robots: &[] };
        crowd.update(now_ns, snapshot, |_| true, &mut moves);
        if let Some(m) = moves.first() {
            velocity = match m.arrive {
                Some(at) => (at - position) * (1.0 / 0.02),
                None => m.velocity,
            };
        }
        position += velocity * 0.02;
        seen.push((now_ns as f64 * 1e-9, position));
    }
    let on_stage = |t: f64| {
        seen.iter().find(|(s, _)| (s - t).abs() < 1e-9).unwrap_or_else(|| panic!("{t}: {:?}", &seen[..3])).1.y > -1.0
    };
    assert!(!on_stage(0.0) && !on_stage(0.5), "offstage at once, until its first release");
    assert!(on_stage(1.02) && on_stage(3.0), "on stage from 1 s");
    let left = seen.iter().skip(60).find(|(_, p)| p.y < -1.0).expect("it went off after its walk").0;
    assert!((4.0..5.0).contains(&left), "5 m at ~1.3 m/s from 1 s: off at {left} s");
    assert!(!on_stage(4.98));
    assert!(on_stage(5.02), "back at its next slot, 1 + 4 s");
    // and it jumped: no velocity above a walk reached anyone's forces
    assert!((seen.iter().find(|(s, _)| (s - 1.02).abs() < 1e-9).unwrap().1 - Vec2::ZERO).norm() < 0.1);
}
