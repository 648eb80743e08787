//! Golden bytes: each expectation was worked out by hand from the CDR rules
//! (little-endian, `00 01 00 00` header, primitives aligned to their size
//! relative to the end of the header, strings as u32 length including the NUL
//! terminator, sequences as u32 count, fixed arrays without a count).

use super::builtin_interfaces::Time;
use super::geometry_msgs::*;
use super::nav_msgs::Odometry;
use super::rosgraph_msgs::Clock;
use super::sensor_msgs::LaserScan;
use super::std_msgs::Header;
use super::tf2_msgs::TFMessage;
use super::*;

const HDR: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
const F64_HALF: [u8; 8] = [0, 0, 0, 0, 0, 0, 0xE0, 0x3F];
const F64_ONE: [u8; 8] = [0, 0, 0, 0, 0, 0, 0xF0, 0x3F];

fn header(sec: i32, frame: &str) -> Header {
    Header { stamp: Time { sec, nanosec: 0 }, frame_id: frame.into() }
}

fn round_trip<T: RosMessage + PartialEq + std::fmt::Debug>(msg: &T) -> Vec<u8> {
    let bytes = encode(msg);
    assert_eq!(&decode::<T>(&bytes).unwrap(), msg, "{} round trip", T::TYPE_NAME);
    bytes
}

#[test]
fn twist_is_52_bytes() {
    let mut msg = Twist::default();
    msg.linear.x = 0.5;
    msg.angular.z = 1.0;
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&F64_HALF);
    expected.extend_from_slice(&[0; 32]);
    expected.extend_from_slice(&F64_ONE);
    assert_eq!(bytes, expected);
    assert_eq!(bytes.len(), 52);
}

#[test]
fn time_and_clock_are_sec_then_nanosec() {
    let time = Time { sec: 1, nanosec: 2 };
    assert_eq!(round_trip(&time), [0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
    assert_eq!(round_trip(&Clock { clock: time }), [0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
}

#[test]
fn header_string_carries_its_terminator() {
    let msg = Header { stamp: Time { sec: 1, nanosec: 2 }, frame_id: "map".into() };
    assert_eq!(round_trip(&msg), [0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, b'm', b'a', b'p', 0]);
}

#[test]
fn twist_stamped_pads_to_eight_after_the_frame() {
    let mut msg = TwistStamped { header: header(3, "a"), twist: Twist::default() };
    msg.twist.linear.x = 1.0;
    let bytes = round_trip(&msg);
    assert_eq!(bytes.len(), 68);
    assert_eq!(&bytes[..22], &[0, 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, b'a', 0, 0, 0, 0, 0]);
    assert_eq!(&bytes[20..28], &F64_ONE);
}

#[test]
fn quaternion_and_pose_are_plain_doubles() {
    let bytes = round_trip(&Quaternion::default());
    assert_eq!(bytes.len(), 36);
    assert_eq!(&bytes[28..], &F64_ONE);
    let mut pose = Pose::default();
    pose.position.x = 0.5;
    let bytes = round_trip(&pose);
    assert_eq!(bytes.len(), 60);
    assert_eq!(&bytes[4..12], &F64_HALF);
    assert_eq!(&bytes[52..60], &F64_ONE);
}

#[test]
fn transform_stamped_aligns_child_frame_and_transform() {
    let msg = TransformStamped { header: header(0, ""), child_frame_id: "b".into(), transform: Transform::default() };
    let bytes = round_trip(&msg);
    assert_eq!(bytes.len(), 84);
    // empty frame_id: length 1, one NUL, then 3 bytes of padding before the child's length
    assert_eq!(&bytes[12..26], &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, b'b', 0]);
    assert_eq!(&bytes[76..84], &F64_ONE);
    let tf = round_trip(&TFMessage { transforms: vec![msg] });
    assert_eq!(tf.len(), 92);
    assert_eq!(&tf[4..8], &[1, 0, 0, 0]);
}

#[test]
fn odometry_is_716_bytes_with_two_covariances() {
    let mut msg = Odometry { header: header(0, "odom"), child_frame_id: "base".into(), ..Default::default() };
    msg.pose.covariance.0[35] = 1.0;
    msg.twist.twist.linear.x = 0.5;
    let bytes = round_trip(&msg);
    assert_eq!(bytes.len(), 716);
    assert_eq!(&bytes[24..40], &[5, 0, 0, 0, b'b', b'a', b's', b'e', 0, 0, 0, 0, 0, 0, 0, 0]);
    // pose (56 bytes) at 36, covariance at 92; yaw-yaw is its last entry
    assert_eq!(&bytes[92 + 35 * 8..92 + 36 * 8], &F64_ONE);
    // twist.linear.x right after the pose covariance
    assert_eq!(&bytes[380..388], &F64_HALF);
}

#[test]
fn twist_with_covariance_stamped_is_356_bytes() {
    let msg = TwistWithCovarianceStamped { header: header(0, "a"), twist: TwistWithCovariance::default() };
    assert_eq!(round_trip(&msg).len(), 356);
}

#[test]
fn laser_scan_floats_and_sequences() {
    let msg = LaserScan {
        header: header(0, "laser"),
        angle_min: -1.0,
        angle_max: 1.0,
        angle_increment: 0.5,
        range_max: 5.0,
        ranges: vec![1.0, 2.0],
        ..Default::default()
    };
    let bytes = round_trip(&msg);
    assert_eq!(bytes.len(), 68);
    assert_eq!(&bytes[24..28], &(-1.0f32).to_le_bytes());
    assert_eq!(&bytes[52..56], &[2, 0, 0, 0]);
    assert_eq!(&bytes[56..60], &1.0f32.to_le_bytes());
    assert_eq!(&bytes[64..68], &[0, 0, 0, 0]);
}

#[test]
fn garbage_and_truncated_payloads_are_errors() {
    let bytes = encode(&TwistStamped::default());
    for cut in 0..bytes.len() {
        assert!(decode::<TwistStamped>(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // a sequence that claims four billion elements
    let mut huge = HDR.to_vec();
    huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
    assert!(decode::<TFMessage>(&huge).is_err());
}

#[test]
fn quaternion_helpers_match_tf2() {
    let q = Quaternion::from_yaw(1.0);
    assert!((q.yaw() - 1.0).abs() < 1e-12);
    let flipped = Quaternion::from_rpy(std::f64::consts::PI, 0.0, 0.3);
    assert!(flipped.x.abs() > 0.9, "roll of pi puts weight on x: {flipped:?}");
}

#[test]
fn flatland_spawn_model_request_pads_strings_and_aligns_the_pose() {
    use super::flatland_msgs::SpawnModelRequest;
    let msg = SpawnModelRequest {
        yaml_path: "a.yaml".into(),
        name: "r".into(),
        ns: String::new(),
        pose: Pose2D { x: 1.0, y: 0.0, theta: 0.0 },
    };
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[7, 0, 0, 0]);
    expected.extend_from_slice(b"a.yaml\0");
    expected.push(0); // align the next length to 4
    expected.extend_from_slice(&[2, 0, 0, 0, b'r', 0, 0, 0]);
    expected.extend_from_slice(&[1, 0, 0, 0, 0]);
    expected.extend_from_slice(&[0; 7]); // align x to 8
    expected.extend_from_slice(&F64_ONE);
    expected.extend_from_slice(&[0; 16]);
    assert_eq!(bytes, expected);
    assert_eq!(bytes.len(), 60);
}

#[test]
fn std_srvs_empty_is_one_placeholder_byte() {
    let bytes = round_trip(&super::std_srvs::EmptyMessage::default());
    assert_eq!(bytes, [0x00, 0x01, 0x00, 0x00, 0x00]);
}

#[test]
fn get_simulation_state_response_puts_the_state_before_the_result() {
    use super::simulation_interfaces::*;
    let msg = GetSimulationStateResponse { state: SimulationState { state: 2 }, result: SimResult::ok() };
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[2, 1, 0, 0]); // state, result code, padding
    expected.extend_from_slice(&[1, 0, 0, 0, 0]); // empty error_message
    assert_eq!(bytes, expected);
}

#[test]
fn spawn_entity_request_round_trips_and_garbage_is_an_error() {
    use super::simulation_interfaces::*;
    let msg = SpawnEntityRequest {
        name: "crate1".into(),
        allow_renaming: true,
        entity_resource: Resource { uri: "box.model.yaml".into(), resource_string: String::new() },
        entity_namespace: "ns".into(),
        initial_pose: PoseStamped { header: header(3, "map"), pose: Pose::default() },
    };
    let bytes = round_trip(&msg);
    assert!(decode::<SpawnEntityRequest>(&bytes[..bytes.len() - 3]).is_err(), "truncated");
    assert!(decode::<SpawnEntityRequest>(&[0x00, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f]).is_err(), "garbage");
}

/// Scans of every alignment the frame name can leave (its length mod 4),
/// empty and odd-sized sequences, and the floats serde must carry bit for
/// bit: NaN, infinities, −0.
fn awkward_scans() -> Vec<LaserScan> {
    fn next(seed: &mut u64) -> u32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 33) as u32
    }
    fn floats(seed: &mut u64, n: usize) -> Vec<f32> {
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, f32::MIN_POSITIVE, f32::MAX];
        (0..n)
            .map(|_| {
                if next(seed).is_multiple_of(5) {
                    specials[next(seed) as usize % 6]
                } else {
                    f32::from_bits(next(seed))
                }
            })
            .collect()
    }
    let seed = &mut 1u64;
    let mut scans = vec![];
    for frame_len in 0..8 {
        for (ranges, intensities) in [(0, 0), (1, 0), (0, 3), (3, 3), (1081, 1081), (1081, 0)] {
            scans.push(LaserScan {
                header: Header {
                    stamp: Time { sec: next(seed) as i32, nanosec: next(seed) },
                    frame_id: "f".repeat(frame_len),
                },
                angle_min: -2.35,
                angle_max: 2.35,
                angle_increment: f32::from_bits(next(seed)),
                time_increment: 0.0,
                scan_time: 0.1,
                range_min: 0.0,
                range_max: 20.0,
                ranges: floats(seed, ranges),
                intensities: floats(seed, intensities),
            });
        }
    }
    scans
}

#[test]
fn laser_scans_copied_whole_are_the_bytes_serde_writes() {
    for scan in awkward_scans() {
        let bytes = encode(&scan);
        assert_eq!(bytes, encode_with_serde(&scan), "{} ranges, frame {:?}", scan.ranges.len(), scan.header.frame_id);
        // Compared as bytes, so that NaNs compare bit for bit.
        let decoded = decode::<LaserScan>(&bytes).unwrap();
        assert_eq!(encode_with_serde(&decoded), bytes);
        // A big-endian payload (as another vendor's DDS may send) reads the same.
        let big_endian = cdr::serialize::<_, _, cdr::CdrBe>(&scan, cdr::Infinite).unwrap();
        assert_eq!(encode_with_serde(&decode::<LaserScan>(&big_endian).unwrap()), bytes);
    }
}

/// Doubles of every kind serde must carry bit for bit, from a seed.
fn awkward_doubles(seed: &mut u64, n: usize) -> Vec<f64> {
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, f64::MIN_POSITIVE, f64::MAX];
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (*seed >> 60).is_multiple_of(5) {
                specials[(*seed >> 33) as usize % 6]
            } else {
                f64::from_bits(seed.rotate_left(17))
            }
        })
        .collect()
}

/// Frame names of every length mod 8, and one of multi-byte characters.
const AWKWARD_FRAMES: [&str; 10] = ["", "a", "ab", "abc", "odom", "base5", "robot1", "r1/base", "ünïcødé/β", "x"];

#[test]
fn odometry_twist_and_transforms_written_field_by_field_are_the_bytes_serde_writes() {
    let seed = &mut 7u64;
    let mut transforms = vec![];
    for (i, frame) in AWKWARD_FRAMES.iter().enumerate() {
        let child = AWKWARD_FRAMES[(i * 3 + 1) % AWKWARD_FRAMES.len()];
        let d = awkward_doubles(seed, 7 + 7 + 6 + 36 + 36);
        let stamp = Time { sec: -(i as i32) * 1_000_003, nanosec: (i as u32).wrapping_mul(999_999_937) };
        let header = Header { stamp, frame_id: frame.to_string() };
        let pose = Pose {
            position: Point { x: d[0], y: d[1], z: d[2] },
            orientation: Quaternion { x: d[3], y: d[4], z: d[5], w: d[6] },
        };
        let twist = Twist {
            linear: Vector3 { x: d[14], y: d[15], z: d[16] },
            angular: Vector3 { x: d[17], y: d[18], z: d[19] },
        };
        let covariance = |from: usize| Covariance(std::array::from_fn(|k| d[from + k]));
        let odometry = Odometry {
            header: header.clone(),
            child_frame_id: child.to_string(),
            pose: PoseWithCovariance { pose, covariance: covariance(20) },
            twist: TwistWithCovariance { twist, covariance: covariance(56) },
        };
        assert_eq!(encode(&odometry), encode_with_serde(&odometry), "odometry {frame:?} → {child:?}");
        let stamped = TwistWithCovarianceStamped { header: header.clone(), twist: odometry.twist };
        assert_eq!(encode(&stamped), encode_with_serde(&stamped), "twist in {frame:?}");
        let transform = TransformStamped {
            header,
            child_frame_id: child.to_string(),
            transform: Transform {
                translation: Vector3 { x: d[7], y: d[8], z: d[9] },
                rotation: Quaternion { x: d[10], y: d[11], z: d[12], w: d[13] },
            },
        };
        assert_eq!(encode(&transform), encode_with_serde(&transform), "transform {frame:?} → {child:?}");
        transforms.push(transform);
        // Messages of none to ten transforms, each after frames of other lengths.
        let tf = TFMessage { transforms: transforms.clone() };
        assert_eq!(encode(&tf), encode_with_serde(&tf), "{} transforms", tf.transforms.len());
        let decoded = decode::<Odometry>(&encode(&odometry)).unwrap();
        assert_eq!(encode_with_serde(&decoded), encode(&odometry), "and read back");
    }
    let empty = TFMessage::default();
    assert_eq!(encode(&empty), encode_with_serde(&empty));
}

#[test]
fn truncated_or_lying_laser_scans_are_errors_as_through_serde() {
    let scan = &awkward_scans()[9]; // frame of one byte, three ranges and intensities
    let bytes = encode(scan);
    for cut in 0..bytes.len() {
        assert!(decode::<LaserScan>(&bytes[..cut]).is_err(), "cut at {cut}");
        assert!(decode_with_serde::<LaserScan>(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    // The intensities claim four billion floats.
    let mut lying = bytes.clone();
    let count_at = bytes.len() - 4 * 3 - 4;
    lying[count_at..count_at + 4].copy_from_slice(&[0xff; 4]);
    assert!(decode::<LaserScan>(&lying).unwrap_err().to_string().contains("4294967295 floats"));
}

#[test]
fn nav_sat_fix_aligns_the_service_and_the_latitude() {
    use super::sensor_msgs::{NavSatFix, NavSatStatus};
    let mut msg = NavSatFix {
        header: Header { stamp: Time { sec: 1, nanosec: 2 }, frame_id: "gps".into() },
        status: NavSatStatus { status: NavSatStatus::STATUS_FIX, service: NavSatStatus::SERVICE_GPS },
        latitude: 0.5,
        longitude: 1.0,
        ..Default::default()
    };
    msg.position_covariance[8] = 1.0;
    msg.position_covariance_type = NavSatFix::COVARIANCE_TYPE_DIAGONAL_KNOWN;
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, b'g', b'p', b's', 0]); // header, to 16
    expected.extend_from_slice(&[0, 0, 1, 0]); // status at 16, service aligned to 18
    expected.extend_from_slice(&[0; 4]); // latitude aligned to 24
    expected.extend_from_slice(&F64_HALF);
    expected.extend_from_slice(&F64_ONE);
    expected.extend_from_slice(&[0; 8]); // altitude
    expected.extend_from_slice(&[0; 64]); // covariance[0..8], no count: a fixed array
    expected.extend_from_slice(&F64_ONE); // covariance[8]
    expected.push(2);
    assert_eq!(bytes, expected);
    assert_eq!(bytes.len(), 4 + 121);
    assert_eq!(NavSatStatus::default().status, -2, "the message definition's default");
}

#[test]
fn imu_is_header_then_plain_doubles() {
    use super::sensor_msgs::Imu;
    let mut msg = Imu { header: header(3, "imu"), ..Default::default() };
    msg.orientation.w = 1.0;
    msg.linear_acceleration.z = 0.5;
    msg.linear_acceleration_covariance[8] = 1.0;
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, b'i', b'm', b'u', 0]); // header, to 16
    expected.extend_from_slice(&[0; 24]); // orientation x, y, z (16 is 8-aligned)
    expected.extend_from_slice(&F64_ONE); // w
    expected.extend_from_slice(&[0; 72 + 24 + 72 + 16]); // covariance, angular velocity, covariance, acc x, y
    expected.extend_from_slice(&F64_HALF); // acc z
    expected.extend_from_slice(&[0; 64]);
    expected.extend_from_slice(&F64_ONE); // covariance[8]
    assert_eq!(bytes, expected);
    assert_eq!(bytes.len(), 4 + 16 + 32 + 72 + 24 + 72 + 24 + 72);
}

#[test]
fn range_is_a_byte_then_aligned_floats() {
    use super::sensor_msgs::Range;
    let msg = Range {
        header: header(0, "s"),
        radiation_type: Range::ULTRASOUND,
        field_of_view: 0.5,
        min_range: 0.5,
        max_range: 1.0,
        range: 0.5,
        variance: 0.0,
    };
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, b's', 0]); // header, to 14
    expected.extend_from_slice(&[0, 0]); // radiation type at 14, pad to 16
    let half = 0.5f32.to_le_bytes();
    for v in [half, half, 1.0f32.to_le_bytes(), half, 0.0f32.to_le_bytes()] {
        expected.extend_from_slice(&v);
    }
    assert_eq!(bytes, expected);
}

#[test]
fn point_cloud2_carries_its_fields_and_raw_points() {
    use super::sensor_msgs::PointCloud2;
    let cloud = PointCloud2::xyz(header(1, "base"), [[1.0, 2.0, 0.0], [0.5, -0.5, 0.0]]);
    let bytes = round_trip(&cloud);
    assert_eq!((cloud.width, cloud.height, cloud.point_step, cloud.row_step), (2, 1, 12, 24));
    assert_eq!(cloud.xyz_points(), vec![[1.0, 2.0, 0.0], [0.5, -0.5, 0.0]]);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, b'b', b'a', b's', b'e', 0]); // header, to 17
    expected.extend_from_slice(&[0, 0, 0]); // height aligned to 20
    expected.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]); // height, width, 3 fields
    for (name, offset) in [(b'x', 0u8), (b'y', 4), (b'z', 8)] {
        // name "x" (len 2 with NUL), pad to 4, offset, datatype 7, pad, count 1
        let at = expected.len() - 4;
        assert_eq!(at % 4, 0);
        expected.extend_from_slice(&[2, 0, 0, 0, name, 0, 0, 0, offset, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0]);
    }
    expected.push(0); // is_bigendian
    expected.extend_from_slice(&[0, 0, 0]); // point_step aligned
    expected.extend_from_slice(&[12, 0, 0, 0, 24, 0, 0, 0, 24, 0, 0, 0]); // point_step, row_step, data count
    for v in [1.0f32, 2.0, 0.0, 0.5, -0.5, 0.0] {
        expected.extend_from_slice(&v.to_le_bytes());
    }
    expected.push(1); // is_dense
    assert_eq!(bytes, expected);
}

#[test]
fn collisions_align_each_sequence_and_vector2() {
    use super::flatland_msgs::{Collision, Collisions, Vector2};
    let msg = Collisions {
        header: header(0, "m"),
        collisions: vec![Collision {
            entity_a: "a".into(),
            body_a: "b".into(),
            entity_b: "c".into(),
            body_b: "d".into(),
            magnitude_forces: vec![1.0],
            contact_positions: vec![Vector2 { x: 0.5, y: 1.0 }],
            contact_normals: vec![Vector2 { x: 1.0, y: 0.0 }],
        }],
    };
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, b'm', 0]); // header, to 14
    expected.extend_from_slice(&[0, 0, 1, 0, 0, 0]); // pad to 16, one collision
    expected.extend_from_slice(&[2, 0, 0, 0, b'a', 0]); // entity_a at 20
    for name in [b'b', b'c', b'd'] {
        expected.extend_from_slice(&[0, 0, 2, 0, 0, 0, name, 0]); // pad to 4, body_a / entity_b / body_b
    }
    expected.extend_from_slice(&[0, 0, 1, 0, 0, 0]); // pad to 52, one force
    expected.extend_from_slice(&F64_ONE); // at 56
    expected.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // one position at 64, pad to 72
    expected.extend_from_slice(&F64_HALF);
    expected.extend_from_slice(&F64_ONE);
    expected.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // one normal at 88, pad to 96
    expected.extend_from_slice(&F64_ONE);
    expected.extend_from_slice(&[0; 8]);
    assert_eq!(bytes, expected);
    assert_eq!(bytes.len(), 4 + 112);
}

#[test]
fn action_goal_ids_are_sixteen_bytes_without_a_count_and_statuses_align_their_stamps() {
    use super::action_msgs::*;
    let id: Uuid = std::array::from_fn(|i| i as u8 + 1);
    // The id (16 bytes, no count), then the u64 at offset 16: no padding.
    let goal = round_trip(&SimulateStepsGoalRequest { goal_id: id, steps: 3 });
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&id);
    expected.extend_from_slice(&3u64.to_le_bytes());
    assert_eq!(goal, expected);

    // Two statuses: count, then id, stamp (i32, u32), status (i8); the second
    // id follows the first status at once (bytes align to 1), and its stamp
    // is padded to 4.
    let info = |sec| GoalInfo { goal_id: id, stamp: Time { sec, nanosec: 7 } };
    let array = GoalStatusArray {
        status_list: vec![
            GoalStatus { goal_info: info(1), status: goal_status::EXECUTING },
            GoalStatus { goal_info: info(2), status: goal_status::SUCCEEDED },
        ],
    };
    let bytes = round_trip(&array);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&2u32.to_le_bytes());
    for (sec, status, pad) in [(1i32, 2u8, 0usize), (2, 4, 3)] {
        expected.extend_from_slice(&id);
        expected.extend_from_slice(&[0; 3][..pad]);
        expected.extend_from_slice(&sec.to_le_bytes());
        expected.extend_from_slice(&7u32.to_le_bytes());
        expected.push(status);
    }
    assert_eq!(bytes, expected);
}

#[test]
fn joint_state_sequences_carry_their_counts() {
    use super::sensor_msgs::JointState;
    let msg = JointState {
        header: header(1, ""),
        name: vec!["a".into()],
        position: vec![0.5],
        velocity: vec![],
        effort: vec![],
    };
    let bytes = round_trip(&msg);
    let mut expected = HDR.to_vec();
    expected.extend_from_slice(&1i32.to_le_bytes()); // sec
    expected.extend_from_slice(&0u32.to_le_bytes()); // nanosec
    expected.extend_from_slice(&1u32.to_le_bytes()); // frame_id: "" with its NUL
    expected.push(0);
    expected.extend_from_slice(&[0; 3]); // to 4
    expected.extend_from_slice(&1u32.to_le_bytes()); // one name
    expected.extend_from_slice(&2u32.to_le_bytes());
    expected.extend_from_slice(b"a\0");
    expected.extend_from_slice(&[0; 2]); // to 4
    expected.extend_from_slice(&1u32.to_le_bytes()); // one position, then to 8
    expected.extend_from_slice(&F64_HALF);
    expected.extend_from_slice(&0u32.to_le_bytes());
    expected.extend_from_slice(&0u32.to_le_bytes());
    assert_eq!(bytes, expected);
}

/// The bytes rclpy's `serialize_message` gives for the same message (ROS 2
/// Jazzy's wheels; its padding bytes are whatever was in memory, zero here).
#[test]
fn battery_state_is_laid_out_as_rclpy_writes_it() {
    use super::sensor_msgs::BatteryState;
    let msg = BatteryState {
        header: header(2, "r1"),
        voltage: 12.5,
        temperature: f32::NAN,
        current: -1.5,
        charge: 10.0,
        capacity: 20.0,
        design_capacity: 20.0,
        percentage: 0.5,
        power_supply_status: BatteryState::POWER_SUPPLY_STATUS_DISCHARGING,
        power_supply_health: BatteryState::POWER_SUPPLY_HEALTH_GOOD,
        power_supply_technology: BatteryState::POWER_SUPPLY_TECHNOLOGY_VRLA,
        present: true,
        location: "slot".into(),
        ..BatteryState::default()
    };
    let bytes = encode(&msg);
    #[rustfmt::skip]
    let expected: [u8; 77] = [
        0, 1, 0, 0,                             // CDR little-endian
        2, 0, 0, 0, 0, 0, 0, 0,                 // stamp 2 s
        3, 0, 0, 0, b'r', b'1', 0, 0,           // frame "r1", padded to 4
        0, 0, 72, 65, 0, 0, 192, 127,           // voltage 12.5, temperature NaN
        0, 0, 192, 191, 0, 0, 32, 65,           // current −1.5, charge 10
        0, 0, 160, 65, 0, 0, 160, 65,           // capacity, design capacity 20
        0, 0, 0, 63,                            // percentage 0.5
        2, 1, 8, 1,                             // discharging, good, VRLA, present
        0, 0, 0, 0, 0, 0, 0, 0,                 // no cell voltages, no cell temperatures
        5, 0, 0, 0, b's', b'l', b'o', b't', 0,  // location "slot"
        0, 0, 0,                                // padding to 4
        1, 0, 0, 0, 0,                          // serial number ""
    ];
    assert_eq!(bytes, expected);
    let back = decode::<BatteryState>(&bytes).unwrap();
    assert!(back.temperature.is_nan() && back.location == "slot" && back.voltage == 12.5);
}
