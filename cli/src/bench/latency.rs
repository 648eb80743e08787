//! cmd_vel → odometry latency: the wall time from the Zenoh put of a new
//! command to the first odometry sample whose twist shows it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_messages::geometry_msgs::{Twist, Vector3};
use flotilla_messages::nav_msgs::Odometry;

/// Latency percentiles, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Latency {
    /// Commands measured.
    pub samples: usize,
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Worst, ms.
    pub max_ms: f64,
}

/// The value at quantile `q` (0..=1) of sorted `values` (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

struct Pending {
    speed_mps: f64,
    sent: Instant,
}

/// Where in the step the `i`-th command falls, as a fraction of it: the
/// golden-ratio sequence, so that commands sample every phase evenly. With a
/// period that is a whole number of steps, commands would otherwise all land
/// at the same point of the step, and the figures would depend on where.
pub fn phase(i: usize) -> f64 {
    (i as f64 * 0.618_033_988_749_895).fract()
}

/// Sends `samples` commands alternating between 0 and 0.5 m/s, one every
/// `period` plus a fraction of `step` (see [`phase`]), to `cmd_vel_key`, and
/// times each until `odom_key` shows it.
pub async fn measure(
    session: &zenoh::Session,
    cmd_vel_key: &str,
    odom_key: &str,
    samples: usize,
    period: Duration,
    step: Duration,
) -> anyhow::Result<Latency> {
    const SPEED_MPS: f64 = 0.5;
    const TOLERANCE_MPS: f64 = 1e-6;
    let pending: Arc<Mutex<Option<Pending>>> = Arc::new(Mutex::new(None));
    let measured: Arc<Mutex<Vec<f64>>> = Arc::new(Mutex::new(Vec::with_capacity(samples)));
    let _odometry = {
        let (pending, measured) = (pending.clone(), measured.clone());
        session
            .declare_subscriber(odom_key)
            .callback(move |sample| {
                let now = Instant::now();
                let Ok(odometry) = flotilla_messages::decode::<Odometry>(&sample.payload().to_bytes()) else { return };
                let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(p) = pending.as_ref() {
                    if (odometry.twist.twist.linear.x - p.speed_mps).abs() < TOLERANCE_MPS {
                        let ms = now.duration_since(p.sent).as_secs_f64() * 1e3;
                        measured.lock().unwrap_or_else(|e| e.into_inner()).push(ms);
                        *pending = None;
                    }
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    };
    let publisher = session.declare_publisher(cmd_vel_key.to_string()).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let start = tokio::time::Instant::now();
    for i in 0..samples {
        let due = start + period * (i as u32 + 1) + step.mul_f64(phase(i));
        tokio::time::sleep_until(due).await;
        let speed_mps = if i % 2 == 0 { SPEED_MPS } else { 0.0 };
        let twist = Twist { linear: Vector3 { x: speed_mps, y: 0.0, z: 0.0 }, angular: Vector3::default() };
        let payload = flotilla_messages::encode(&twist);
        *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(Pending { speed_mps, sent: Instant::now() });
        publisher.put(payload).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    tokio::time::sleep(period).await;
    let mut values = measured.lock().unwrap_or_else(|e| e.into_inner()).clone();
    values.sort_by(f64::total_cmp);
    Ok(Latency {
        samples: values.len(),
        p50_ms: quantile(&values, 0.5),
        p99_ms: quantile(&values, 0.99),
        max_ms: values.last().copied().unwrap_or(f64::NAN),
    })
}

#[cfg(test)]
mod tests {
    use super::{phase, quantile};

    #[test]
    fn command_phases_cover_the_step_evenly() {
        let mut tenths = [0; 10];
        for i in 0..200 {
            tenths[(phase(i) * 10.0) as usize] += 1;
        }
        assert!(tenths.iter().all(|&n| (18..=22).contains(&n)), "{tenths:?}");
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
