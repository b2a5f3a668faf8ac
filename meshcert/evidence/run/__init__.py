"""`evidence run`: run a fixture command N times per variant, interleaved, and decide.

    plan = RunPlan(command=("test-backend-ops", "perf", "-o", "ADD"),
                   variants=(Variant("baseline"), Variant("candidate", env={"X": "1"})),
                   repeats=5)
    session = run_plan(plan, out_dir)          # every run recorded: ok, failed, interrupted...
    outcome = evidence_from_runs(session, out_dir, settings=load_settings())

Modules: `plan` (variants and the A B A B order), `execute` (one process, both streams
captured; the only subprocess I/O), `provenance` (binary sha256, version line, host),
`runner` (the loop and its records), `feed` (runs -> ingest -> gate/report). No printing:
progress goes to an observer.
"""

from __future__ import annotations

from meshcert.evidence.run.execute import Execution, Executor, SubprocessExecutor
from meshcert.evidence.run.feed import RunEvidence, evidence_from_runs
from meshcert.evidence.run.plan import PlanError, RunPlan, Variant, build_variants
from meshcert.evidence.run.runner import RunObserver, RunRecord, RunSession, run_plan

__all__ = [
    "Execution",
    "Executor",
    "PlanError",
    "RunEvidence",
    "RunObserver",
    "RunPlan",
    "RunRecord",
    "RunSession",
    "SubprocessExecutor",
    "Variant",
    "build_variants",
    "evidence_from_runs",
    "run_plan",
]
