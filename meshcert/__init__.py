"""meshcert: certification and benchmark evidence for mesh-llm layer packages."""

from meshcert.core.version import __version__

__all__ = ["__version__"]
