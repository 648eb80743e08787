//! `flotilla checkpoint save FILE` and `flotilla checkpoint show FILE`: a
//! running world saved to a file (resumed with `flotilla run
//! --from-checkpoint FILE`), and what a checkpoint file says about itself.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use flotilla_node_kit::args::{open_session, NodeArgs, Role};
use flotilla_wire::checkpoint_file;
use flotilla_wire::Keys;

/// What to do with checkpoints.
#[derive(Subcommand)]
pub enum CheckpointCommand {
    /// Save the running world to FILE: every body, spawned model, map, held
    /// command and the sim time (resume with `flotilla run WORLD
    /// --from-checkpoint FILE`).
    Save {
        /// Where to write it (replaced whole).
        file: PathBuf,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Check FILE and print what it says about itself: the Flotilla that
    /// wrote it, its world file, seed, step size and sim time.
    Show {
        /// The checkpoint file.
        file: PathBuf,
    },
}

/// Runs a checkpoint command.
pub fn run(command: CheckpointCommand) -> anyhow::Result<()> {
    match command {
        CheckpointCommand::Save { file, node } => save(&node, &file),
        CheckpointCommand::Show { file } => show(&file),
    }
}

fn save(node: &NodeArgs, file: &Path) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let bytes = runtime.block_on(async {
        let session = open_session(&node.zenoh, Role::Node).await?;
        let bytes =
            flotilla_node_kit::client::fetch_checkpoint(&session, &Keys::new(&node.sim), Duration::from_secs(30)).await;
        let _ = session.close().await;
        anyhow::Ok(bytes?)
    })?;
    // What the world sent is checked as a reader would check the file.
    let (header, _) =
        checkpoint_file::open(&bytes).map_err(|e| anyhow::anyhow!("the world's checkpoint is unusable: {e}"))?;
    checkpoint_file::write_whole(file, &bytes).with_context(|| format!("writing {}", file.display()))?;
    println!(
        "checkpoint: step {} (t = {:.3} s) of {} saved to {} ({} bytes)",
        header.step,
        header.time_s(),
        header.world_file,
        file.display(),
        bytes.len()
    );
    Ok(())
}

/// The checkpoint `flotilla run` resumes its world from, if any: the
/// periodic `--checkpoint` file when it exists, else `--from-checkpoint`;
/// checked against the world it runs (its content, `seed` and step size)
/// before anything starts.
pub fn resumed(
    periodic: Option<&Path>,
    from: Option<&Path>,
    spec: &flotilla_world_file::WorldSpec,
    seed: u64,
) -> anyhow::Result<Option<(PathBuf, checkpoint_file::CheckpointHeader)>> {
    let Some(file) = periodic.filter(|p| p.exists()).or(from) else { return Ok(None) };
    let bytes = std::fs::read(file).with_context(|| format!("reading the checkpoint {}", file.display()))?;
    let (header, _) =
        checkpoint_file::open(&bytes).map_err(|e| anyhow::anyhow!("checkpoint {}: {e}", file.display()))?;
    let step_ns = flotilla_wire::time::step_size_ns(spec.settings.step_size_s).map_err(anyhow::Error::msg)?;
    header
        .matches(&spec.path.display().to_string(), spec.content_digest(), seed, step_ns)
        .map_err(|e| anyhow::anyhow!("checkpoint {}: {e}", file.display()))?;
    Ok(Some((file.to_path_buf(), header)))
}

fn show(file: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let (header, state) = checkpoint_file::open(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    println!("{}: a checkpoint of Flotilla {}", file.display(), header.flotilla_version);
    println!("  world file: {} (content digest {:016x})", header.world_file, header.world_digest);
    println!("  seed: {}", header.seed);
    println!("  step size: {} s", header.step_ns as f64 * 1e-9);
    println!(
        "  saved at: step {} (t = {:.3} s){}",
        header.step,
        header.time_s(),
        if header.paused { ", paused" } else { "" }
    );
    println!("  state: {} bytes", state.len());
    Ok(())
}
