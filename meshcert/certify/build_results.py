"""What materializing stages and running split parity produced (data only, on the view)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from meshcert.certify.processes.death import WorkerDeath


@dataclass(frozen=True)
class StageBuild:
    """One materialized certification stage: a real GGUF file, or why there is none."""

    stage_id: str
    path: str | None = None  # the stage GGUF, when it was built (or reused) and re-opened
    size: int | None = None
    tensor_count: int = 0
    reused: bool = False  # provenance matched a stage built before
    error: str | None = None  # why the stage did not build or re-open
    not_run: str | None = None  # why it could not even be tried (not a package fault)
    death: WorkerDeath | None = None  # llama.cpp died re-opening it: undecided, not failed


# crashed: a llama.cpp worker died (signal, exit status, wall clock): undecided, like not_run
ParityStatus = Literal["passed", "failed", "not_run", "crashed"]


@dataclass(frozen=True)
class Divergence:
    prompt_index: int
    prompt: str
    position: int  # generated-token position (0 = the first token after the prompt); -1 prompt
    source_token: int | None
    package_token: int | None
    max_logit_diff: float  # largest |source - package| at the compared positions


@dataclass(frozen=True)
class ParityResult:
    status: ParityStatus
    detail: str
    prompts: int = 0
    tokens: int = 0
    divergence: Divergence | None = None
    assembled_bytes: int | None = None
    timings_s: dict[str, float] = field(default_factory=dict)
    death: WorkerDeath | None = None  # set when status is "crashed"
