"""Flotilla from Python.

Connect to a running simulation, read the world's description, subscribe
to any topic with decoded messages, publish ``cmd_vel`` and other inputs,
call the world's control operations and ROS services, follow the sim clock,
and take part in lockstep. The codecs, keys and protocols come from
Flotilla's Rust crates (``flotilla._native``); Zenoh is the transport.

>>> import flotilla
>>> sim = flotilla.Sim(connect="tcp/127.0.0.1:7450")
>>> scan = sim.subscribe("robot/scan").get(timeout=5)
>>> sim.cmd_vel("robot", linear=0.5)
"""

from flotilla import _native
from flotilla.claims import Claim
from flotilla.errors import FlotillaError, NoWorld, ServiceFailed, UnknownModel, UnknownTopic
from flotilla.lockstep import Participant
from flotilla.sim import Sim, Subscription

__all__ = [
    "Claim",
    "FlotillaError",
    "NoWorld",
    "Participant",
    "ServiceFailed",
    "Sim",
    "Subscription",
    "UnknownModel",
    "UnknownTopic",
    "decode",
    "encode",
    "message_types",
]


def message_types() -> list[str]:
    """Every ROS message type Flotilla speaks, ``package/msg/Type``."""
    return _native.message_types()


def decode(type_name: str, payload: bytes) -> dict:
    """The message of a CDR payload, as a dict (``ValueError`` if malformed)."""
    return _native.decode(type_name, payload)


def encode(type_name: str, message: dict) -> bytes:
    """The CDR payload of ``message``; fields left out keep their defaults."""
    return _native.encode(type_name, message)
