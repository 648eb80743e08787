"""Taking over a plugin instance from the node that serves it.

Every plugin instance (``<model>/<plugin>/<aspect>``, e.g.
``robot/laser/laser``) is served by one node, which announces it with a
liveliness token on ``flotilla/<sim>/claims/<instance>/<node>``. Of two
claims, the node whose id sorts lower keeps the instance and the other
stands by, taking over when that claim goes. Flotilla's nodes are named
``<aspect>-<8 hex digits>``; a ``Claim`` here is named ``0-<name>``, which
sorts before them all: the built-in node stands by while it lives and takes
the instance back when it goes (its process ends, or ``release()``).
"""

from __future__ import annotations

from typing import Self

from flotilla.sim import Sim

#: Put before a claimant's name: sorts before every Flotilla node's id.
TAKEOVER_PREFIX = "0-"


class Claim:
    """Holds ``instance`` for this program until ``release()``."""

    def __init__(self, sim: Sim, instance: str, name: str) -> None:
        self.instance = instance
        self.node = f"{TAKEOVER_PREFIX}{name}"
        self.key = sim.keys.claim_token(instance, self.node)
        self._token = sim.session.liveliness().declare_token(self.key)

    def release(self) -> None:
        """Gives the instance back (the node standing by takes it over)."""
        self._token.undeclare()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
