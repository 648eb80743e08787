#!/usr/bin/env python3
"""A controller that joins Flotilla's lockstep barrier and closes the loop
deterministically, with nothing but Zenoh (pip install eclipse-zenoh).

It drives a robot forward until its ground-truth x passes a goal, then stops.

The handshake (see docs/time-and-determinism.md, "Lockstep participants"):
  * declare a liveliness token on  flotilla/<sim>/lockstep/<id>
  * for every world state k on     flotilla/<sim>/world/state
    publish your commands, then    StepDone(k) on flotilla/<sim>/lockstep/<id>
The world publishes state k+1 only when every participant reported k. Every
ROS output of step k is published before its node reports k, so when state
k+1 arrives here, all of step k's odometry has arrived before it: deciding on
state k+1 from the odometry up to step k gives the same run every time.
"""

import argparse
import queue
import struct
import sys

import zenoh

SCHEMA_VERSION = 3


def world_step(payload: bytes) -> tuple[int, int]:
    """(step, sim time in ns) of a bincode WorldState: version u16, then
    revision, step, time_ns, step_ns as little-endian u64."""
    version, _revision, step, time_ns = struct.unpack_from("<HQQQ", payload)
    if version != SCHEMA_VERSION:
        sys.exit(f"world speaks schema version {version}, this script {SCHEMA_VERSION}")
    return step, time_ns


def step_done(step: int) -> bytes:
    return struct.pack("<HQ", SCHEMA_VERSION, step)


def twist_stamped(time_ns: int, v: float, w: float) -> bytes:
    """CDR geometry_msgs/TwistStamped with an empty frame_id."""
    header = struct.pack("<iI", time_ns // 1_000_000_000, time_ns % 1_000_000_000)
    frame = struct.pack("<I", 1) + b"\x00" + b"\x00" * 3  # "" and padding to 8
    return b"\x00\x01\x00\x00" + header + frame + struct.pack("<6d", v, 0, 0, 0, 0, w)


def odometry_x(payload: bytes) -> tuple[int, float]:
    """(stamp in ns, pose.position.x) of a CDR nav_msgs/Odometry."""
    sec, nanosec, frame_len = struct.unpack_from("<iII", payload, 4)
    offset = 16 + frame_len  # header, then child_frame_id
    offset = (offset - 4 + 3) // 4 * 4 + 4
    (child_len,) = struct.unpack_from("<I", payload, offset)
    offset += 4 + child_len
    offset = (offset - 4 + 7) // 8 * 8 + 4
    (x,) = struct.unpack_from("<d", payload, offset)
    return sec * 1_000_000_000 + nanosec, x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connect", default="tcp/127.0.0.1:7450")
    parser.add_argument("--sim", default="default")
    parser.add_argument("--robot", default="robot", help="namespace of the robot")
    parser.add_argument("--goal-x", type=float, default=6.0, help="stop once x passes this, m")
    parser.add_argument("--steps", type=int, default=600, help="leave the barrier after this step")
    args = parser.parse_args()

    conf = zenoh.Config()
    conf.insert_json5("mode", '"client"')
    conf.insert_json5("connect/endpoints", f'["{args.connect}"]')
    conf.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(conf)

    me = f"flotilla/{args.sim}/lockstep/py-controller"
    # One queue, filled directly on Zenoh's receive thread, keeps the arrival
    # order across keys. (Python callbacks are "indirect" by default: each
    # subscriber then runs on a thread of its own, and the order is lost.)
    inbox: queue.Queue = queue.Queue()

    def into_inbox(kind):
        return zenoh.handlers.Callback(lambda s: inbox.put((kind, s.payload.to_bytes())), indirect=False)

    session.declare_subscriber(f"flotilla/{args.sim}/world/state", into_inbox("state"))
    session.declare_subscriber(f"{args.robot}/odometry/ground_truth", into_inbox("odom"))
    token = session.liveliness().declare_token(me)

    x, stopped_at, last_step = None, None, None
    while True:
        kind, payload = inbox.get(timeout=60)
        if kind == "odom":
            _, x = odometry_x(payload)
            continue
        step, time_ns = world_step(payload)
        if step == last_step:
            continue  # the world re-published a state we handled
        last_step = step
        if stopped_at is None and x is not None and x >= args.goal_x:
            stopped_at = step
        v = 0.0 if stopped_at is not None else 0.5
        session.put(f"{args.robot}/cmd_vel", twist_stamped(time_ns, v, 0.0))
        if step >= args.steps:
            break
        session.put(me, step_done(step))
    print(f"stopped at step {stopped_at}, x = {x:.6f} m at step {last_step}", flush=True)
    token.undeclare()
    session.close()


if __name__ == "__main__":
    main()
