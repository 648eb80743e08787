#!/usr/bin/env python3
"""Reads a Flotilla recording with the `mcap` package and its ROS 2 decoder
(`mcap-ros2-support`, from PyPI), as Foxglove and rosbag2 users would, and
checks it against what the room world (configs/tests/room) publishes:

  * the topics and their ROS 2 types;
  * log times in sim time, close behind each message's own stamp;
  * message counts at the plugins' rates in sim time: scan 10 Hz, odometry
    50 Hz, clock every step;
  * decoded field values: the scan's frame, beam count and range limits, the
    odometry's frames, the clock;
  * the driving command sent while recording, decoded back;
  * the clock recorded up to the last odometry (the world's last batch of
    clocks asked for when the recorder stops);
  * every CRC (chunks, data section, summary), and the summary's counts and
    indexes agreeing with a plain read from start to end.

Prints one JSON line with what it found; exits 1 naming the first problem.
"""

import json
import sys

from mcap.reader import make_reader
from mcap.records import Message
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory


def fail(message: str) -> None:
    print(f"check_recording: {message}", file=sys.stderr)
    sys.exit(1)


def main(path: str) -> None:
    counts: dict[str, int] = {}
    types: dict[str, str] = {}
    times: dict[str, list[int]] = {}
    stamps: dict[str, list[int]] = {}
    first: dict[str, object] = {}
    with open(path, "rb") as f:
        # Through the summary's chunk and message indexes, CRCs checked.
        reader = make_reader(f, validate_crcs=True, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        if header.profile != "ros2":
            fail(f"profile {header.profile!r}, expected 'ros2'")
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            topic = channel.topic
            counts[topic] = counts.get(topic, 0) + 1
            types[topic] = schema.name
            times.setdefault(topic, []).append(message.log_time)
            first.setdefault(topic, decoded)
            # The sim time each message is of: its header's stamp, or the clock's own.
            stamp = decoded.clock if topic == "/clock" else getattr(getattr(decoded, "header", None), "stamp", None)
            if stamp is not None:
                stamps.setdefault(topic, []).append(stamp.sec * 1_000_000_000 + stamp.nanosec)
            if message.log_time != message.publish_time:
                fail(f"{topic}: log time {message.log_time} != publish time {message.publish_time}")
        statistics = reader.get_summary().statistics
    with open(path, "rb") as f:
        linear = sum(isinstance(r, Message) for r in StreamReader(f, validate_crcs=True).records)
    indexed = sum(counts.values())
    if not statistics.message_count == linear == indexed:
        fail(f"{statistics.message_count} messages by the statistics, {linear} read through, {indexed} by the indexes")

    expected_types = {
        "/clock": "rosgraph_msgs/msg/Clock",
        "/robot/scan": "sensor_msgs/msg/LaserScan",
        "/robot/odometry/filtered": "nav_msgs/msg/Odometry",
        "/robot/odometry/ground_truth": "nav_msgs/msg/Odometry",
        "/robot/cmd_vel": "geometry_msgs/msg/Twist",
        "/tf": "tf2_msgs/msg/TFMessage",
    }
    for topic, ros_type in expected_types.items():
        if types.get(topic) != ros_type:
            fail(f"{topic}: type {types.get(topic)!r}, expected {ros_type!r} (topics: {sorted(types)})")

    # Log times are sim time: a node's message at the time of the state it
    # answered, which is its stamp; one that came on its key before the
    # recorder took its topic from the node's batches at the latest time
    # the recorder knew, within a second of its stamp.
    clock_times = times["/clock"]
    span_s = (clock_times[-1] - clock_times[0]) * 1e-9
    if span_s < 1.0:
        fail(f"only {span_s:.3f} s of sim time recorded")
    for topic in ("/robot/scan", "/robot/odometry/filtered"):
        for logged, stamped in zip(times[topic], stamps[topic]):
            if not -50_000_000 <= logged - stamped <= 1_000_000_000:
                fail(f"{topic}: logged at {logged} ns, stamped {stamped} ns")
    # The world sends a recorder its clock twenty steps to a batch; a
    # recorder about to stop asks for the rest, so the clock reaches the
    # last odometry recorded (within a step or two it may have answered
    # meanwhile), not up to twenty steps (100 ms) short of it.
    last_odometry, last_clock = max(stamps["/robot/odometry/filtered"]), max(stamps["/clock"])
    if last_odometry - last_clock > 25_000_000:
        fail(f"the last clock recorded is {(last_odometry - last_clock) * 1e-6:.1f} ms before the last odometry")
    # Rates in sim time, each over the stretch its topic was recorded (a
    # publisher learns of the recorder a moment after the clock's does).
    # The stamps are sorted: messages that came on their key before the
    # switch to a node's batches are logged at the latest time the recorder
    # knew, which may be after the batches' first messages.
    for topic, rate_hz in [("/robot/scan", 10.0), ("/robot/odometry/filtered", 50.0), ("/clock", 200.0)]:
        sim_times = sorted(stamps[topic])
        if len(set(sim_times)) != len(sim_times):
            fail(f"{topic}: {len(sim_times) - len(set(sim_times))} messages recorded twice")
        stretch_s = (sim_times[-1] - sim_times[0]) * 1e-9
        measured = (len(sim_times) - 1) / stretch_s
        if stretch_s < 1.0 or abs(measured - rate_hz) > 0.02 * rate_hz:
            fail(f"{topic}: {measured:.2f} Hz over {stretch_s:.2f} s of sim time, expected {rate_hz} Hz")

    clock = first["/clock"]
    if not (clock.clock.sec >= 0 and 0 <= clock.clock.nanosec < 1_000_000_000):
        fail(f"a clock that is no time: {clock}")
    scan = first["/robot/scan"]
    if scan.header.frame_id != "robot_laser" or len(scan.ranges) != 16 or abs(scan.range_max - 20.0) > 1e-6:
        fail(f"scan: frame {scan.header.frame_id!r}, {len(scan.ranges)} ranges, range_max {scan.range_max}")
    odom = first["/robot/odometry/filtered"]
    if odom.child_frame_id != "robot_base":
        fail(f"odometry child frame {odom.child_frame_id!r}")
    cmd = first["/robot/cmd_vel"]
    if abs(cmd.linear.x - 0.5) > 1e-9 or abs(cmd.angular.z - 0.25) > 1e-9:
        fail(f"cmd_vel decoded as linear.x {cmd.linear.x}, angular.z {cmd.angular.z}")

    print(json.dumps({"span_s": round(span_s, 3), "counts": counts}))


if __name__ == "__main__":
    main(sys.argv[1])
