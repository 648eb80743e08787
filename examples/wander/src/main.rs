//! `flotilla-wander`: a tiny reactive controller, written like any user
//! program would be — it reads each robot's `scan` (CDR LaserScan) and
//! publishes its `cmd_vel` (CDR Twist) over Zenoh. It drives forward, steers
//! towards open space and turns on the spot when something is close ahead.
//!
//! It finds the robots by asking the world for its description: every model
//! with both a DiffDrive and a Laser plugin.

use std::time::Duration;

use clap::Parser;
use flotilla_node_kit::args::{open_session, shutdown_signal, NodeArgs, Role};
use flotilla_node_kit::client::wait_for_description;
use flotilla_protocol::names::resolve_topic;
use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
use flotilla_protocol::plugins::laser::LaserConfig;
use flotilla_protocol::plugins::PluginConfig;
use flotilla_protocol::ros::{self, geometry_msgs::Twist, sensor_msgs::LaserScan};
use flotilla_protocol::Keys;

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
#[derive(Debug, Default, Clone, Copy)]
struct Wander {
    /// +1 or −1 while turning away from an obstacle, 0 when cruising.
    turning: f64,
}

impl Wander {
    /// The command for a scan.
    fn command(&mut self, scan: &LaserScan, top_speed: f64) -> (f64, f64) {
        let (mut front, mut left, mut right) = (f64::INFINITY, 0.0, 0.0);
        let (mut n_left, mut n_right) = (0.0, 0.0);
        for (i, &r) in scan.ranges.iter().enumerate() {
            let range = if r.is_finite() { f64::from(r) } else { f64::from(scan.range_max) };
            let angle = f64::from(scan.angle_min) + i as f64 * f64::from(scan.angle_increment);
            if angle.abs() < 0.6 {
                front = front.min(range);
            }
            if (0.3..1.6).contains(&angle) {
                left += range;
                n_left += 1.0;
            } else if (-1.6..-0.3).contains(&angle) {
                right += range;
                n_right += 1.0;
            }
        }
        let (left, right) = (left / f64::max(n_left, 1.0), right / f64::max(n_right, 1.0));
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
            let publisher = session.declare_publisher(cmd_key.clone()).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            let policy = std::sync::Mutex::new(Wander::default());
            let speed = args.speed;
            let subscriber = session
                .declare_subscriber(scan_key.clone())
                .callback(move |sample| {
                    let Ok(scan) = ros::decode::<LaserScan>(&sample.payload().to_bytes()) else { return };
                    let (v, w) = policy.lock().unwrap_or_else(|e| e.into_inner()).command(&scan, speed);
                    let mut twist = Twist::default();
                    twist.linear.x = v;
                    twist.angular.z = w;
                    use zenoh::Wait;
                    let _ = publisher.put(ros::encode(&twist)).wait();
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
        drop(subscribers);
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
}
