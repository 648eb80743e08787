//! Drawing a world into an image, without Zenoh: walls in their layer's
//! colour, every body's footprints at its pose in its colour, and laser
//! hits as dots. Pure, so that tests check pixels of known worlds.

use flotilla_wire::description::{FootprintShape, WorldDescription};
use flotilla_wire::geometry::Pose2;
use image::{Rgb, RgbImage};

/// Background: white paper.
const BACKGROUND: Rgb<u8> = Rgb([255, 255, 255]);
/// Laser hits.
const HIT: Rgb<u8> = Rgb([220, 30, 30]);
/// Margin around the default area, m.
const MARGIN_M: f64 = 0.5;
/// Half the width of a wall line, m (at least one pixel).
const WALL_HALF_WIDTH_M: f64 = 0.025;

/// Which part of the world goes into which image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// x0, y0, x1, y1: the world rectangle shown, m.
    pub area: [f64; 4],
    /// Image width and height, pixels.
    pub size: (u32, u32),
}

impl View {
    /// Pixels per metre: the area fits the image, its aspect kept.
    fn scale(&self) -> f64 {
        let [x0, y0, x1, y1] = self.area;
        (f64::from(self.size.0) / (x1 - x0)).min(f64::from(self.size.1) / (y1 - y0))
    }

    /// The pixel (column, row, fractional) of a world point: the area
    /// centred in the image, y up.
    pub fn pixel_of(&self, [x, y]: [f64; 2]) -> [f64; 2] {
        let [x0, y0, x1, y1] = self.area;
        let s = self.scale();
        let (w, h) = (f64::from(self.size.0), f64::from(self.size.1));
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        [w / 2.0 + (x - cx) * s, h / 2.0 - (y - cy) * s]
    }

    /// The world point at the centre of a pixel.
    fn world_at(&self, col: u32, row: u32) -> [f64; 2] {
        let [x0, y0, x1, y1] = self.area;
        let s = self.scale();
        let (w, h) = (f64::from(self.size.0), f64::from(self.size.1));
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        [cx + (f64::from(col) + 0.5 - w / 2.0) / s, cy - (f64::from(row) + 0.5 - h / 2.0) / s]
    }
}

/// Bodies farther than this from the walls' box are offstage (a crowd's
/// people waiting to come on, 10 km away), m: left out of the default area.
const OFFSTAGE_FROM_WALLS_M: f64 = 1_000.0;

/// The walls and bodies of `description` with a margin: what a snapshot
/// shows unless told otherwise.
pub fn default_area(description: &WorldDescription) -> [f64; 4] {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    let take = |lo: &mut [f64; 2], hi: &mut [f64; 2], [x, y]: [f64; 2], r: f64| {
        *lo = [lo[0].min(x - r), lo[1].min(y - r)];
        *hi = [hi[0].max(x + r), hi[1].max(y + r)];
    };
    for segment in description.layers.iter().flat_map(|l| l.all_walls()) {
        take(&mut lo, &mut hi, segment.a, 0.0);
        take(&mut lo, &mut hi, segment.b, 0.0);
    }
    let (walls_lo, walls_hi) = (lo, hi);
    let on_stage = |x: f64, y: f64| {
        !walls_lo[0].is_finite()
            || (x > walls_lo[0] - OFFSTAGE_FROM_WALLS_M
                && x < walls_hi[0] + OFFSTAGE_FROM_WALLS_M
                && y > walls_lo[1] - OFFSTAGE_FROM_WALLS_M
                && y < walls_hi[1] + OFFSTAGE_FROM_WALLS_M)
    };
    for body in description.models.iter().flat_map(|m| &m.bodies) {
        if on_stage(body.pose.x_m, body.pose.y_m) {
            take(&mut lo, &mut hi, [body.pose.x_m, body.pose.y_m], 1.0);
        }
    }
    if !(lo[0].is_finite() && lo[1].is_finite()) {
        return [-5.0, -5.0, 5.0, 5.0];
    }
    [lo[0] - MARGIN_M, lo[1] - MARGIN_M, hi[0] + MARGIN_M, hi[1] + MARGIN_M]
}

/// An RGBA colour of a world file (0..1) as a pixel over white; colours
/// too light to see on white (Flatland's defaults are white) are darkened.
fn paint(rgba: [f64; 4]) -> Rgb<u8> {
    let [r, g, b, a] = rgba.map(|v| if v.is_finite() { v.clamp(0.0, 1.0) } else { 1.0 });
    let luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let shade = if luminance > 0.8 { 0.35 } else { 1.0 };
    // Over white, with at least half opacity so that faint bodies show.
    let a = a.max(0.5);
    let over_white = |c: f64| ((c * shade * a + (1.0 - a)) * 255.0).round() as u8;
    Rgb([over_white(r), over_white(g), over_white(b)])
}

/// Draws `description` (bodies at their description poses, which a
/// running world's description holds as current) and the laser hits
/// `hits` (world points) into a new image.
pub fn render(description: &WorldDescription, hits: &[[f64; 2]], view: &View) -> RgbImage {
    let mut image = RgbImage::from_pixel(view.size.0, view.size.1, BACKGROUND);
    for model in &description.models {
        for body in &model.bodies {
            let color = paint(body.color);
            for footprint in body.footprints.iter().filter(|f| !f.sensor) {
                fill(&mut image, view, body.pose, &footprint.shape, color);
            }
        }
    }
    let half_width_px = (WALL_HALF_WIDTH_M * view.scale()).max(0.5);
    for layer in &description.layers {
        let color = paint(layer.color);
        for segment in layer.all_walls() {
            line(&mut image, view.pixel_of(segment.a), view.pixel_of(segment.b), half_width_px, color);
        }
    }
    for &hit in hits {
        let [c, r] = view.pixel_of(hit);
        dot(&mut image, c, r, 1.5, HIT);
    }
    image
}

/// Fills a footprint of a body at `pose`.
fn fill(image: &mut RgbImage, view: &View, pose: Pose2, shape: &FootprintShape, color: Rgb<u8>) {
    let world_points: Vec<[f64; 2]> = match shape {
        FootprintShape::Circle { center, radius } => {
            let c = pose.transform_point(*center);
            vec![[c[0] - radius, c[1] - radius], [c[0] + radius, c[1] + radius]]
        }
        FootprintShape::Polygon { points } => points.iter().map(|p| pose.transform_point(*p)).collect(),
    };
    let pixels: Vec<[f64; 2]> = world_points.iter().map(|p| view.pixel_of(*p)).collect();
    let (c0, c1) = span(pixels.iter().map(|p| p[0]), image.width());
    let (r0, r1) = span(pixels.iter().map(|p| p[1]), image.height());
    for row in r0..r1 {
        for col in c0..c1 {
            let p = view.world_at(col, row);
            if inside(pose, shape, p) {
                image.put_pixel(col, row, color);
            }
        }
    }
}

/// The pixel range (clamped to the image) covering `values`.
fn span(values: impl Iterator<Item = f64>, limit: u32) -> (u32, u32) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let clamp = |v: f64| v.clamp(0.0, f64::from(limit)) as u32;
    (clamp(lo.floor()), clamp(hi.ceil() + 1.0))
}

/// Whether world point `p` is inside a footprint of a body at `pose`.
fn inside(pose: Pose2, shape: &FootprintShape, p: [f64; 2]) -> bool {
    let local = pose.inverse().transform_point(p);
    match shape {
        FootprintShape::Circle { center, radius } => (local[0] - center[0]).hypot(local[1] - center[1]) <= *radius,
        // The loader keeps polygons convex-hull-compatible (Box2D takes the
        // hull): inside when on one side of every edge.
        FootprintShape::Polygon { points } => {
            let n = points.len();
            let side = |i: usize| {
                let (a, b) = (points[i], points[(i + 1) % n]);
                (b[0] - a[0]) * (local[1] - a[1]) - (b[1] - a[1]) * (local[0] - a[0])
            };
            (0..n).all(|i| side(i) >= 0.0) || (0..n).all(|i| side(i) <= 0.0)
        }
    }
}

/// A thick line between two pixel positions.
fn line(image: &mut RgbImage, a: [f64; 2], b: [f64; 2], half_width_px: f64, color: Rgb<u8>) {
    let length = (b[0] - a[0]).hypot(b[1] - a[1]);
    let steps = (length * 2.0).ceil().max(1.0) as usize;
    for k in 0..=steps {
        let t = k as f64 / steps as f64;
        dot(image, a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, half_width_px, color);
    }
}

/// A filled square of half-width `r` pixels around a pixel position.
fn dot(image: &mut RgbImage, col: f64, row: f64, r: f64, color: Rgb<u8>) {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let (c0, c1) = ((col - r).floor().max(0.0), (col + r).ceil().min(w));
    let (r0, r1) = ((row - r).floor().max(0.0), (row + r).ceil().min(h));
    let mut y = r0;
    while y < r1 {
        let mut x = c0;
        while x < c1 {
            image.put_pixel(x as u32, y as u32, color);
            x += 1.0;
        }
        y += 1.0;
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn room() -> WorldDescription {
        let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        flotilla_world_file::load_world(&world).unwrap().initial_description().unwrap()
    }

    /// The room (walls on x = 0, x = 10, y = 0, y = 10; robot of 0.2 m at
    /// (5, 5)) in 200 × 200 pixels of 12 × 12 m.
    fn view() -> View {
        View { area: [-1.0, -1.0, 11.0, 11.0], size: (200, 200) }
    }

    fn at(image: &RgbImage, view: &View, p: [f64; 2]) -> Rgb<u8> {
        let [c, r] = view.pixel_of(p);
        *image.get_pixel(c as u32, r as u32)
    }

    #[test]
    fn walls_bodies_and_hits_land_on_their_pixels() {
        let (description, view) = (room(), view());
        let image = render(&description, &[[10.0, 7.0]], &view);
        let wall = paint(description.layers[0].color);
        for p in [[0.0, 5.0], [10.0, 2.0], [3.0, 0.0], [7.0, 10.0]] {
            assert_eq!(at(&image, &view, p), wall, "the wall at {p:?}");
        }
        let robot = paint(description.models[0].bodies[0].color);
        assert_eq!(at(&image, &view, [5.0, 5.0]), robot, "the robot's centre");
        assert_eq!(at(&image, &view, [5.15, 5.0]), robot, "inside its 0.2 m radius");
        assert_eq!(at(&image, &view, [5.4, 5.0]), BACKGROUND, "outside it");
        for p in [[2.5, 2.5], [8.0, 6.0], [-0.6, 5.0]] {
            assert_eq!(at(&image, &view, p), BACKGROUND, "free floor at {p:?}");
        }
        assert_eq!(at(&image, &view, [10.0, 7.0]), HIT, "the hit, drawn over the wall it hit");
        assert_eq!(at(&image, &view, [9.95, 7.0]), HIT, "a dot of 3 pixels");
        assert_ne!(wall, BACKGROUND, "Flatland's white walls are darkened to show");
    }

    #[test]
    fn the_area_is_centred_with_its_aspect_kept() {
        let view = View { area: [0.0, 0.0, 10.0, 5.0], size: (200, 200) };
        assert_eq!(view.pixel_of([5.0, 2.5]), [100.0, 100.0]);
        assert_eq!(view.pixel_of([0.0, 5.0]), [0.0, 50.0], "20 px per metre, 50 px bands above and below");
        let area = default_area(&room());
        assert_eq!(area, [-0.5, -0.5, 10.5, 10.5]);
    }
}
