"""The service's own `catalog recheck`: every `[recheck] interval_hours`, each configured
catalog certified against each `[[recheck.release]]` (in the certification pool's worker
processes), the release matrix updated and, with `open_discussions`, one discussion opened per
package a release refuses (never two)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from meshcert.core.errors import MeshcertError
from meshcert.serve.config import ServeConfig
from meshcert.serve.hub_side import ServeHub
from meshcert.serve.release_matrix import (
    Recheck,
    add_release,
    load_matrix,
    open_discussions,
    recheck_catalog,
    write_matrix,
)

log = logging.getLogger("meshcert.serve")
Run = Callable[[str, str, "str | None"], Recheck]


class RecheckSchedule:
    def __init__(self, config: ServeConfig, hub: ServeHub, run: Run | None = None) -> None:
        self.config = config
        self.hub = hub
        self._run: Run = run or (lambda catalog, release, abi: recheck_catalog(
            catalog, release, abi))
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def matrix_path(self) -> str:
        return str(self.config.path(self.config.recheck.matrix))

    def start(self) -> None:
        recheck = self.config.recheck
        if recheck.interval_hours <= 0 or not recheck.release or not self.config.catalog:
            return
        self._thread = threading.Thread(target=self._loop, name="meshcert-recheck",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self.run_once()
            self._stopping.wait(self.config.recheck.interval_hours * 3600)

    def run_once(self) -> list[Recheck]:
        done: list[Recheck] = []
        for catalog in self.config.catalog:
            for release in self.config.recheck.release:
                text = f"hf://datasets/{catalog.repo}"
                try:
                    result = self._run(text, release.mesh_llm, release.runtime_abi)
                    if self.config.recheck.open_discussions:
                        open_discussions(result, self.hub)
                    matrix = add_release(load_matrix(self.matrix_path), result, text)
                    write_matrix(self.matrix_path, matrix)  # last: the run is complete
                except (MeshcertError, ValueError, OSError) as exc:
                    log.error("recheck of %s against mesh-llm %s failed: %s", catalog.repo,
                              release.mesh_llm, exc)
                    continue
                log.info("recheck of %s against mesh-llm %s: %d package(s) load, %d refused, "
                         "%d discussion(s) opened", catalog.repo, release.mesh_llm,
                         sum(c.verdict == "loads" for c in result.cells), len(result.refused),
                         len(result.opened))
                done.append(result)
        return done
