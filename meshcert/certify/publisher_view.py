"""The publisher files of a v2 view as the checks read them: each publisher_metadata entry
joined with its artifact_catalog path and the bytes the source read (pure, over the view)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from meshcert.certify.formats.publisher_json import JsonProblem, parse_publisher_json
from meshcert.certify.view import PackageView, SmallFile


@dataclass(frozen=True)
class PublisherDoc:
    index: int  # position in publisher_metadata (the writer's CLI order)
    role: str
    artifact_id: str
    path: str
    file: SmallFile | None  # None: the source did not read it (missing, outside the slice)

    @property
    def is_json(self) -> bool:
        return self.path.endswith(".json")

    def json(self) -> dict[str, Any] | JsonProblem | None:
        """The parsed object, the problem, or None when the bytes are not at hand (a file
        over the cap is reported by the size check, not parsed)."""
        if self.file is None or self.file.data is None:
            return None
        return parse_publisher_json(self.file.data)

    def text(self) -> bytes | None:
        return None if self.file is None else self.file.data


def publisher_docs(view: PackageView) -> list[PublisherDoc]:
    """Every well-formed publisher_metadata entry that names an artifact_catalog entry, in order."""
    if view.package_format != "v2":
        return []
    manifest = view.manifest or {}
    entries = manifest.get("publisher_metadata")
    if not isinstance(entries, list):
        return []
    paths = {e.artifact_id: e.path for e in view.artifacts()
             if isinstance(e.artifact_id, str) and isinstance(e.path, str)}
    out: list[PublisherDoc] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        role, artifact_id = entry.get("role"), entry.get("artifact_id")
        if not (isinstance(role, str) and isinstance(artifact_id, str)) or artifact_id in seen:
            continue
        path = paths.get(artifact_id)
        if path is None:
            continue  # an unknown artifact: the manifest checks report it
        seen.add(artifact_id)
        out.append(PublisherDoc(index, role, artifact_id, path,
                                view.publisher_files.get(path)))
    return out


def parsed_objects(docs: list[PublisherDoc]) -> dict[str, dict[str, Any]]:
    """artifact id -> the parsed JSON object, for the docs that parse as one."""
    out: dict[str, dict[str, Any]] = {}
    for doc in docs:
        if doc.is_json:
            value = doc.json()
            if isinstance(value, dict):
                out[doc.artifact_id] = value
    return out
