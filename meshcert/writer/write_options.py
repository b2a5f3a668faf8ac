"""The rules of `package write`'s and `package plan`'s options, beside the `WriteRequest` they
make: each raises one `OptionError` (meshcert.core.usage) before anything is read or written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshcert.core.usage import OptionError, positive

if TYPE_CHECKING:
    from meshcert.writer.artifact import Format


def package_format(fmt: str) -> Format:
    """`--format`: v2 or v1."""
    if fmt not in ("v2", "v1"):
        raise OptionError("must be v2 or v1", "--format")
    return "v1" if fmt == "v1" else "v2"


def check_write_options(fmt: str, max_artifact_bytes: int) -> Format:
    """`package write`: the format, and a positive artifact cap."""
    checked = package_format(fmt)
    positive(max_artifact_bytes, "--max-artifact-bytes")
    return checked


def check_plan_options(fmt: str, stages: int, max_artifact_bytes: int) -> Format:
    """`package plan`: the format, a positive number of stages and artifact cap."""
    checked = package_format(fmt)
    positive(stages, "--stages")
    positive(max_artifact_bytes, "--max-artifact-bytes")
    return checked
