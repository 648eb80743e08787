//! Flatland line-segment layers: one segment per line, `x1 y1 x2 y2`,
//! multiplied by `scale` and placed at `origin`.

use std::path::Path;

use flotilla_plugins::config::LoadError;
use flotilla_wire::description::Segment;
use flotilla_wire::geometry::Pose2;

/// Reads a line-segment data file. Blank lines are skipped; a line with fewer
/// than four numbers is an error naming its line number (as Flatland's).
pub fn load(path: &Path, scale: f64, origin: Pose2) -> Result<Vec<Segment>, LoadError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    crate::sources::note(path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(path, "", format!("cannot load {}: {e}", path.display())))?;
    let mut segments = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let numbers: Vec<f64> = line.split_whitespace().take(4).map_while(|t| t.parse::<f64>().ok()).collect();
        if numbers.len() < 4 || numbers.iter().any(|n| !n.is_finite()) {
            return Err(LoadError::new(
                path,
                "",
                format!(
                    "cannot read a line segment from line {} of {name}: expected x1 y1 x2 y2, got {:?}",
                    i + 1,
                    line.trim()
                ),
            ));
        }
        let a = origin.transform_point([numbers[0] * scale, numbers[1] * scale]);
        let b = origin.transform_point([numbers[2] * scale, numbers[3] * scale]);
        segments.push(Segment { a, b });
    }
    Ok(segments)
}
