"""The source model a manifest records (repo, revision, file), for the report's provenance:
the real source, not the package's own carrier that mesh-llm's `source_model_path` names for v2.
Pure, over the view."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from meshcert.certify.report import SourceModel
from meshcert.certify.view import PackageView


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def source_model(view: PackageView) -> SourceModel | None:
    """The source the manifest records: repo, revision and the file's base name (None when it
    records none of them)."""
    source = (view.manifest or {}).get("source_model")
    if not isinstance(source, dict):
        return None
    files = source.get("files")
    first = files[0] if isinstance(files, list) and files and isinstance(files[0], dict) else {}
    path = _text(source.get("primary_file")) or _text(first.get("path")) or _text(
        source.get("path"))
    check = view.source_check
    found = SourceModel(repo=_text(source.get("repo")), revision=_text(source.get("revision")),
                        file=PurePosixPath(path.replace("\\", "/")).name if path else None,
                        identity=check.outcome if check is not None else None,
                        identity_detail=check.detail if check is not None else None)
    return found if (found.repo or found.revision or found.file) else None
