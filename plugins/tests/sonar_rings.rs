//! The ready-made sonar rings (`plugins/src/sonar_rings.rs`) are
//! exactly what `scripts/gen-sonar-rings.py` reads from AMRISim's model file
//! (`../shared/fixtures/amrisim/PioneerRobotModels.world.inc`).

use std::path::Path;
use std::process::Command;

#[test]
fn the_committed_rings_are_what_amrisim_s_model_file_gives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let inc = root.join("../shared/fixtures/amrisim/PioneerRobotModels.world.inc");
    let out = Command::new("python3")
        .arg(root.join("scripts/gen-sonar-rings.py"))
        .arg(&inc)
        .output()
        .expect("python3 runs the generator");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(root.join("plugins/src/sonar_rings.rs")).unwrap();
    assert!(
        generated == committed,
        "plugins/src/sonar_rings.rs is stale: run scripts/gen-sonar-rings.py > plugins/src/sonar_rings.rs"
    );
}
