"""Re-export of the atomic writer, which lives in the core (`certify.atomic`) so that the core
never imports the CLI package."""

from certify.atomic import write_atomic

__all__ = ["write_atomic"]
