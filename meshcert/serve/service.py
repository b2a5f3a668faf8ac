"""The service's pieces wired together from a ServeConfig: the secret (from the environment),
the signing key (loaded once, never written anywhere), the queue in the state folder, the Hub
door and the workers."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from meshcert.core.errors import MeshcertError
from meshcert.serve.certifier import CertifyPool
from meshcert.serve.config import ConfigError, ServeConfig
from meshcert.serve.hub_side import ServeHub
from meshcert.serve.queue import Queue
from meshcert.serve.schedule import RecheckSchedule
from meshcert.serve.worker import Certify, Workers

WARM_DIR = "warm"  # an empty folder in the state folder: what each worker's warm-up certifies

log = logging.getLogger("meshcert.serve")


@dataclass
class Service:
    config: ServeConfig
    queue: Queue
    workers: Workers
    hub: ServeHub
    secret: str = field(repr=False)
    pool: CertifyPool | None = None
    schedule: RecheckSchedule | None = None
    started: float = field(default_factory=time.time)

    def start(self) -> None:
        if self.queue.requeued_at_start:
            log.warning("%d task(s) left running by a stopped process are queued again",
                        self.queue.requeued_at_start)
        threading.Thread(target=self._identify, name="meshcert-whoami", daemon=True).start()
        self.workers.start()
        if self.schedule is not None:
            self.schedule.start()
        log.info("meshcert serve: %d worker(s), state in %s, attestations to %s",
                 self.config.budgets.max_jobs, self.config.state_dir,
                 self.config.attestations.repo)

    def _identify(self) -> None:
        """Who the token is, asked once at start (its comments are found by it)."""
        try:
            log.info("commenting as %s", self.hub.me())
        except MeshcertError as exc:
            log.error("the Hub token cannot be used yet (comments will fail until it can): "
                      "%s", exc)

    def stop(self) -> None:
        if self.schedule is not None:
            self.schedule.stop()
        self.workers.stop()
        if self.pool is not None:
            self.pool.close()
        self.queue.close()


def open_service(config: ServeConfig, *, environ: Mapping[str, str] | None = None,
                 certify: Certify | None = None, hub: ServeHub | None = None) -> Service:
    """ConfigError (a usage error) when the secret, the key or the state folder is unusable."""
    from meshcert.attest.keys import PASSPHRASE_ENV, KeyFileError, load_private_spec

    env = dict(os.environ if environ is None else environ)
    secret = config.secret(env)
    spec = config.signing.key
    key_spec = spec if spec.startswith("env:") else str(config.path(spec))
    try:
        key = load_private_spec(key_spec)
    except KeyFileError as exc:
        raise ConfigError(f"[signing] key: {exc}") from None
    if environ is None:  # loaded: no process this one starts inherits the key or its passphrase
        for name in (spec[len("env:"):] if spec.startswith("env:") else None, PASSPHRASE_ENV):
            if name:
                os.environ.pop(name, None)
    queue = Queue(config.state_dir, delivery_days=config.state.delivery_days)
    pool = None
    if certify is None:
        warm = os.path.join(config.state_dir, WARM_DIR)
        os.makedirs(warm, exist_ok=True)
        pool = CertifyPool(key, config.signing.verifier_id, config.budgets.max_jobs, warm,
                           config.hf_jobs)
    door = hub or ServeHub()
    workers = Workers(config, queue, door, key, certify=certify or pool)
    schedule = RecheckSchedule(config, door, pool.recheck if pool is not None else None)
    return Service(config, queue, workers, door, secret, pool=pool, schedule=schedule)
