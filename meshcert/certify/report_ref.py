"""RefInfo: where the certified package came from, as cert.json's `ref` records it.

A report model (meshcert.certify.report re-uses it) in a module of its own, because the package
sources build it before they read anything: a local certification builds it and starts
hashing, and the other report models (~17 ms of validators built at import) are imported with
the checks, beside the hashing, instead of before it (bench/whole_process.py verify).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class RefInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")  # as every report model's

    kind: Literal["local", "hf"]
    repo: str | None = None
    requested_revision: str | None = None
    resolved_commit: str | None = None
    pinned: bool
