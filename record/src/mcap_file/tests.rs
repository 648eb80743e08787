//! The MCAP writer's tests: files read back with the `mcap` crate.

use super::*;
use crate::lz4_frame::tests::noise;
use mcap::sans_io::linear_reader::{LinearReadEvent, LinearReader, LinearReaderOptions};

/// A message as written: channel, sequence, log time, data.
type Written = (u16, u32, u64, Vec<u8>);

/// A file of three channels (two of one schema) over several chunks,
/// log times not in order across channels, and the messages in it.
fn sample(compression: ChunkCompression) -> (Vec<u8>, Vec<Written>) {
    let mut writer = McapWriter::new(Vec::new(), compression, "ros2", "test").unwrap();
    let odometry = writer.add_schema("nav_msgs/msg/Odometry", "ros2msg", b"# odometry").unwrap();
    let scan = writer.add_schema("sensor_msgs/msg/LaserScan", "ros2msg", b"# scan").unwrap();
    writer.add_channel(1, odometry, "/r1/odom", "cdr", &[("offered_qos_profiles", "- depth: 1\n")]).unwrap();
    writer.add_channel(2, odometry, "/r2/odom", "cdr", &[]).unwrap();
    writer.add_channel(3, scan, "/r1/scan", "cdr", &[]).unwrap();
    let channels = [1, 2, 3];
    let mut written = Vec::new();
    for step in 0..400u32 {
        let channel = channels[step as usize % 3];
        // Scans large and incompressible enough to fill several chunks.
        let len = if channel == channels[2] { 20_000 + step as usize } else { 40 };
        let data: Vec<u8> = (0..len).map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ step) as u8).collect();
        let log_time = 1_000_000 * u64::from(step) + if channel == channels[1] { 500_000 } else { 0 };
        writer.write(channel, step + 1, log_time, log_time + 7, &data).unwrap();
        written.push((channel, step + 1, log_time, data));
    }
    (writer.finish().unwrap(), written)
}

/// Every record of `file`, read linearly with every CRC checked:
/// (opcode, count).
pub(crate) fn records_checked(file: &[u8]) -> std::collections::BTreeMap<u8, usize> {
    let options = LinearReaderOptions::default()
        .with_validate_chunk_crcs(true)
        .with_validate_data_section_crc(true)
        .with_validate_summary_section_crc(true)
        .with_check_finishes_after_end_magic(true)
        .with_emit_chunks(true);
    let mut reader = LinearReader::new_with_options(options);
    let mut counts = std::collections::BTreeMap::new();
    let mut rest = file;
    while let Some(event) = reader.next_event() {
        match event.expect("a valid file") {
            LinearReadEvent::ReadRequest(need) => {
                let n = need.min(rest.len());
                reader.insert(n).copy_from_slice(&rest[..n]);
                rest = &rest[n..];
                reader.notify_read(n);
            }
            LinearReadEvent::Record { opcode, .. } => *counts.entry(opcode).or_default() += 1,
        }
    }
    counts
}

#[test]
fn a_file_reads_back_whole_with_every_crc_checked() {
    for compression in ChunkCompression::ALL {
        let (file, written) = sample(compression);
        let records = records_checked(&file);
        let chunks = records[&opcode::CHUNK];
        assert!(chunks >= 4, "{compression:?}: {chunks} chunks");
        assert_eq!(records[&opcode::SCHEMA], 2 + 2, "in the data section and the summary");
        assert_eq!(records[&opcode::CHANNEL], 3 + 3);
        assert_eq!(records[&opcode::MESSAGE_INDEX], 3 * chunks, "each channel has messages in every chunk");

        let read: Vec<mcap::Message> = mcap::MessageStream::new(&file).unwrap().map(Result::unwrap).collect();
        assert_eq!(read.len(), written.len());
        for (message, (channel, sequence, log_time, data)) in read.iter().zip(&written) {
            assert_eq!(message.channel.id, *channel);
            assert_eq!(
                (message.sequence, message.log_time, message.publish_time),
                (*sequence, *log_time, log_time + 7)
            );
            assert_eq!(message.data.as_ref(), data.as_slice());
        }
        let odom = &read[0].channel;
        assert_eq!((odom.topic.as_str(), odom.message_encoding.as_str()), ("/r1/odom", "cdr"));
        assert_eq!(odom.metadata["offered_qos_profiles"], "- depth: 1\n");
        let schema = odom.schema.as_ref().unwrap();
        assert_eq!((schema.name.as_str(), schema.encoding.as_str()), ("nav_msgs/msg/Odometry", "ros2msg"));
        assert_eq!(schema.data.as_ref(), b"# odometry");
    }
}

#[test]
fn the_summary_counts_and_indexes_every_message() {
    for compression in ChunkCompression::ALL {
        let (file, written) = sample(compression);
        let summary = mcap::Summary::read(&file).unwrap().expect("a summary");
        let stats = summary.stats.as_ref().unwrap();
        assert_eq!((stats.message_count, stats.schema_count, stats.channel_count), (400, 2, 3));
        assert_eq!(stats.channel_message_counts.values().copied().collect::<Vec<_>>(), [134, 133, 133]);
        assert_eq!((stats.message_start_time, stats.message_end_time), (0, 399_000_000));
        assert_eq!(stats.chunk_count as usize, summary.chunk_indexes.len());
        assert_eq!(summary.channels.len(), 3);

        // Every message found through the chunk and message indexes.
        let mut found = Vec::new();
        for chunk in &summary.chunk_indexes {
            assert_eq!(chunk.compression, compression_name(compression));
            for (channel, entries) in summary.read_message_indexes(&file, chunk).unwrap() {
                for entry in entries {
                    let message = summary.seek_message(&file, chunk, &entry).unwrap();
                    assert_eq!((message.channel.id, message.log_time), (channel.id, entry.log_time));
                    assert!((chunk.message_start_time..=chunk.message_end_time).contains(&entry.log_time));
                    found.push((message.channel.id, message.sequence, message.log_time, message.data.to_vec()));
                }
            }
        }
        found.sort_by_key(|(_, sequence, ..)| *sequence);
        assert_eq!(found, written, "{compression:?}");
    }
}

#[test]
fn a_channel_whose_messages_do_not_compress_goes_to_chunks_stored_as_they_are() {
    for compression in [ChunkCompression::Lz4, ChunkCompression::Zstd] {
        let mut writer = McapWriter::new(Vec::new(), compression, "ros2", "test").unwrap();
        let schema = writer.add_schema("sensor_msgs/msg/LaserScan", "ros2msg", b"# scan").unwrap();
        let (plain, noisy) = (7, 40);
        writer.add_channel(plain, schema, "/r1/scan", "cdr", &[]).unwrap();
        writer.add_channel(noisy, schema, "/r2/scan", "cdr", &[]).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut written = Vec::new();
        for step in 0..600u32 {
            let (channel, data) =
                if step % 2 == 0 { (plain, vec![(step % 7) as u8; 4000]) } else { (noisy, noise(&mut state, 4000)) };
            writer.write(channel, step + 1, u64::from(step), u64::from(step), &data).unwrap();
            written.push((channel, step + 1, u64::from(step), data));
        }
        let file = writer.finish().unwrap();
        records_checked(&file);

        let summary = mcap::Summary::read(&file).unwrap().unwrap();
        let mut kinds = std::collections::BTreeSet::new();
        for chunk in &summary.chunk_indexes {
            let channels: Vec<u16> = chunk.message_index_offsets.keys().copied().collect();
            kinds.insert((chunk.compression.clone(), channels.clone()));
            if chunk.compression.is_empty() {
                assert_eq!(channels, [noisy], "only the noise is stored as it is");
                assert_eq!(chunk.compressed_size, chunk.uncompressed_size);
            }
        }
        let name = compression_name(compression).to_string();
        assert!(kinds.contains(&(name, vec![plain, noisy])), "the noise's first 64 KiB, while probed: {kinds:?}");
        assert!(kinds.contains(&(String::new(), vec![noisy])), "{kinds:?}");

        // Every message read back, in log-time order across the groups.
        let read: Vec<Written> = mcap::MessageStream::new(&file)
            .unwrap()
            .map(|m| m.unwrap())
            .map(|m| (m.channel.id, m.sequence, m.log_time, m.data.to_vec()))
            .collect();
        let mut sorted = read.clone();
        sorted.sort_by_key(|(_, sequence, ..)| *sequence);
        assert_eq!(sorted, written, "{compression:?}");
    }
}

#[test]
fn an_empty_file_is_still_a_valid_file() {
    let file = McapWriter::new(Vec::new(), ChunkCompression::Lz4, "ros2", "test").unwrap().finish().unwrap();
    let records = records_checked(&file);
    assert_eq!(records.get(&opcode::CHUNK), None);
    let summary = mcap::Summary::read(&file).unwrap().unwrap();
    assert_eq!(summary.stats.unwrap().message_count, 0);
}

#[test]
fn a_message_of_a_channel_never_added_is_refused() {
    let mut writer = McapWriter::new(Vec::new(), ChunkCompression::None, "ros2", "test").unwrap();
    let schema = writer.add_schema("std_msgs/msg/String", "ros2msg", b"string data").unwrap();
    let channel = 9;
    writer.add_channel(channel, schema, "/name", "cdr", &[]).unwrap();
    assert!(writer.add_channel(channel, schema, "/other", "cdr", &[]).is_err(), "an id taken");
    assert!(writer.add_channel(0, schema, "/other", "cdr", &[]).is_err(), "0 is no channel");
    writer.write(channel, 1, 0, 0, b"x").unwrap();
    for unknown in [0, channel + 1] {
        let error = writer.write(unknown, 1, 0, 0, b"x").unwrap_err();
        assert!(error.to_string().contains(&format!("no channel {unknown}")), "{error}");
    }
}

#[test]
fn attachments_and_metadata_are_indexed_in_the_summary_and_read_back() {
    let mut writer = McapWriter::new(Vec::new(), ChunkCompression::None, "ros2", "test").unwrap();
    let schema = writer.add_schema("std_msgs/msg/String", "ros2msg", b"string data").unwrap();
    writer.add_channel(1, schema, "/chatter", "cdr", &[]).unwrap();
    writer.write(1, 1, 5, 5, b"hello").unwrap();
    writer.attach("world/world.yaml", "application/yaml", 0, b"properties: {}\n".to_vec());
    let png = noise(&mut 11, 3000);
    writer.attach("world/map.png", "image/png", 0, png.clone());
    writer.add_metadata("flotilla.resim", vec![("seed".into(), "7".into()), ("step_ns".into(), "5000000".into())]);
    let file = writer.finish().unwrap();

    let counts = records_checked(&file);
    assert_eq!(counts.get(&opcode::ATTACHMENT), Some(&2));
    assert_eq!(counts.get(&opcode::METADATA), Some(&1));
    let summary = mcap::read::Summary::read(&file).unwrap().unwrap();
    let stats = summary.stats.as_ref().unwrap();
    assert_eq!((stats.attachment_count, stats.metadata_count), (2, 1));
    let files: Vec<(String, Vec<u8>)> = (summary.attachment_indexes.iter())
        .map(|index| {
            let attachment = mcap::read::attachment(&file, index).unwrap();
            (attachment.name, attachment.data.into_owned())
        })
        .collect();
    assert_eq!(files[0], ("world/world.yaml".to_string(), b"properties: {}\n".to_vec()));
    assert_eq!(files[1], ("world/map.png".to_string(), png));
    let metadata = mcap::read::metadata(&file, &summary.metadata_indexes[0]).unwrap();
    assert_eq!(metadata.name, "flotilla.resim");
    assert_eq!(metadata.metadata["seed"], "7");
    // The messages read as before.
    let messages: Vec<_> = mcap::MessageStream::new(&file).unwrap().map(Result::unwrap).collect();
    assert_eq!(messages.len(), 1);
}
