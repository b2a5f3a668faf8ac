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

from meshcert.certify.report import SCHEMA_VERSION, CertReport
from meshcert.core.errors import ErrorKind, MeshcertError, Refused

if TYPE_CHECKING:
    from meshcert.evidence.report import EvidenceReport

ReportKind = Literal["cert", "evidence"]
MAX_ERRORS_SHOWN = 5


class ReportLoadError(MeshcertError, ValueError):
    """The file is unreadable, not JSON, or not a meshcert report."""

    kind = ErrorKind.USAGE


class NewerSchema(Refused, ReportLoadError):
    """A report of a schema version this meshcert does not know (written by a newer one)."""

    kind = ErrorKind.REFUSAL

    def __init__(self, message: str) -> None:
        Refused.__init__(self, message)


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
    from meshcert.core.validation import field_path

    lines = []
    for item in error.errors()[:MAX_ERRORS_SHOWN]:
        where = field_path(item["loc"])
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
    version = data.get("schema_version")
    if kind == "cert" and isinstance(version, int) and not isinstance(version, bool) \
            and version > SCHEMA_VERSION:
        raise NewerSchema(f"a cert.json of schema_version {version}, newer than the "
                          f"{SCHEMA_VERSION} this meshcert reads: upgrade meshcert to render it "
                          "(nothing of it was read)")
    model: type[BaseModel] = CertReport if kind == "cert" else _evidence_model()
    try:
        return cast("CertReport | EvidenceReport", model.model_validate(data))
    except ValidationError as exc:
        label = "certification" if kind == "cert" else "evidence"
        raise ReportLoadError(_describe(exc, label)) from None


def load_report(path: str | Path, *, what: str = "rendered") -> CertReport | EvidenceReport:
    """Read and validate a report file (cert.json or an evidence report). A cert.json whose
    verdict contradicts its contents is refused (meshcert.reports.consistency), as is one of a
    newer schema; `what` is what would have been done with it."""
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
        report = parse_report(data)
    except NewerSchema as exc:
        raise NewerSchema(f"{target} is {exc}") from None
    except ReportLoadError as exc:
        raise ReportLoadError(f"{target}: {exc}") from None
    if isinstance(report, CertReport):
        from meshcert.reports.consistency import refuse_contradictions

        refuse_contradictions(report, str(target), what)
    return report
