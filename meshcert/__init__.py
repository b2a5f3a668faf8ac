"""meshcert: certification and benchmark evidence for mesh-llm layer packages."""

from certify.version import __version__

__all__ = ["__version__"]
