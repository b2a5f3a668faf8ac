"""Load a report JSON of either kind into its pydantic model, telling the kinds apart by fields.

`cert.json` has `package_gate` (mesh-llm's report shape); an evidence report has `decisions`.
Anything else, or a file that does not validate, raises `ReportLoadError` with a message fit to
show a user as-is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ValidationError

from meshcert.certify.report import CertReport
from meshcert.core.errors import ErrorKind, MeshcertError

if TYPE_CHECKING:
    from meshcert.evidence.report import EvidenceReport

ReportKind = Literal["cert", "evidence"]
MAX_ERRORS_SHOWN = 5


class ReportLoadError(MeshcertError, ValueError):
    """The file is unreadable, not JSON, or not a meshcert report."""

    kind = ErrorKind.USAGE


def detect_kind(data: Any) -> ReportKind:
    if not isinstance(data, dict):
        raise ReportLoadError(
            f"expected a JSON object (a meshcert report), got {type(data).__name__}")
    if "package_gate" in data:
        return "cert"
    if "decisions" in data:
        return "evidence"
    raise ReportLoadError(
        "not a meshcert report: expected cert.json (with 'package_gate') or an evidence "
        "report (with 'decisions')")


def _describe(error: ValidationError, kind: str) -> str:
    lines = []
    for item in error.errors()[:MAX_ERRORS_SHOWN]:
        where = ".".join(str(p) for p in item["loc"]) or "(top level)"
        lines.append(f"  {where}: {item['msg']}")
    more = error.error_count() - MAX_ERRORS_SHOWN
    if more > 0:
        lines.append(f"  ... and {more} more")
    return f"invalid {kind} report ({error.error_count()} problem(s)):\n" + "\n".join(lines)


def _evidence_model() -> type[BaseModel]:
    try:
        from meshcert.evidence.report import EvidenceReport
    except ImportError as exc:  # pragma: no cover - without evidence/report.py
        raise ReportLoadError(f"evidence reports are not supported by this build: {exc}") from None
    return EvidenceReport


def parse_report(data: Any) -> CertReport | EvidenceReport:
    """Validate already-decoded JSON into the right model."""
    kind = detect_kind(data)
    model: type[BaseModel] = CertReport if kind == "cert" else _evidence_model()
    try:
        return cast("CertReport | EvidenceReport", model.model_validate(data))
    except ValidationError as exc:
        label = "certification" if kind == "cert" else "evidence"
        raise ReportLoadError(_describe(exc, label)) from None


def load_report(path: str | Path) -> CertReport | EvidenceReport:
    """Read and validate a report file (cert.json or an evidence report)."""
    target = Path(path)
    try:
        raw = target.read_bytes()
    except OSError as exc:
        raise ReportLoadError(f"cannot read {target}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReportLoadError(f"{target} is not valid JSON: {exc}") from None
    try:
        return parse_report(data)
    except ReportLoadError as exc:
        raise ReportLoadError(f"{target}: {exc}") from None
