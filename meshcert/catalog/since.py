"""`--since REPORT.json`: which packages a previous catalog report already certified (pure,
apart from reading the report)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from meshcert.catalog.entries import PackageReference
from meshcert.catalog.report import (
    CatalogOptions,
    CatalogPackage,
    CatalogReport,
    Change,
    SinceInfo,
)
from meshcert.catalog.sources import CatalogError

RowKey = tuple[str, str, str]  # entry, variant, repo (lower-cased)


def row_key(entry: str, variant: str, repo: str) -> RowKey:
    return entry, variant, repo.lower()


def load_previous(path: str) -> CatalogReport:
    """Read a catalog report written by an earlier run; raises CatalogError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"--since {path!r} cannot be read: {exc}") from None
    try:
        return CatalogReport.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc), "loc": ()}
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise CatalogError(f"--since {path!r} is not a meshcert catalog report "
                           f"({where + ': ' if where else ''}{first.get('msg')})") from None


@dataclass
class Previous:
    """A previous report, indexed for re-use."""

    report: CatalogReport
    path: str
    options_match: bool
    rows: dict[RowKey, CatalogPackage] = field(default_factory=dict)
    certified: dict[tuple[str, str], CatalogPackage] = field(default_factory=dict)

    @classmethod
    def of(cls, report: CatalogReport, path: str, options: CatalogOptions) -> Previous:
        out = cls(report, path, report.options == options)
        for row in report.packages:
            out.rows.setdefault(row_key(row.entry, row.variant, row.repo), row)
            if row.revision and row.certification is not None \
                    and row.certification.status != "incomplete":
                out.certified.setdefault((row.repo.lower(), row.revision), row)
        return out

    def reusable(self, repo: str, commit: str) -> CatalogPackage | None:
        """The earlier row that certified `repo` at `commit` with these options, if any."""
        if not self.options_match:
            return None
        return self.certified.get((repo.lower(), commit))

    def change(self, reference: PackageReference, commit: str | None, reused: bool
               ) -> tuple[Change, str | None]:
        before = self.rows.get(row_key(reference.entry, reference.variant, reference.repo))
        if before is None:
            return "new", None
        if commit is None:  # not resolved now: gone, or still not there
            return ("retried" if before.revision is None else "changed"), before.revision
        if before.revision != commit:
            return "changed", before.revision
        return ("unchanged" if reused else "retried"), before.revision

    def summary(self, changes: list[Change], present: set[RowKey]) -> SinceInfo:
        removed = sorted(f"{row.entry} {row.variant} {row.repo}" for key, row in
                         self.rows.items() if key not in present)
        return SinceInfo(report=self.path,
                         previous_catalog_revision=self.report.catalog.revision,
                         new=changes.count("new"), changed=changes.count("changed"),
                         unchanged=changes.count("unchanged"),
                         retried=changes.count("retried"), removed=removed)
