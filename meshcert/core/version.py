"""The tool's version, kept in the core so reports and User-Agent headers need not import the
CLI package (`meshcert.__version__` re-exports it). Matches `version` in pyproject.toml."""

__version__ = "0.1.0"
