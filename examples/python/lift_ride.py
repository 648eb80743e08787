#!/usr/bin/env python3
"""The building demo's rider, with nothing but Zenoh (pip install eclipse-zenoh):
it calls the lift to floor 1 (Open-RMF's rmf_lift_msgs/LiftRequest on
lift_requests), drives in when the door is open, sends the lift to floor 2,
and drives out when it has arrived with the door open, printing each
LiftState that changes.

  flotilla run configs/building/lift.world.yaml \\
      --exec "python3 examples/python/lift_ride.py"

(`flotilla run` gives an --exec program the endpoint in FLOTILLA_ENDPOINT.)
The messages are packed by hand here (CDR, as rmw writes it); run the world
in realtime mode: the driving is open loop, in wall time.
"""

import argparse
import math
import os
import struct
import threading
import time

import zenoh

REQUEST_AGV_MODE = 1
DOOR_OPEN = 2
MOTION = {0: "stopped", 1: "going up", 2: "going down", 3: "unknown"}
DOOR = {0: "closed", 1: "moving", 2: "open"}


class CdrWriter:
    """Little-endian CDR, aligned as rmw aligns (from after the 4-byte header)."""

    def __init__(self) -> None:
        self.body = bytearray()

    def align(self, size: int) -> None:
        self.body += b"\x00" * (-len(self.body) % size)

    def u8(self, value: int) -> "CdrWriter":
        self.body += struct.pack("<B", value)
        return self

    def u32(self, value: int) -> "CdrWriter":
        self.align(4)
        self.body += struct.pack("<I", value)
        return self

    def i32(self, value: int) -> "CdrWriter":
        self.align(4)
        self.body += struct.pack("<i", value)
        return self

    def string(self, text: str) -> "CdrWriter":
        data = text.encode() + b"\x00"
        self.u32(len(data))
        self.body += data
        return self

    def bytes(self) -> bytes:
        return b"\x00\x01\x00\x00" + bytes(self.body)


class CdrReader:
    def __init__(self, payload: bytes) -> None:
        self.data, self.at = payload[4:], 0

    def align(self, size: int) -> None:
        self.at += -self.at % size

    def u8(self) -> int:
        self.at += 1
        return self.data[self.at - 1]

    def u32(self) -> int:
        self.align(4)
        (value,) = struct.unpack_from("<I", self.data, self.at)
        self.at += 4
        return value

    def string(self) -> str:
        length = self.u32()
        text = self.data[self.at : self.at + length - 1].decode()
        self.at += length
        return text


def lift_request(lift: str, floor: str) -> bytes:
    """rmf_lift_msgs/LiftRequest: to `floor` in AGV mode, door open there."""
    w = CdrWriter().string(lift).i32(0).u32(0).string("lift_ride").u8(REQUEST_AGV_MODE)
    return w.string(floor).u8(DOOR_OPEN).bytes()


def lift_state(payload: bytes) -> tuple[str, str, str, int, int]:
    """rmf_lift_msgs/LiftState: (lift, current floor, destination, door, motion)."""
    r = CdrReader(payload)
    r.u32(), r.u32()  # lift_time
    name = r.string()
    for _ in range(r.u32()):  # available_floors
        r.string()
    current, destination = r.string(), r.string()
    return name, current, destination, r.u8(), r.u8()


def twist(v: float, w: float) -> bytes:
    """CDR geometry_msgs/Twist: linear (v, 0, 0), angular (0, 0, w)."""
    return b"\x00\x01\x00\x00" + struct.pack("<6d", v, 0, 0, 0, 0, w)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connect", default=os.environ.get("FLOTILLA_ENDPOINT", "tcp/127.0.0.1:7450"))
    parser.add_argument("--robot", default="rider", help="namespace of the robot")
    parser.add_argument("--lift", default="lift", help="the lift's name")
    parser.add_argument("--speed", type=float, default=0.5, help="m/s")
    args = parser.parse_args()

    conf = zenoh.Config()
    conf.insert_json5("mode", '"client"')
    conf.insert_json5("connect/endpoints", f'["{args.connect}"]')
    conf.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(conf)
    robot = args.robot

    latest: dict[str, tuple[str, str, str, int, int]] = {}
    changed = threading.Condition()

    def on_state(sample: zenoh.Sample) -> None:
        state = lift_state(sample.payload.to_bytes())
        if state[0] != args.lift:
            return
        with changed:
            if latest.get("lift") != state:
                _, current, destination, door, motion = state
                print(f"lift: at {current}, to {destination}, door {DOOR[door]}, {MOTION[motion]}", flush=True)
            latest["lift"] = state
            changed.notify_all()

    session.declare_subscriber("lift_states", on_state)

    def call(floor: str) -> None:
        """Asks the lift to `floor` (again each second, as Open-RMF's lift
        supervisor does) until it stands there with its door open."""
        print(f"{robot}: lift to {floor}", flush=True)
        with changed:
            while True:
                session.put("lift_requests", lift_request(args.lift, floor), congestion_control=zenoh.CongestionControl.BLOCK)
                state = latest.get("lift")
                if state and state[1] == floor and state[3] == DOOR_OPEN and state[4] == 0:
                    return
                changed.wait(1.0)

    def drive(v: float, w: float, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            session.put(f"{robot}/cmd_vel", twist(v, w), congestion_control=zenoh.CongestionControl.BLOCK)
            time.sleep(0.1)
        session.put(f"{robot}/cmd_vel", twist(0, 0), congestion_control=zenoh.CongestionControl.BLOCK)

    time.sleep(3.0)  # the nodes come up
    call("L1")
    # (26.5, 9.7) -> (29.8, 9.7): through the door at x = 28.8 m into the cabin
    drive(args.speed, 0.0, 3.3 / args.speed)
    call("L2")
    drive(0.0, 1.0, math.pi)  # turn to the door
    drive(args.speed, 0.0, 2.5 / args.speed)  # out onto floor 2
    print(f"{robot}: arrived on floor 2", flush=True)
    session.close()


if __name__ == "__main__":
    main()
