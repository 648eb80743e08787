#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

//! CDR encoding and decoding of the largest message Flotilla publishes many
//! times a second: a 1081-beam LaserScan with intensities (8.7 kB), with its
//! float sequences copied whole (what `ros::encode` and `ros::decode` do)
//! and field by field through serde (`encode_with_serde`,
//! `decode_with_serde`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flotilla_protocol::ros::sensor_msgs::LaserScan;
use flotilla_protocol::ros::{decode, decode_with_serde, encode, encode_with_serde};

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
}

criterion_group!(benches, bench);
criterion_main!(benches);
