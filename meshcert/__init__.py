"""meshcert: certification and benchmark evidence for mesh-llm layer packages."""

__version__ = "0.1.0"
