"""The queue that loses nothing and repeats nothing: SQLite in WAL mode in the state folder.

- `deliveries`: every Webhook-Id seen, kept `delivery_days`; a replay is recognised and runs
  nothing.
- `tasks`: what deliveries asked for (a repo and a ref or pull request, not a commit). A newer
  task on the same ref supersedes a pending one of the same kind. A running task holds a lease
  (`lease_until`) that its worker renews; a task left running by a killed process is taken
  again when the next process starts, never while its worker may be alive (a stalled heartbeat
  is not a dead worker). At most one task runs per repo.
- `jobs`: certifications keyed by (repo, resolved commit, meshcert version, mesh-llm rules
  version, trust-policy digest). A job's stages are checkpointed (`certified`: the verdict and
  the signed envelope are stored; `published`: the envelope is in the attestation repo), so a
  restart resumes where the killed process stopped and a verdict that exists is re-posted,
  never recomputed.

One process owns a state folder at a time (`serve.lock`, flock): at start every task left
running by a killed process is pending again.
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.serve.config import ConfigError
from meshcert.serve.routing import TaskSpec

SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries(
  id TEXT PRIMARY KEY, received REAL NOT NULL, outcome TEXT NOT NULL, digest TEXT);
CREATE TABLE IF NOT EXISTS tasks(
  id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, repo TEXT NOT NULL,
  repo_type TEXT NOT NULL, ref TEXT NOT NULL, pr INTEGER, comment_id TEXT, hint TEXT,
  delivery TEXT, state TEXT NOT NULL, lease_until REAL NOT NULL DEFAULT 0,
  not_before REAL NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,
  created REAL NOT NULL, finished REAL, detail TEXT);
CREATE INDEX IF NOT EXISTS tasks_state ON tasks(state, not_before);
CREATE INDEX IF NOT EXISTS deliveries_received ON deliveries(received);
CREATE TABLE IF NOT EXISTS jobs(
  key TEXT PRIMARY KEY, repo TEXT NOT NULL, commit_sha TEXT NOT NULL, state TEXT NOT NULL,
  result TEXT, envelope TEXT, created REAL NOT NULL, finished REAL, runs INTEGER NOT NULL
  DEFAULT 0);
"""
PENDING, RUNNING, DONE, FAILED, SUPERSEDED = "pending", "running", "done", "failed", "superseded"
DAY_S = 86400.0


class QueueClosed(MeshcertError):
    """The service stopped while a worker still held a task (it is pending again)."""

    kind = ErrorKind.INTERRUPTED


@dataclass(frozen=True)
class Task:
    id: int
    kind: str
    repo: str
    repo_type: str
    ref: str
    pr: int | None
    comment_id: str | None
    hint: str | None
    attempts: int


@dataclass(frozen=True)
class Accepted:
    delivery: str
    replay: bool  # the Webhook-Id was seen before: nothing was queued
    queued: int
    superseded: int
    altered: bool = False  # a replay whose body differs from the first one's (not the Hub's)


@dataclass(frozen=True)
class Job:
    key: str
    repo: str
    commit: str
    state: str  # running | certified | published
    result: dict[str, Any] | None
    envelope: str | None
    runs: int


class Queue:
    def __init__(self, state_dir: Path, *, delivery_days: float = 7.0,
                 clock: Any = time.time) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._lock_file = open(state_dir / "serve.lock", "a+")  # noqa: SIM115 (held open)
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            raise ConfigError(f"another meshcert serve uses the state folder {state_dir}"
                              ) from None
        self.path = state_dir / "queue.sqlite3"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                   timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at each checkpoint
        self._db.executescript(SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(deliveries)")}
        if "digest" not in columns:  # a state folder from before the body digest was kept
            self._db.execute("ALTER TABLE deliveries ADD COLUMN digest TEXT")
        self._mutex = threading.RLock()
        self.closed = False
        self._clock = clock
        self.retention_s = delivery_days * DAY_S
        self.requeued_at_start = self._requeue_running()

    def close(self) -> None:
        with self._mutex:
            self.closed = True
            self._db.close()
            self._lock_file.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._mutex:
            if self.closed:
                raise QueueClosed("the queue is closed (the service is stopping)")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _requeue_running(self) -> int:
        """Tasks a killed process left running are pending again (this process owns the
        folder: nobody else can be running them)."""
        with self._tx() as db:
            return db.execute("UPDATE tasks SET state=?, lease_until=0 WHERE state=?",
                              (PENDING, RUNNING)).rowcount

    # --- ingress --------------------------------------------------------------------------
    def accept(self, delivery: str, specs: list[TaskSpec], outcome: str,
               digest: str | None = None) -> Accepted:
        """Record the delivery and queue its tasks, atomically; a known id queues nothing
        (`altered` when `digest`, the body's, differs from the first delivery's)."""
        return self.accept_many([(delivery, specs, outcome, digest)])[0]

    def accept_many(self, items: list[tuple[str, list[TaskSpec], str, str | None]]
                    ) -> list[Accepted]:
        """`accept` for deliveries that arrived together, in one transaction (group commit:
        one WAL write for all of them). Each is recorded as if alone and in order (a Webhook-Id
        twice in `items` is a replay the second time); none is recorded unless all are."""
        now = self._clock()
        with self._tx() as db:
            db.execute("DELETE FROM deliveries WHERE received < ?", (now - self.retention_s,))
            return [self._accept_one(db, now, *item) for item in items]

    @staticmethod
    def _accept_one(db: sqlite3.Connection, now: float, delivery: str, specs: list[TaskSpec],
                    outcome: str, digest: str | None) -> Accepted:
        seen = db.execute("SELECT digest FROM deliveries WHERE id=?", (delivery,)).fetchone()
        if seen is not None:
            altered = digest is not None and seen[0] is not None and seen[0] != digest
            return Accepted(delivery, True, 0, 0, altered)
        db.execute("INSERT INTO deliveries(id, received, outcome, digest) VALUES (?,?,?,?)",
                   (delivery, now, outcome, digest))
        superseded = 0
        for spec in specs:
            superseded += db.execute(
                "UPDATE tasks SET state=?, finished=?, detail=? WHERE state=? AND kind=? "
                "AND repo=? AND repo_type=? AND ref=?",
                (SUPERSEDED, now, f"superseded by delivery {delivery}", PENDING, spec.kind,
                 spec.repo, spec.repo_type, spec.ref)).rowcount
            db.execute(
                "INSERT INTO tasks(kind, repo, repo_type, ref, pr, comment_id, hint, "
                "delivery, state, created) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (spec.kind, spec.repo, spec.repo_type, spec.ref, spec.pr, spec.comment_id,
                 spec.hint, delivery, PENDING, now))
        return Accepted(delivery, False, len(specs), superseded)

    # --- workers --------------------------------------------------------------------------
    def claim(self, lease_s: float) -> Task | None:
        """The oldest pending task whose repo has none running, leased to the caller.

        A running task is never taken again here, even when its lease ran out: this process
        owns the folder, so its worker is alive (a stalled heartbeat is not a dead worker, and
        taking its task would run it twice); a killed process's tasks are pending again at
        the next start (`_requeue_running`)."""
        now = self._clock()
        with self._tx() as db:
            row = db.execute(
                "SELECT id, kind, repo, repo_type, ref, pr, comment_id, hint, attempts "
                "FROM tasks t WHERE state=? AND not_before <= ? AND NOT EXISTS (SELECT 1 "
                "FROM tasks r WHERE r.state=? AND r.repo=t.repo AND r.id != t.id) "
                "ORDER BY id LIMIT 1", (PENDING, now, RUNNING)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE tasks SET state=?, lease_until=?, attempts=attempts+1 "
                       "WHERE id=?", (RUNNING, now + lease_s, row[0]))
        return Task(id=row[0], kind=row[1], repo=row[2], repo_type=row[3], ref=row[4],
                    pr=row[5], comment_id=row[6], hint=row[7], attempts=row[8] + 1)

    def renew(self, task_id: int, lease_s: float) -> None:
        with self._tx() as db:
            db.execute("UPDATE tasks SET lease_until=? WHERE id=? AND state=?",
                       (self._clock() + lease_s, task_id, RUNNING))

    def finish(self, task_id: int, state: str, detail: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE tasks SET state=?, finished=?, detail=?, lease_until=0 "
                       "WHERE id=?", (state, self._clock(), detail, task_id))

    def retry_later(self, task_id: int, delay_s: float, detail: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE tasks SET state=?, lease_until=0, not_before=?, detail=? "
                       "WHERE id=?", (PENDING, self._clock() + delay_s, detail, task_id))

    def release(self, task_id: int, detail: str) -> None:
        """Give a running task back (SIGTERM before it finished): pending again, at once."""
        with self._tx() as db:
            db.execute("UPDATE tasks SET state=?, lease_until=0, attempts=max(attempts-1, 0),"
                       " detail=? WHERE id=? AND state=?", (PENDING, detail, task_id, RUNNING))

    # --- jobs -----------------------------------------------------------------------------
    def job(self, key: str, repo: str, commit: str) -> Job:
        """The job of `key`, created (state running) when new."""
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO jobs(key, repo, commit_sha, state, created) "
                       "VALUES (?,?,?,?,?)", (key, repo, commit, RUNNING, self._clock()))
            row = db.execute("SELECT key, repo, commit_sha, state, result, envelope, runs "
                             "FROM jobs WHERE key=?", (key,)).fetchone()
        result = json.loads(row[4]) if row[4] else None
        return Job(row[0], row[1], row[2], row[3], result, row[5], row[6])

    def job_certified(self, key: str, result: dict[str, Any], envelope: str | None) -> None:
        with self._tx() as db:
            db.execute("UPDATE jobs SET state='certified', result=?, envelope=?, "
                       "runs=runs+1 WHERE key=?", (json.dumps(result), envelope, key))

    def job_published(self, key: str, result: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute("UPDATE jobs SET state='published', result=?, finished=? WHERE key=?",
                       (json.dumps(result), self._clock(), key))

    def job_reset(self, key: str) -> None:
        """`/meshcert recheck`: certify this key again."""
        with self._tx() as db:
            db.execute("UPDATE jobs SET state='running' WHERE key=?", (key,))

    # --- status ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        with self._mutex:
            rows = self._db.execute("SELECT state, count(*) FROM tasks GROUP BY state")
            out = {state: 0 for state in (PENDING, RUNNING, DONE, FAILED, SUPERSEDED)}
            out.update({str(s): int(n) for s, n in rows})
            out["deliveries"] = int(self._db.execute(
                "SELECT count(*) FROM deliveries").fetchone()[0])
            out["jobs"] = int(self._db.execute("SELECT count(*) FROM jobs").fetchone()[0])
            out["certifications"] = int(self._db.execute(
                "SELECT coalesce(sum(runs), 0) FROM jobs").fetchone()[0])
            return out

    def tasks(self, states: tuple[str, ...], limit: int = 50) -> list[dict[str, Any]]:
        marks = ",".join("?" * len(states))
        with self._mutex:
            rows = self._db.execute(
                f"SELECT id, kind, repo, ref, state, attempts, created, finished, detail "
                f"FROM tasks WHERE state IN ({marks}) ORDER BY id DESC LIMIT ?",
                (*states, limit)).fetchall()
        names = ("id", "kind", "repo", "ref", "state", "attempts", "created", "finished",
                 "detail")
        return [dict(zip(names, row, strict=True)) for row in rows]

    def verdicts(self, limit: int = 50) -> list[dict[str, Any]]:
        with self._mutex:
            rows = self._db.execute(
                "SELECT result FROM jobs WHERE result IS NOT NULL ORDER BY created DESC "
                "LIMIT ?", (limit,)).fetchall()
        return [json.loads(r[0]) for r in rows]
