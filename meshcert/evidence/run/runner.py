"""The run loop: every planned run executed in A B A B order and recorded, whatever happens.

Each run leaves `runs/NNN-<variant>.log` (stdout and stderr merged as they arrived),
`.stdout.log` and `.stderr.log`, and a `RunRecord` in `runs.json` (rewritten atomically after
every run, so even a killed session leaves its record). A failed, timed-out or interrupted run
is recorded with its status and its output kept; after Ctrl-C the remaining runs are recorded
as `not-run`. Nothing is dropped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from meshcert.core.atomic import write_atomic
from meshcert.evidence.parsers.base import EVIDENCE_JSON, LLAMA_BENCH, TBO_CSV, TBO_SQL
from meshcert.evidence.parsers.detect import detect
from meshcert.evidence.run.execute import Execution, Executor, SubprocessExecutor
from meshcert.evidence.run.plan import PlannedRun, RunPlan
from meshcert.evidence.run.provenance import Provenance, host, redact_env, version_in

RecordStatus = Literal["ok", "failed", "timeout", "interrupted", "error", "not-run"]
MANIFEST = "runs.json"
MANIFEST_SCHEMA = "meshcert.evidence-runs"
RUNS_DIR = "runs"
# Formats that only parse from stdout alone (stderr chatter would break them).
_STDOUT_FORMATS = (LLAMA_BENCH, TBO_SQL, TBO_CSV, EVIDENCE_JSON)


@dataclass
class RunRecord:
    index: int
    variant: str
    repeat: int
    role: str  # "timed" (the --repeat runs) or "check" (once per variant)
    command: list[str]
    env: dict[str, str]  # the variant's overrides, secret-looking values masked
    cwd: str | None
    host: str
    status: RecordStatus
    started: str | None = None
    duration_s: float | None = None
    exit_status: int | None = None
    binary: str | None = None
    binary_sha256: str | None = None
    version: str | None = None
    error: str | None = None
    log: str | None = None  # merged output, relative to the out dir
    stdout_log: str | None = None
    stderr_log: str | None = None
    evidence_log: str | None = None  # the file ingest reads (one of the three)
    stream: str | None = None


@dataclass
class RunSession:
    plan: RunPlan
    out_dir: Path
    records: list[RunRecord] = field(default_factory=list)
    started: str = ""
    host: str = ""

    @property
    def interrupted(self) -> bool:
        return any(r.status == "interrupted" for r in self.records)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.records:
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts

    def manifest(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "schema": MANIFEST_SCHEMA, "version": 1, "started": self.started, "host": self.host,
            "plan": {"command": list(plan.command), "repeats": plan.repeats,
                     "order": "interleaved", "timeout_s": plan.timeout_s, "cwd": plan.cwd,
                     "stream": plan.stream, "checks": [list(c) for c in plan.checks],
                     "variants": [{"name": v.name, "env": redact_env(v.env),
                                   "args": list(v.args),
                                   "command": list(v.command) if v.command else None}
                                  for v in plan.variants]},
            "counts": self.counts(),
            "runs": [asdict(r) for r in self.records],
        }


class RunObserver(Protocol):
    def run_started(self, run: PlannedRun, total: int) -> None: ...

    def run_finished(self, record: RunRecord, total: int) -> None: ...


def run_plan(plan: RunPlan, out_dir: str | os.PathLike[str], *,
             executor: Executor | None = None, observer: RunObserver | None = None,
             base_env: Mapping[str, str] | None = None) -> RunSession:
    """Execute every planned run; stops early only on Ctrl-C (the rest become `not-run`)."""
    executor = executor or SubprocessExecutor()
    out = Path(out_dir)
    (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    session = RunSession(plan, out, started=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                         host=host())
    provenance = Provenance()
    environ = dict(os.environ if base_env is None else base_env)
    order = plan.order()
    for planned in order:
        if session.interrupted:
            session.records.append(_record(planned, plan, session.host, "not-run"))
            continue
        try:
            record = _run_one(planned, session, environ, provenance, executor, observer,
                              len(order))
        except KeyboardInterrupt:  # between processes (hashing, writing): same outcome
            record = _record(planned, plan, session.host, "interrupted")
            record.error = "interrupted (Ctrl-C) before this run finished"
        session.records.append(record)
        write_manifest(session)
        if observer is not None:
            observer.run_finished(record, len(order))
    write_manifest(session)
    return session


def _run_one(planned: PlannedRun, session: RunSession, environ: Mapping[str, str],
             provenance: Provenance, executor: Executor, observer: RunObserver | None,
             total: int) -> RunRecord:
    plan = session.plan
    if observer is not None:
        observer.run_started(planned, total)
    env = {**environ, **planned.variant.env}
    info = provenance.binary(planned.argv[0], env, plan.cwd)
    execution = executor.execute(planned.argv, env, plan.cwd, plan.timeout_s)
    record = _record(planned, plan, session.host, execution.status)
    record.started, record.duration_s = execution.started, execution.duration_s
    record.exit_status, record.error = execution.exit_status, execution.error
    record.binary, record.binary_sha256 = info.path, info.sha256
    if execution.status != "error":
        _keep_output(record, execution, session.out_dir, plan.stream)
        record.version = info.version or version_in(
            execution.merged.decode("utf-8", errors="replace"))
    return record


def _record(planned: PlannedRun, plan: RunPlan, host_name: str,
            status: RecordStatus) -> RunRecord:
    v = planned.variant
    return RunRecord(planned.index, v.name, planned.repeat, planned.role, list(planned.argv),
                     redact_env(v.env), plan.cwd, host_name, status)


def _keep_output(record: RunRecord, execution: Execution, out: Path, stream: str) -> None:
    check = "-check" if record.role == "check" else ""
    stem = f"{RUNS_DIR}/{record.index:03d}-{record.variant}{check}"
    files = {"merged": (f"{stem}.log", execution.merged),
             "stdout": (f"{stem}.stdout.log", execution.stdout),
             "stderr": (f"{stem}.stderr.log", execution.stderr)}
    for rel, data in files.values():
        (out / rel).write_bytes(data)  # raw bytes: ingest reports undecodable ones by line
    record.log, record.stdout_log, record.stderr_log = (files[k][0] for k in
                                                         ("merged", "stdout", "stderr"))
    chosen = stream if stream != "auto" else _auto_stream(execution.stdout)
    record.stream, record.evidence_log = chosen, files[chosen][0]


def _auto_stream(stdout: bytes) -> str:
    """stdout alone when it holds a machine format (llama-bench json/csv/sql/markdown,
    test-backend-ops sql); else both streams merged, as a terminal shows them."""
    text = stdout.decode("utf-8", errors="replace")
    return "stdout" if text.strip() and detect(text) in _STDOUT_FORMATS else "merged"


def write_manifest(session: RunSession) -> Path:
    return write_atomic(session.out_dir / MANIFEST,
                        json.dumps(session.manifest(), indent=2, ensure_ascii=False) + "\n")
