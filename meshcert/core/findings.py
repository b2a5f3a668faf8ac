"""The Finding model and the one constructor checks use to make findings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from meshcert.core.codes import CODES, Severity, entry


class Finding(BaseModel):
    """One problem (or note) about the package, with what to do about it."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(json_schema_extra={"enum": list(sorted(CODES))},
                      description="A code of the finding-code table (docs/finding-codes.md).")
    severity: Severity
    message: str
    path: str | None = None
    layer_index: int | None = None
    remediation: str = Field(description="What to do about it, from the finding-code table.")
    check: str | None = Field(default=None, description="Name of the check group that found it.")


def finding(
    code: str,
    message: str,
    *,
    path: str | None = None,
    layer_index: int | None = None,
    severity: Severity | None = None,
) -> Finding:
    """Build a finding whose severity and remediation come from the code table (a `severity`
    other than the code's default takes the remediation the code table gives for it)."""
    row = entry(code)
    emitted = severity or row.severity
    return Finding(
        code=code,
        severity=emitted,
        message=message,
        path=path,
        layer_index=layer_index,
        remediation=row.remediation_for(emitted),
    )
