//! `visualization_msgs`: what rviz2 draws (the crowd's people).

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Duration;
use super::geometry_msgs::{Point, Pose, Vector3};
use super::sensor_msgs::CompressedImage;
use super::std_msgs::{ColorRGBA, Header};

/// `visualization_msgs/msg/Marker`: one shape for rviz2 to draw.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Marker {
    /// Stamp and frame of `pose`.
    pub header: Header,
    /// Namespace: with `id`, what the marker replaces.
    pub ns: String,
    /// Id within `ns`.
    pub id: i32,
    /// Shape (`Marker::CYLINDER`, …).
    #[serde(rename = "type")]
    pub marker_type: i32,
    /// Add/modify, delete, or delete all.
    pub action: i32,
    /// Pose of the shape.
    pub pose: Pose,
    /// Size, m (for an arrow: length, width, height).
    pub scale: Vector3,
    /// Colour.
    pub color: ColorRGBA,
    /// How long rviz2 keeps it without an update (0: forever).
    pub lifetime: Duration,
    /// Redraw in its frame as the frame moves.
    pub frame_locked: bool,
    /// Points of a line, list or points marker.
    pub points: Vec<Point>,
    /// Per-point colours.
    pub colors: Vec<ColorRGBA>,
    /// Texture resource (for a mesh).
    pub texture_resource: String,
    /// Texture image.
    pub texture: CompressedImage,
    /// Texture coordinates.
    pub uv_coordinates: Vec<UVCoordinate>,
    /// Text of a text marker.
    pub text: String,
    /// Mesh resource.
    pub mesh_resource: String,
    /// Mesh file sent inline.
    pub mesh_file: MeshFile,
    /// Use the mesh's own materials.
    pub mesh_use_embedded_materials: bool,
}

impl Marker {
    /// An arrow along the pose's x axis, `scale.x` long.
    pub const ARROW: i32 = 0;
    /// A box of `scale` (m).
    pub const CUBE: i32 = 1;
    /// An ellipsoid of diameters `scale` (m).
    pub const SPHERE: i32 = 2;
    /// A cylinder of diameters `scale.x`, `scale.y` and height `scale.z` (m).
    pub const CYLINDER: i32 = 3;
    /// A line through `points`.
    pub const LINE_STRIP: i32 = 4;
    /// Lines between pairs of `points`.
    pub const LINE_LIST: i32 = 5;
    /// A box at each of `points`.
    pub const CUBE_LIST: i32 = 6;
    /// A sphere at each of `points`.
    pub const SPHERE_LIST: i32 = 7;
    /// A square at each of `points`.
    pub const POINTS: i32 = 8;
    /// `text` facing the viewer, `scale.z` high.
    pub const TEXT_VIEW_FACING: i32 = 9;
    /// The mesh at `mesh_resource`.
    pub const MESH_RESOURCE: i32 = 10;
    /// Triangles from triples of `points`.
    pub const TRIANGLE_LIST: i32 = 11;
    /// Arrows between consecutive `points`.
    pub const ARROW_STRIP: i32 = 12;
    /// Add, or modify the marker of the same namespace and id.
    pub const ADD: i32 = 0;
    /// The same as [`Marker::ADD`].
    pub const MODIFY: i32 = 0;
    /// Delete the marker of the same namespace and id.
    pub const DELETE: i32 = 2;
    /// Delete every marker.
    pub const DELETEALL: i32 = 3;
}

impl super::RosMessage for Marker {
    const TYPE_NAME: &'static str = "visualization_msgs/msg/Marker";
}

/// `visualization_msgs/msg/MarkerArray`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MarkerArray {
    /// The markers.
    pub markers: Vec<Marker>,
}

impl super::RosMessage for MarkerArray {
    const TYPE_NAME: &'static str = "visualization_msgs/msg/MarkerArray";
}

/// `visualization_msgs/msg/UVCoordinate`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct UVCoordinate {
    /// Across the texture, 0..1.
    pub u: f32,
    /// Down the texture, 0..1.
    pub v: f32,
}

/// `visualization_msgs/msg/MeshFile`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MeshFile {
    /// Its name (for its extension).
    pub filename: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, encode};

    #[test]
    fn a_marker_array_goes_through_cdr_and_back() {
        let mut marker = Marker { ns: "people".into(), id: 3, marker_type: Marker::CYLINDER, ..Marker::default() };
        marker.pose.position.x = 1.5;
        marker.color = ColorRGBA { r: 1.0, g: 0.5, b: 0.0, a: 1.0 };
        marker.text = "alice".into();
        let array = MarkerArray { markers: vec![marker.clone(), Marker { id: 4, ..marker }] };
        let bytes = encode(&array);
        assert_eq!(decode::<MarkerArray>(&bytes).unwrap(), array);
        // CDR little-endian header, then the count of markers
        assert_eq!(&bytes[..8], &[0, 1, 0, 0, 2, 0, 0, 0]);
    }
}
