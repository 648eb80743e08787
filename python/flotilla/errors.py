"""The exceptions the package raises: each names what was wrong."""


class FlotillaError(Exception):
    """Anything the simulation refused or did not answer."""


class NoWorld(FlotillaError):
    """No world answered on the endpoint and simulation id given."""


class UnknownModel(FlotillaError, KeyError):
    """A model name the world does not have."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownTopic(FlotillaError, KeyError):
    """A topic whose type the world's description does not give."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ServiceFailed(FlotillaError):
    """A control operation or service the world answered with a failure."""
