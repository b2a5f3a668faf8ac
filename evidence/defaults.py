"""The bootstrap defaults, in a module without numpy so the CLI can show them in `--help`
(`evidence.stats` re-exports them)."""

DEFAULT_SEED = 20260601
DEFAULT_REPLICATES = 10_000
