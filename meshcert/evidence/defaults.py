"""Names and defaults the CLI shows in `--help`, in a module that imports nothing, so that
registering the commands stays cheap (`meshcert.evidence.stats` and `meshcert.evidence.rules`
re-export them)."""

REQUIRE_GATES = "GLM52_PHASE_E_REQUIRE_GATES"  # the script's variable (evidence.md)

DEFAULT_SEED = 20260601
DEFAULT_REPLICATES = 10_000
DEFAULT_REPEATS = 5  # `evidence run`: runs per variant
