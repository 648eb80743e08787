#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

//! CDR encoding and decoding of the largest message Flotilla publishes many
//! times a second: a 1081-beam LaserScan with intensities (8.7 kB), with its
//! float sequences copied whole (what `ros::encode` and `ros::decode` do)
//! and field by field through serde (`encode_with_serde`,
//! `decode_with_serde`). And the encoding of the one it publishes most
//! often: an `Odometry` (716 bytes, 90 doubles), written field by field
//! without serde (`ros::encode`) and through serde.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_messages::{decode, decode_with_serde, encode, encode_with_serde};

fn scan() -> LaserScan {
    let mut scan = LaserScan {
        angle_min: -2.356,
        angle_max: 2.356,
        angle_increment: 0.004363,
        scan_time: 0.1,
        range_max: 20.0,
        ranges: (0..1081).map(|i| 0.5 + (i % 97) as f32 * 0.1).collect(),
        intensities: vec![0.0; 1081],
        ..Default::default()
    };
    scan.header.frame_id = "robot1/laser".into();
    scan
}

/// What the odometry node publishes 50 times a sim second per robot.
fn odometry() -> Odometry {
    let mut odometry = Odometry { child_frame_id: "robot1/base_link".into(), ..Default::default() };
    odometry.header.frame_id = "robot1/odom".into();
    odometry.pose.pose.position.x = 3.25;
    odometry.pose.pose.orientation.z = 0.38;
    odometry.twist.twist.linear.x = 0.5;
    for i in [0, 7, 14, 21, 28, 35] {
        odometry.pose.covariance.0[i] = 1e-4;
        odometry.twist.covariance.0[i] = 1e-4;
    }
    odometry
}

fn bench(c: &mut Criterion) {
    let scan = scan();
    let bytes = encode(&scan);
    let mut group = c.benchmark_group("laser_scan_1081");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("encode_copied", |b| b.iter(|| encode(&scan)));
    group.bench_function("encode_serde", |b| b.iter(|| encode_with_serde(&scan)));
    group.bench_function("decode_copied", |b| b.iter(|| decode::<LaserScan>(&bytes)));
    group.bench_function("decode_serde", |b| b.iter(|| decode_with_serde::<LaserScan>(&bytes)));
    group.finish();

    let odometry = odometry();
    let mut group = c.benchmark_group("odometry");
    group.throughput(Throughput::Bytes(encode(&odometry).len() as u64));
    group.bench_function("encode_fields", |b| b.iter(|| encode(&odometry)));
    group.bench_function("encode_serde", |b| b.iter(|| encode_with_serde(&odometry)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
