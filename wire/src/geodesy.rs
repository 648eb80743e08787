//! Geodesy on the WGS 84 ellipsoid: where a point of a georeferenced world
//! is on Earth. The world's ENU coordinates (x east, y north, metres) start
//! from a reference point; a point is converted to Earth-centred,
//! Earth-fixed coordinates about it, then to latitude and longitude, as
//! Flatland's GPS plugin does. The GPS sensor and the Pioneer interface's
//! position packets both read it.

/// WGS 84 semi-major axis, m (Flatland's `WGS84_A`).
pub const WGS84_A_M: f64 = 6_378_137.0;
/// WGS 84 first eccentricity squared (Flatland's `WGS84_E2`).
pub const WGS84_E2: f64 = 0.006_694_379_983_166_8;

/// Most rounds of the iterative latitude solution. Each round shrinks the
/// error by about `WGS84_E2`; from the start used here five reach the last
/// bit of a double anywhere a world can be.
const MAX_LATITUDE_ROUNDS: usize = 10;

/// A geodetic reference: the point the world's ENU coordinates start from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    sin_lat: f64,
    cos_lat: f64,
    sin_lon: f64,
    cos_lon: f64,
    /// The reference point in Earth-centred, Earth-fixed coordinates, m.
    ecef_m: [f64; 3],
}

impl Reference {
    /// The reference at latitude `lat_deg` and longitude `lon_deg`, on the
    /// ellipsoid's surface.
    pub fn new(lat_deg: f64, lon_deg: f64) -> Reference {
        let (sin_lat, cos_lat) = lat_deg.to_radians().sin_cos();
        let (sin_lon, cos_lon) = lon_deg.to_radians().sin_cos();
        // Prime vertical radius of curvature.
        let n = WGS84_A_M / (1.0 - WGS84_E2 * sin_lat * sin_lat).sqrt();
        let ecef_m = [n * cos_lat * cos_lon, n * cos_lat * sin_lon, n * (1.0 - WGS84_E2) * sin_lat];
        Reference { sin_lat, cos_lat, sin_lon, cos_lon, ecef_m }
    }

    /// Latitude and longitude, degrees, of the point `east_m`, `north_m`
    /// from the reference on its tangent plane (up = 0).
    pub fn geodetic(&self, east_m: f64, north_m: f64) -> (f64, f64) {
        let Reference { sin_lat, cos_lat, sin_lon, cos_lon, ecef_m } = *self;
        let x = ecef_m[0] - sin_lon * east_m - sin_lat * cos_lon * north_m;
        let y = ecef_m[1] + cos_lon * east_m - sin_lat * sin_lon * north_m;
        let z = ecef_m[2] + cos_lat * north_m;
        let lon_rad = y.atan2(x);
        let p = x.hypot(y);
        // Flatland starts from the co-latitude, atan(p / z), and stops
        // after four rounds, up to about 1e-10° (0.01 mm) short; this
        // starts from the latitude of a point on the ellipsoid and goes on
        // until a round changes nothing.
        let mut lat_rad = (z / (p * (1.0 - WGS84_E2))).atan();
        for _ in 0..MAX_LATITUDE_ROUNDS {
            let s = lat_rad.sin();
            let r = WGS84_A_M / (1.0 - WGS84_E2 * s * s).sqrt();
            let altitude_m = p / lat_rad.cos() - r;
            let next = (z / p / (1.0 - WGS84_E2 * r / (r + altitude_m))).atan();
            let done = next == lat_rad;
            lat_rad = next;
            if done {
                break;
            }
        }
        (lat_rad.to_degrees(), lon_rad.to_degrees())
    }
}
