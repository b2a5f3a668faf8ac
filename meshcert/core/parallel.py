"""Run one job per item on a thread pool, stoppable with Ctrl-C, keeping what finished."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from meshcert.core.errors import ErrorKind, MeshcertError

R = TypeVar("R")


class Cancelled(MeshcertError, Generic[R]):
    """KeyboardInterrupt arrived: `results` holds the jobs that finished before it."""

    kind = ErrorKind.INTERRUPTED

    def __init__(self, results: dict[str, R]) -> None:
        super().__init__("cancelled")
        self.results = results


def map_cancellable(items: Iterable[str], work: Callable[[str, threading.Event], R], *,
                    workers: int, name: str) -> dict[str, R]:
    """`work(item, cancel)` for every item, `workers` at a time; results keyed by item.

    On KeyboardInterrupt the `cancel` event is set (jobs should poll it and stop early), the
    pool is drained, and Cancelled carries the results gathered so far.
    """
    todo = list(items)
    cancel = threading.Event()
    results: dict[str, R] = {}
    if workers <= 1 or len(todo) <= 1:  # no pool: starting threads costs more than it gives
        try:
            for item in todo:
                results[item] = work(item, cancel)
        except KeyboardInterrupt:
            cancel.set()
            raise Cancelled(results) from None
        return results
    from concurrent.futures import ThreadPoolExecutor  # with logging: only when a pool is used

    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo) or 1)),
                              thread_name_prefix=name)
    try:
        futures = [(item, pool.submit(work, item, cancel)) for item in todo]
        for item, future in futures:
            results[item] = future.result()
    except KeyboardInterrupt:
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise Cancelled(results) from None
    finally:
        pool.shutdown(wait=True)
    return results
