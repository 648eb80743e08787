//! `flotilla snapshot OUT.png`: the running world drawn into a PNG,
//! headless — walls, bodies at their current poses, and the latest laser
//! hits — for reports, CI artefacts and bug tickets.

mod render;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_node_kit::args::{open_session, NodeArgs, Role};
use flotilla_node_kit::client::fetch_description;
use flotilla_plugins::configured;
use flotilla_plugins::laser::LaserConfig;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::Keys;

pub use render::{default_area, render, View};

/// Arguments of `flotilla snapshot`.
#[derive(clap::Args)]
pub struct SnapshotArgs {
    /// The PNG to write.
    out: PathBuf,
    /// Image size, pixels (the area keeps its aspect, centred).
    #[arg(long, value_name = "WxH", default_value = "800x800", value_parser = parse_size)]
    size: (u32, u32),
    /// The world rectangle drawn, m (default: the walls and bodies, with a margin).
    #[arg(long, num_args = 4, value_names = ["X0", "Y0", "X1", "Y1"], allow_negative_numbers = true)]
    area: Option<Vec<f64>>,
    /// How long to wait for each laser's latest scan, wall seconds (0: draw
    /// no scans; a paused world sends none).
    #[arg(long = "scan-wait", value_name = "SECONDS", default_value_t = 1.0)]
    scan_wait_s: f64,
    #[command(flatten)]
    node: NodeArgs,
}

fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(|| format!("{text:?}: give WIDTHxHEIGHT, e.g. 800x600"))?;
    let parse = |v: &str| v.trim().parse::<u32>().ok().filter(|&v| (1..=16384).contains(&v));
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!("{text:?}: width and height must be whole numbers of pixels in 1..=16384")),
    }
}

/// Runs `flotilla snapshot`.
pub fn run(args: SnapshotArgs) -> anyhow::Result<()> {
    if let Some(area) = &args.area {
        let &[x0, y0, x1, y1] = area.as_slice() else { bail!("--area takes X0 Y0 X1 Y1") };
        if !(area.iter().all(|v| v.is_finite()) && x1 > x0 && y1 > y0) {
            bail!("--area must be finite with X1 > X0 and Y1 > Y0, got {area:?}");
        }
    }
    if !(args.scan_wait_s.is_finite() && args.scan_wait_s >= 0.0) {
        bail!("--scan-wait must be ≥ 0 s, got {}", args.scan_wait_s);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let (description, hits) = runtime.block_on(async {
        let session = open_session(&args.node.zenoh, Role::Node).await?;
        let keys = Keys::new(&args.node.sim);
        let description = fetch_description(&session, &keys, Duration::from_secs(10))
            .await
            .with_context(|| format!("no world of simulation {:?} answered", args.node.sim))?;
        let hits = latest_hits(&session, &keys, &description, Duration::from_secs_f64(args.scan_wait_s)).await?;
        let _ = session.close().await;
        anyhow::Ok((description, hits))
    })?;
    let area = match &args.area {
        Some(a) => [a[0], a[1], a[2], a[3]],
        None => default_area(&description),
    };
    let image = render(&description, &hits, &View { area, size: args.size });
    image.save(&args.out).with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "snapshot: {} ({}×{} px, x {:.2}..{:.2} m, y {:.2}..{:.2} m, {} laser hits)",
        args.out.display(),
        args.size.0,
        args.size.1,
        area[0],
        area[2],
        area[1],
        area[3],
        hits.len()
    );
    Ok(())
}

/// The hits of each laser's next scan within `wait`, in the world frame:
/// the scan read from the laser's mount on its body where the description
/// has the body now.
async fn latest_hits(
    session: &zenoh::Session,
    keys: &Keys,
    description: &flotilla_wire::description::WorldDescription,
    wait: Duration,
) -> anyhow::Result<Vec<[f64; 2]>> {
    let lasers = configured::<LaserConfig>(description, &|_, _| true);
    if lasers.is_empty() || wait.is_zero() {
        return Ok(Vec::new());
    }
    let hits = Arc::new(Mutex::new(Vec::new()));
    let mut subscribers = Vec::new();
    for laser in &lasers {
        let Some(body) = laser.model.bodies.iter().find(|b| b.id == laser.body) else { continue };
        let mount = body.pose.compose(&laser.config.origin);
        let (hits, seen) = (hits.clone(), Arc::new(Mutex::new(false)));
        let key = keys.ros(&resolve_topic(&laser.model.namespace, &laser.config.topic));
        let subscriber = session
            .declare_subscriber(key.clone())
            .callback(move |sample| {
                let Ok(scan) = flotilla_messages::decode::<LaserScan>(&sample.payload().to_bytes()) else { return };
                let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                if *seen {
                    return;
                }
                *seen = true;
                let mut hits = hits.lock().unwrap_or_else(|e| e.into_inner());
                for (i, &range) in scan.ranges.iter().enumerate() {
                    let range = f64::from(range);
                    if !(range.is_finite() && range >= f64::from(scan.range_min) && range < f64::from(scan.range_max)) {
                        continue;
                    }
                    let angle = f64::from(scan.angle_min) + i as f64 * f64::from(scan.angle_increment);
                    hits.push(mount.transform_point([range * angle.cos(), range * angle.sin()]));
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("subscribing to {key}: {e}"))?;
        subscribers.push(subscriber);
    }
    tokio::time::sleep(wait).await;
    drop(subscribers);
    let hits = hits.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(hits)
}
