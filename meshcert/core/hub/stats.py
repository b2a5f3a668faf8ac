"""Thread-safe counts of what a certification run asked of the Hub."""

from __future__ import annotations

import threading


class TransferCounter:
    """Requests sent and content bytes received (manifest, README, header ranges, streams).

    API answers (model_info, refs) count as requests; their JSON bodies are not counted as
    bytes, because huggingface_hub does not expose them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.bytes_transferred = 0
        self.header_bytes = 0

    def request(self, n: int = 1) -> None:
        with self._lock:
            self.requests += n

    def received(self, n: int, *, header: bool = False) -> None:
        with self._lock:
            self.bytes_transferred += n
            if header:
                self.header_bytes += n

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {"requests": self.requests, "bytes_transferred": self.bytes_transferred,
                    "header_bytes": self.header_bytes}
