//! AMRISim's Pioneer family as Flotilla models (`configs/pioneer/`): the
//! committed files are what `scripts/gen-pioneer-models.py` reads from
//! AMRISim's model file, and a world with one of each runs and drives.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::nav_msgs::Odometry;

const MODELS: [&str; 8] = ["amigo", "p2at", "p3at", "p3dx", "patrolbot", "peoplebot", "powerbot", "seekur"];

#[test]
fn the_committed_models_are_what_amrisim_s_model_file_gives() {
    let root = common::root();
    let inc = root.join("../shared/fixtures/amrisim/PioneerRobotModels.world.inc");
    let out_dir = std::env::temp_dir().join(format!("flotilla-pioneer-models-{}", std::process::id()));
    let out = Command::new("python3")
        .arg(root.join("scripts/gen-pioneer-models.py"))
        .arg(&inc)
        .arg(&out_dir)
        .output()
        .expect("python3 runs the generator");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for model in MODELS {
        let file = format!("{model}.model.yaml");
        let generated = std::fs::read_to_string(out_dir.join(&file)).unwrap();
        let committed = std::fs::read_to_string(root.join("configs/pioneer").join(&file)).unwrap();
        assert!(generated == committed, "configs/pioneer/{file} is stale: run scripts/gen-pioneer-models.py");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(Path::new(&root.join("configs/pioneer/world.yaml")).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_each_drives_forward() {
    let world = common::config("pioneer/world.yaml");
    let sim = Sim::start("pioneers", &world, &["flotilla-drive", "flotilla-odom"], &[]).await;
    let mut starts = Vec::new();
    for model in MODELS {
        let mut truth = sim.subscribe::<Odometry>(&format!("/{model}/odometry/ground_truth")).await;
        starts.push((model, truth.next(Duration::from_secs(20)).await.pose.pose.position.x, truth));
    }
    // 0.3 m/s forward for each, at 20 Hz as a controller sends it
    let (session, keys) = (sim.session.clone(), sim.keys.clone());
    let commanding = tokio::spawn(async move {
        let mut twist = Twist::default();
        twist.linear.x = 0.3;
        loop {
            for model in MODELS {
                let _ = session.put(keys.ros(&format!("/{model}/cmd_vel")), flotilla_messages::encode(&twist)).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    for (model, x0, truth) in &mut starts {
        let moved = truth.until(Duration::from_secs(20), |o| o.pose.pose.position.x > *x0 + 0.2).await;
        assert!(moved.twist.twist.linear.x > 0.0, "{model} drives forward");
    }
    commanding.abort();
}
