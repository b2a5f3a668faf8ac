"""Where `package write` puts what it makes, checked before a byte is written: the package
directory and every report file must be writable, so a long write does not end with a
package it cannot deliver a verdict for (`--report-out`, `--html`, ... in a folder that does
not exist, or one it may not write). Pure apart from reading the file system."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from meshcert.core.errors import Refused


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_outputs(out_dir: str, reports: Iterable[str] = ()) -> None:
    """Refused when `out_dir` cannot be made or written, or a report file's folder does not
    exist or cannot be written (nothing is created here)."""
    root = Path(out_dir).absolute()
    if root.exists() and not root.is_dir():
        raise Refused(f"--out-dir {out_dir}: exists and is not a directory", code="usage")
    base = _nearest_existing(root)
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise Refused(f"--out-dir {out_dir}: {base} is not a directory this user may write, "
                      "so the package cannot be written there", code="usage")
    for report in reports:
        where = Path(report).absolute()
        if where.is_dir():
            raise Refused(f"report file {report}: is a directory", code="usage")
        folder = where.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise Refused(f"report file {report}: its folder {folder} does not exist or "
                          "cannot be written, so the package's certification could not be "
                          "delivered", code="usage")
