"""What `meshcert package write` and `package plan` print besides their summary lines: the
write's progress on stderr (bytes, artifacts, rate, ETA) and a plan's publisher lines. The
commands are in meshcert/cli/package_cmd.py (cli/cert_console.py is the same for `models
certify`)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meshcert.writer.plan_report import PackagePlanReport


class LineProgress:
    """Bytes, artifacts, rate and ETA on stderr: rewritten in place on a terminal, a line
    every few seconds otherwise. Also a certification ProgressObserver."""

    def __init__(self, every_s: float | None = None) -> None:
        self._tty = sys.stderr.isatty()
        self._every = every_s if every_s is not None else (0.2 if self._tty else 5.0)
        self._lock = threading.Lock()
        self._label, self._total, self._done = "", 0, 0
        self._artifacts, self._artifacts_total = 0, 0
        self._started = self._shown = 0.0

    def begin(self, label: str, total: int | None) -> None:
        with self._lock:
            self._label, self._total, self._done = label, total or 0, 0
            self._artifacts = self._artifacts_total = 0
            self._started = self._shown = time.monotonic()

    def advance(self, amount: int) -> None:
        with self._lock:
            self._done += amount
            self._maybe_show()

    def artifact_done(self, path: str, done: int, total: int) -> None:
        with self._lock:
            self._artifacts, self._artifacts_total = done, total
            self._maybe_show()

    def end(self) -> None:
        with self._lock:
            if not self._total:
                return  # nothing was to be done (e.g. every digest already known)
            self._show()
            if self._tty:
                sys.stderr.write("\n")
                sys.stderr.flush()

    def _maybe_show(self) -> None:
        if time.monotonic() - self._shown >= self._every:
            self._show()

    def _show(self) -> None:
        self._shown = now = time.monotonic()
        elapsed = max(now - self._started, 1e-9)
        rate = self._done / elapsed
        line = f"{self._label}: {self._done / 1e9:.2f}/{self._total / 1e9:.2f} GB"
        if self._artifacts_total:
            line += f", {self._artifacts}/{self._artifacts_total} artifacts"
        line += f", {rate / 1e9:.2f} GB/s"
        if rate > 0 and self._total > self._done:
            line += f", ETA {(self._total - self._done) / rate:.0f} s"
        sys.stderr.write(("\r" + line + "\x1b[K") if self._tty else line + "\n")
        sys.stderr.flush()


def publisher_lines(report: PackagePlanReport) -> list[str]:
    """The publisher files, typed defaults and request profiles of a plan, one line each."""
    lines = [f"publisher metadata: {p.source_path} ({p.role}) -> {p.path}"
             + (" [picked up from the source revision]" if p.picked_up else "")
             for p in report.publisher_metadata]
    if report.publisher_defaults is not None:
        declared = [f"{slot} {d.dtype} ({d.artifact_id} {d.json_path})"
                    for slot, d in (("compute_dtype", report.publisher_defaults.compute_dtype),
                                    ("kv_cache_dtype", report.publisher_defaults.kv_cache_dtype))
                    if d is not None]
        lines.append("publisher defaults: " + (", ".join(declared) if declared
                                               else "{} (none declared)"))
    if report.request_defaults is not None:
        rd = report.request_defaults
        lines.append(f"request defaults: profiles {', '.join(rd.profiles)}; default "
                     f"{rd.default}" + (f"; reasoning on {rd.reasoning_enabled}"
                                        if rd.reasoning_enabled else "")
                     + (f"; reasoning off {rd.reasoning_disabled}"
                        if rd.reasoning_disabled else ""))
    if report.speculative_decoding is not None:
        lines.append(f"speculative decoding: {report.speculative_decoding}"
                     + (" (kept beside request_defaults)" if report.request_defaults
                        else ""))
    return lines
