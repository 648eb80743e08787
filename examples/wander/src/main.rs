//! `flotilla-wander`: a tiny reactive controller, written like any user
//! program would be — it reads each robot's `scan` (CDR LaserScan) and
//! publishes its `cmd_vel` (CDR Twist) over Zenoh. It drives forward, steers
//! towards open space and turns on the spot when something is close ahead.
//!
//! It finds the robots by asking the world for its description: every model
//! with both a DiffDrive and a Laser plugin.

use std::ops::Range;
use std::time::Duration;

use clap::Parser;
use flotilla_messages::{geometry_msgs::Twist, sensor_msgs::LaserScan};
use flotilla_node_kit::args::{open_session, shutdown_signal, NodeArgs, Role};
use flotilla_node_kit::client::wait_for_description;
use flotilla_plugins::diff_drive::DiffDriveConfig;
use flotilla_plugins::laser::LaserConfig;
use flotilla_plugins::PluginConfig;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::Keys;

/// Drives every robot of a running world away from obstacles.
#[derive(Parser)]
#[command(name = "flotilla-wander", version)]
struct Args {
    /// Top forward speed, m/s.
    #[arg(long, default_value_t = 0.8)]
    speed: f64,
    /// Prefix of every ROS-facing key (must match the world's).
    #[arg(long, default_value = "")]
    ros_prefix: String,
    #[command(flatten)]
    node: NodeArgs,
}

/// The wander policy for one robot, free of Zenoh.
#[derive(Debug, Default, Clone)]
struct Wander {
    /// +1 or −1 while turning away from an obstacle, 0 when cruising.
    turning: f64,
    /// Which beams look ahead, left and right, for the scan geometry they
    /// were worked out for.
    sectors: Option<Sectors>,
}

/// The beams of a scan geometry in each sector the policy looks at: worked
/// out once per geometry, not at every beam of every scan (with 1000 robots
/// that per-beam test was a third of this program's CPU). A beam's angle
/// grows (or shrinks) with its index, so each sector is one run of beams.
#[derive(Debug, Clone, PartialEq)]
struct Sectors {
    /// (angle_min, angle_increment, beams) they hold for.
    geometry: (f32, f32, usize),
    /// Within 0.6 rad of straight ahead.
    front: Range<usize>,
    /// 0.3 to 1.6 rad to the left.
    left: Range<usize>,
    /// 0.3 to 1.6 rad to the right.
    right: Range<usize>,
}

impl Sectors {
    /// The geometry of `scan` that its sectors depend on.
    fn geometry_of(scan: &LaserScan) -> (f32, f32, usize) {
        (scan.angle_min, scan.angle_increment, scan.ranges.len())
    }

    fn of(scan: &LaserScan) -> Sectors {
        let angle = |i: usize| f64::from(scan.angle_min) + i as f64 * f64::from(scan.angle_increment);
        let beams_where = |inside: &dyn Fn(f64) -> bool| {
            let mut beams = (0..scan.ranges.len()).filter(|&i| inside(angle(i)));
            match beams.next() {
                Some(first) => first..beams.last().unwrap_or(first) + 1,
                None => 0..0,
            }
        };
        Sectors {
            geometry: Sectors::geometry_of(scan),
            front: beams_where(&|a| a.abs() < 0.6),
            left: beams_where(&|a| (0.3..1.6).contains(&a)),
            right: beams_where(&|a| (-1.6..-0.3).contains(&a)),
        }
    }
}

impl Wander {
    /// The command for a scan.
    fn command(&mut self, scan: &LaserScan, top_speed: f64) -> (f64, f64) {
        if self.sectors.as_ref().is_none_or(|s| s.geometry != Sectors::geometry_of(scan)) {
            self.sectors = Some(Sectors::of(scan));
        }
        let sectors = self.sectors.as_ref().expect("worked out just above");
        let range_max = f64::from(scan.range_max);
        let ranges = |beams: &Range<usize>| {
            scan.ranges[beams.clone()].iter().map(move |&r| if r.is_finite() { f64::from(r) } else { range_max })
        };
        let front = ranges(&sectors.front).fold(f64::INFINITY, f64::min);
        let mean = |beams: &Range<usize>| ranges(beams).sum::<f64>() / f64::max(beams.len() as f64, 1.0);
        let (left, right) = (mean(&sectors.left), mean(&sectors.right));
        if front < 0.9 {
            if self.turning == 0.0 {
                self.turning = if left >= right { 1.0 } else { -1.0 };
            }
            return (0.0, 1.5 * self.turning);
        }
        self.turning = 0.0;
        let speed = (0.35 * front).min(top_speed);
        let steer = (0.8 * (left - right) / (left + right).max(1e-6)).clamp(-1.0, 1.0);
        (speed, steer)
    }
}

fn main() -> anyhow::Result<()> {
    flotilla_node_kit::zenoh_threads::configure();
    flotilla_node_kit::logging::init("warn");
    let args = Args::parse();
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(async move {
        let session = open_session(&args.node.zenoh, Role::Node).await?;
        let description = wait_for_description(&session, &keys, Duration::from_secs(60)).await?;
        let mut subscribers = Vec::new();
        for model in &description.models {
            let topic_of = |plugin_type: &str, key: &str, default: &str| -> Option<String> {
                let plugin = model.plugins.iter().find(|p| p.plugin_type == plugin_type)?;
                let entry: serde_yaml::Value = serde_yaml::from_str(&plugin.params_yaml).ok()?;
                let topic = entry.get(key).and_then(|v| v.as_str()).unwrap_or(default).to_string();
                Some(keys.ros(&resolve_topic(&model.namespace, &topic)))
            };
            let (Some(scan_key), Some(cmd_key)) =
                (topic_of(LaserConfig::TYPE, "topic", "scan"), topic_of(DiffDriveConfig::TYPE, "twist_sub", "cmd_vel"))
            else {
                continue;
            };
            // Lossless: in lockstep, a command dropped on a congested link
            // would change the run.
            let publisher = session
                .declare_publisher(cmd_key.clone())
                .congestion_control(zenoh::qos::CongestionControl::Block)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let policy = std::sync::Mutex::new(Wander::default());
            let speed = args.speed;
            let subscriber = session
                .declare_subscriber(scan_key.clone())
                .callback(move |sample| {
                    let Ok(scan) = flotilla_messages::decode::<LaserScan>(&sample.payload().to_bytes()) else { return };
                    let (v, w) = policy.lock().unwrap_or_else(|e| e.into_inner()).command(&scan, speed);
                    let mut twist = Twist::default();
                    twist.linear.x = v;
                    twist.angular.z = w;
                    use zenoh::Wait;
                    let _ = publisher.put(flotilla_messages::encode(&twist)).wait();
                })
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            eprintln!("wander: driving {} ({scan_key} → {cmd_key})", model.name);
            subscribers.push(subscriber);
        }
        if subscribers.is_empty() {
            anyhow::bail!("no model has both a DiffDrive and a Laser plugin");
        }
        shutdown_signal().await;
        // Undeclared first, so the peers stop sending before the close.
        drop(subscribers);
        tokio::time::sleep(flotilla_node_kit::args::DRAIN).await;
        let _ = session.close().await;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(ranges: Vec<f32>) -> LaserScan {
        let n = ranges.len() as f32;
        LaserScan {
            angle_min: -1.5,
            angle_max: 1.5,
            angle_increment: 3.0 / (n - 1.0),
            range_max: 10.0,
            ranges,
            ..Default::default()
        }
    }

    #[test]
    fn cruises_in_open_space_and_turns_away_from_a_wall() {
        let mut w = Wander::default();
        let (v, _) = w.command(&scan(vec![f32::NAN; 31]), 0.8);
        assert_eq!(v, 0.8);
        let mut close = vec![5.0; 31];
        close[15] = 0.5; // straight ahead
        close[25] = 9.0; // more room on the left
        let (v, omega) = w.command(&scan(close), 0.8);
        assert_eq!(v, 0.0);
        assert!(omega > 0.0);
    }

    #[test]
    fn sectors_follow_the_scan_geometry() {
        let mut w = Wander::default();
        // Open ahead and to the right, a wall close on the left: cruise,
        // steering right.
        let mut ranges = vec![5.0; 31];
        ranges[22..].fill(0.5); // 0.7 rad and more to the left
        let (v, omega) = w.command(&scan(ranges.clone()), 0.8);
        assert_eq!(v, 0.8);
        assert!(omega < 0.0);
        // The same ranges over a narrower fan: the close beams are now
        // straight ahead and the policy turns on the spot.
        let mut narrow = scan(ranges);
        narrow.angle_min = -0.3;
        narrow.angle_increment = 0.6 / 30.0;
        let (v, _) = w.command(&narrow, 0.8);
        assert_eq!(v, 0.0);
    }

    #[test]
    fn each_sector_is_exactly_the_beams_whose_angle_is_in_it() {
        for (angle_min, increment, n) in
            [(-2.356, 0.00436, 1081), (2.356, -0.00436, 1081), (0.1, 0.01, 50), (2.0, 0.1, 5)]
        {
            let scan = LaserScan { angle_min, angle_increment: increment, ranges: vec![1.0; n], ..Default::default() };
            let sectors = Sectors::of(&scan);
            for i in 0..n {
                let angle = f64::from(angle_min) + i as f64 * f64::from(increment);
                assert_eq!(sectors.front.contains(&i), angle.abs() < 0.6, "beam {i} at {angle} rad");
                assert_eq!(sectors.left.contains(&i), (0.3..1.6).contains(&angle), "beam {i} at {angle} rad");
                assert_eq!(sectors.right.contains(&i), (-1.6..-0.3).contains(&angle), "beam {i} at {angle} rad");
            }
        }
    }
}
