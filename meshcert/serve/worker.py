"""The workers: each claims a queued task (one per repo at a time, `max_jobs` at once), holds
its lease while it runs, and records how it ended.

A task resolves every commit through the Hub (never the payload's), runs the certification
jobs it needs (each checkpointed in the queue: a verdict that exists is re-used, a signed
envelope is uploaded once), and posts or edits its pull request's comment. A Hub that fails
(unreachable, 5xx after the door's retries, rate limits) makes the task wait and try again,
`max_attempts` times; a definite answer (the repo or the ref is gone) ends it at once. Every
outcome is one log line.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meshcert.attest.attestation_repo import attestation_path, web_url
from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.hub.errors import HubError
from meshcert.serve import comments
from meshcert.serve.catalog_pr import changes, touched_entries
from meshcert.serve.certifier import Certified, certify_commit, failed_result, job_key
from meshcert.serve.config import ServeConfig
from meshcert.serve.hub_side import ServeHub
from meshcert.serve.queue import DONE, FAILED, Queue, QueueClosed, Task
from meshcert.serve.routing import CATALOG_PR, MAIN, PACKAGE, PACKAGE_PR, RECHECK, RECHECK_KIND

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

log = logging.getLogger("meshcert.serve")
POLL_S = 1.0  # a task whose retry time came, or a lease run out, is seen this late
Certify = Callable[[str, str], Certified]


class RetryLater(MeshcertError):
    """The task could not finish now (a certification incomplete): try it again later."""

    kind = ErrorKind.INCOMPLETE


@dataclass
class Running:
    task: Task
    done: threading.Event = field(default_factory=threading.Event)


class Workers:
    def __init__(self, config: ServeConfig, queue: Queue, hub: ServeHub,
                 key: Ed25519PrivateKey, *, certify: Certify | None = None) -> None:
        self.config = config
        self.queue = queue
        self.hub = hub
        self.trust_digest = config.trust_digest()
        self._certify = certify or (lambda repo, commit: certify_commit(
            repo, commit, key, config.signing.verifier_id, config.hf_jobs))
        self._stopping = threading.Event()
        self._work = threading.Condition()  # notified when a delivery queued a task
        self._threads: list[threading.Thread] = []
        self._running: dict[int, Running] = {}
        self._key_locks = [threading.Lock() for _ in range(64)]
        self._lock = threading.Lock()

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        for i in range(self.config.budgets.max_jobs):
            thread = threading.Thread(target=self._loop, name=f"meshcert-serve-{i}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> list[int]:
        """SIGTERM: take no new task, let running ones finish for `drain_s`, give the rest
        back to the queue (pending again: the next start runs them). Their ids."""
        self._stopping.set()
        self.wake()
        with self._lock:
            running = list(self._running.values())
        for item in running:
            item.done.wait(self.config.budgets.drain_s)
        requeued: list[int] = []
        with self._lock:
            for item in self._running.values():
                self.queue.release(item.task.id, "requeued at shutdown")
                requeued.append(item.task.id)
                log.warning("task %d (%s %s %s) requeued at shutdown", item.task.id,
                            item.task.kind, item.task.repo, item.task.ref)
        return requeued

    def wake(self) -> None:
        """A task was queued: idle workers look now, not at their next poll."""
        with self._work:
            self._work.notify_all()

    def running(self) -> list[Task]:
        with self._lock:
            return [r.task for r in self._running.values()]

    def _loop(self) -> None:
        with contextlib.suppress(QueueClosed):  # stopped: stop() gave back what it held
            self._serve()

    def _serve(self) -> None:
        lease = self.config.budgets.lease_s
        while not self._stopping.is_set():
            task = self.queue.claim(lease)
            if task is None:
                with self._work:
                    self._work.wait(POLL_S)
                continue
            item = Running(task)
            with self._lock:
                self._running[task.id] = item
            beat = threading.Thread(target=self._heartbeat, args=(item,), daemon=True)
            beat.start()
            try:
                self.run(task)
            finally:
                item.done.set()
                with self._lock:
                    self._running.pop(task.id, None)

    def _heartbeat(self, item: Running) -> None:
        lease = self.config.budgets.lease_s
        while not item.done.wait(lease / 3):
            try:
                self.queue.renew(item.task.id, lease)
            except QueueClosed:
                return
            except sqlite3.Error as exc:  # the task keeps running; its lease is only shown
                log.warning("task %d: lease not renewed: %s", item.task.id, exc)

    # --- one task -------------------------------------------------------------------------
    def run(self, task: Task) -> None:
        where = f"task {task.id} ({task.kind} {task.repo} {task.ref})"
        budgets = self.config.budgets
        try:
            detail = self.handle(task)
        except (HubError, RetryLater) as exc:
            message = exc.message if isinstance(exc, HubError) else str(exc)
            definite = isinstance(exc, HubError) and not exc.incomplete
            if definite or task.attempts >= budgets.max_attempts:
                log.error("%s failed: %s", where, message)
                self.queue.finish(task.id, FAILED, message)
            else:
                log.warning("%s will be tried again in %.0f s (attempt %d of %d): %s", where,
                            budgets.retry_s, task.attempts, budgets.max_attempts, message)
                self.queue.retry_later(task.id, budgets.retry_s, message)
            return
        except QueueClosed:
            raise
        except Exception as exc:  # a bug: logged with its traceback, the task ends failed
            if self._stopping.is_set():
                log.warning("%s stopped with the service: %s", where, type(exc).__name__)
                return
            log.exception("%s failed unexpectedly", where)
            self.queue.finish(task.id, FAILED, f"internal error: {type(exc).__name__}")
            return
        log.info("%s done: %s", where, detail)
        self.queue.finish(task.id, DONE, detail)

    def handle(self, task: Task) -> str:
        if task.kind == PACKAGE:
            commit = self.hub.resolve(task.repo, "model", MAIN)
            self._hint(task, commit)
            result = self.job(task.repo, commit, last=self._last(task))
            return f"{result['status']} at {commit}"
        if task.kind == PACKAGE_PR and task.pr is not None:
            return self.package_pr(task, task.pr, force=False)
        if task.kind == CATALOG_PR and task.pr is not None:
            return self.catalog_pr(task, task.pr, force=False)
        if task.kind == RECHECK_KIND and task.pr is not None:
            return self.recheck(task, task.pr)
        return f"nothing to do for a {task.kind} task"

    def _last(self, task: Task) -> bool:
        return task.attempts >= self.config.budgets.max_attempts

    @staticmethod
    def _hint(task: Task, commit: str) -> None:
        if task.hint and task.hint.lower() != commit:
            log.warning("task %d: the payload said %s for %s %s, the Hub says %s: certifying "
                        "%s", task.id, task.hint, task.repo, task.ref, commit, commit)

    # --- jobs -----------------------------------------------------------------------------
    def job(self, repo: str, commit: str, *, force: bool = False, last: bool = False
            ) -> dict[str, Any]:
        """The verdict of `repo`@`commit`: re-used when its key has one, else certified,
        signed and uploaded (each stage checkpointed)."""
        key = job_key(repo, commit, self.trust_digest, self.config.hf_jobs.mode())
        # a catalog's task and a package's task may want the same key at once: one certifies,
        # the other re-uses its verdict (striped locks: memory stays flat)
        with self._key_locks[int(key[:8], 16) % len(self._key_locks)]:
            return self._job(key, repo, commit, force=force, last=last)

    def _job(self, key: str, repo: str, commit: str, *, force: bool, last: bool
             ) -> dict[str, Any]:
        job = self.queue.job(key, repo, commit)
        if force and job.state != "running":
            self.queue.job_reset(key)
            job = self.queue.job(key, repo, commit)
        if job.state == "published" and job.result is not None \
                and job.result["status"] != "incomplete":  # no verdict: certify again
            log.info("%s@%s: verdict re-used (%s)", repo, commit, job.result["status"])
            return job.result
        result, envelope = job.result, job.envelope
        if job.state in ("running", "published") or result is None:
            started = time.monotonic()
            certified = self._certify(repo, commit)
            log.info("%s@%s: certification %s in %.2f s", repo, commit,
                     certified.result["status"], time.monotonic() - started)
            if certified.result["status"] == "incomplete" and self._stopping.is_set():
                # SIGTERM ended the certification (its worker process stopped): no verdict to
                # record or post; stop() gave the task back to the queue
                raise QueueClosed(f"{repo}@{commit}: stopped with the service")
            if certified.result["status"] == "incomplete" and not last:
                raise RetryLater(f"{repo}@{commit}: {certified.result['sentence']}")
            result, envelope = certified.result, certified.envelope
            self.queue.job_certified(key, result, envelope)
        if envelope is not None:
            dataset = self.config.attestations.repo
            self.hub.upload(dataset, "dataset", attestation_path(repo, commit),
                            envelope.encode(), f"meshcert: {repo}@{commit} {result['status']}")
            result = {**result, "attestation_url": web_url(self.hub.endpoint, dataset, repo,
                                                           commit)}
        self.queue.job_published(key, result)
        return result

    # --- pull requests --------------------------------------------------------------------
    def package_pr(self, task: Task, num: int, *, force: bool) -> str:
        commit = self.hub.resolve(task.repo, "model", f"refs/pr/{num}")
        self._hint(task, commit)
        result = self.job(task.repo, commit, force=force, last=self._last(task))
        comments.upsert(self.hub, task.repo, "model", num, comments.package_comment(result))
        return f"{result['status']} at {commit}; commented on #{num}"

    def catalog_pr(self, task: Task, num: int, *, force: bool) -> str:
        details = self.hub.discussion(task.repo, "dataset", num)
        merged = details.status == "merged" and details.merge_commit_oid
        head = (str(details.merge_commit_oid) if merged else
                self.hub.resolve(task.repo, "dataset", f"refs/pr/{num}"))
        base_ref = details.target_branch or MAIN
        base = self.hub.resolve(task.repo, "dataset", base_ref)
        sections: list[tuple[str, dict[str, Any] | str]] = []
        found = [c for entry in touched_entries(details.diff) for c in changes(
            entry, self.hub.read_file(task.repo, "dataset", entry, head),
            None if merged else self.hub.read_file(task.repo, "dataset", entry, base))]
        limit = self.config.budgets.max_catalog_packages
        for change in found[:limit]:
            ref = change.reference
            title = (f"{ref.repo} ({change.entry}, variant {ref.variant})" if ref else
                     change.entry)
            if ref is None or change.problem is not None or ref.pinned_commit is None:
                sections.append((title, change.problem or "unreadable"))
                continue
            sections.append((title, self._pinned(ref.repo, ref.pinned_commit, force,
                                                 self._last(task))))
        if len(found) > limit:
            sections.append((f"{len(found) - limit} more package reference(s)",
                             f"over the budget of {limit} per pull request "
                             "([budgets] max_catalog_packages)"))
        comments.upsert(self.hub, task.repo, "dataset", num,
                        comments.catalog_comment(num, sections))
        return f"{len(sections)} package reference(s) at {head}; commented on #{num}"

    def _pinned(self, repo: str, pin: str, force: bool, last: bool) -> dict[str, Any] | str:
        """The verdict of a catalog pin, after asking the Hub that the commit exists."""
        try:
            commit = self.hub.resolve(repo, "model", pin)
        except HubError as err:
            if err.incomplete:
                raise
            return failed_result(repo, pin, err.message)
        return self.job(repo, commit, force=force, last=last)

    def recheck(self, task: Task, num: int) -> str:
        """`/meshcert recheck`: the pull request's jobs again, if its author may write."""
        details = self.hub.discussion(task.repo, task.repo_type, num)
        event = next((e for e in details.events if e.id == task.comment_id), None)
        # the payload's text is a hint too: the Hub's comment must ask for the recheck
        # (a forged or replayed delivery may name a maintainer's comment that does not)
        if event is None or getattr(event, "hidden", False) or not RECHECK.match(
                str(getattr(event, "content", "") or "")):
            log.warning("task %d: no /meshcert recheck comment %s on %s#%d on the Hub: "
                        "nothing run", task.id, task.comment_id, task.repo, num)
            return f"recheck ignored: the Hub has no /meshcert recheck comment {task.comment_id}"
        author = event.author
        if author is None or not self.hub.may_write(task.repo, author):
            log.warning("task %d: /meshcert recheck on %s#%d by %s refused: no write access",
                        task.id, task.repo, num, author or "an unknown user")
            return f"recheck refused: {author or 'an unknown user'} has no write access"
        if task.repo_type == "dataset":
            return self.catalog_pr(task, num, force=True)
        return self.package_pr(task, num, force=True)
