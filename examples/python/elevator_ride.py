#!/usr/bin/env python3
"""The building demo's rider, with nothing but Zenoh (pip install eclipse-zenoh):
it drives into the elevator on floor 1, closes the door (CLOSE-DOOR), rides to
floor 2 (GOTO-2) and drives out, printing each map change as the map-transition
manager announces it on rider/map_name.

  flotilla run configs/building/building.world.yaml \
      --exec "python3 examples/python/elevator_ride.py"

(`flotilla run` gives an --exec program the endpoint and sim id in
FLOTILLA_ENDPOINT and FLOTILLA_SIM.) Open loop, in wall time: run the world in
realtime mode.
"""

import argparse
import math
import os
import struct
import time

import zenoh


def twist(v: float, w: float) -> bytes:
    """CDR geometry_msgs/Twist: linear (v, 0, 0), angular (0, 0, w)."""
    return b"\x00\x01\x00\x00" + struct.pack("<6d", v, 0, 0, 0, 0, w)


def string(text: str) -> bytes:
    """CDR std_msgs/String."""
    data = text.encode() + b"\x00"
    return b"\x00\x01\x00\x00" + struct.pack("<I", len(data)) + data


def read_string(payload: bytes) -> str:
    (length,) = struct.unpack_from("<I", payload, 4)
    return payload[8 : 8 + length - 1].decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connect", default=os.environ.get("FLOTILLA_ENDPOINT", "tcp/127.0.0.1:7450"))
    parser.add_argument("--robot", default="rider", help="namespace of the robot")
    parser.add_argument("--speed", type=float, default=0.5, help="m/s")
    args = parser.parse_args()

    conf = zenoh.Config()
    conf.insert_json5("mode", '"client"')
    conf.insert_json5("connect/endpoints", f'["{args.connect}"]')
    conf.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(conf)
    robot = args.robot
    session.declare_subscriber(
        f"{robot}/map_name", lambda s: print(f"{robot} is on map {read_string(s.payload.to_bytes())}", flush=True)
    )

    def drive(v: float, w: float, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            session.put(f"{robot}/cmd_vel", twist(v, w), congestion_control=zenoh.CongestionControl.BLOCK)
            time.sleep(0.1)
        session.put(f"{robot}/cmd_vel", twist(0, 0), congestion_control=zenoh.CongestionControl.BLOCK)

    def command(text: str) -> None:
        print(f"{robot}: {text}", flush=True)
        session.put(f"{robot}/map_command", string(text), congestion_control=zenoh.CongestionControl.BLOCK)
        time.sleep(1.0)

    time.sleep(3.0)  # the nodes come up
    # (26.5, 9.7) -> (29.8, 9.7), through the open door at x = 28.8 m
    drive(args.speed, 0.0, 3.3 / args.speed)
    command("CLOSE-DOOR")
    time.sleep(2.0)  # the ride
    command("GOTO-2")
    drive(0.0, 1.0, math.pi)  # turn to the door
    drive(args.speed, 0.0, 3.0 / args.speed)  # out onto floor 2
    print(f"{robot}: arrived on floor 2", flush=True)
    session.close()


if __name__ == "__main__":
    main()
