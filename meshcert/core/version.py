"""The tool's version, kept in the core so reports and User-Agent headers need not import the
CLI package (`meshcert.__version__` re-exports it). Matches `version` in pyproject.toml."""

__version__ = "0.1.0"

# The mesh-llm release whose package rules meshcert implements (shared/spec/mesh-llm-0.79.md:
# v0.79.0, 2026-11-10, the newest release; nothing after it is known). The one place this is
# said: the attestation predicate's "mesh-llm-rules" and the reports' tool.mesh_llm_version.
MESH_LLM_VERSION = "0.79.0"
