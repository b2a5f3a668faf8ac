"""`publisher_metadata` and `publisher_defaults` as mesh-llm v0.77+ reads and validates them
(mesh-llm-0.79.md §1.1-1.3, §1.7): the serde shape (unknown fields refused, closed `role` and
`dtype` enums, a null `publisher_metadata` refused while a null `publisher_defaults` is
absent), then validate_publisher_metadata and validate_publisher_defaults rule for rule, with
mesh-llm's codes and paths.

The format checks only the manifest: not the file name against the role, nor the artifact's
path, nor the file's content (those are meshcert/certify/checks/publisher_files.py's, beyond
mesh-llm).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import register
from meshcert.certify.checks.v2_manifest import normalized_path_problem
from meshcert.certify.checks.v2_request_defaults import Problem, rust_blank, show
from meshcert.certify.formats.publisher import DEFAULT_SLOTS, DTYPES, ROLES, SLOT_ROLES
from meshcert.certify.formats.v2_layout import catalog_entries
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

ENTRY_FIELDS = ("role", "artifact_id", "source_repo", "source_revision", "source_path")
DECLARATION_FIELDS = ("dtype", "artifact_id", "json_path")
HEX40 = re.compile(r"[0-9A-Fa-f]{40}")  # upper case accepted (is_ascii_hexdigit)


def _artifact_ids(manifest: dict[str, Any]) -> set[str]:
    return {e["id"] for e in catalog_entries(manifest) if isinstance(e.get("id"), str)}


def _object(value: Any, path: str, known: tuple[str, ...], out: list[Problem]
            ) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        out.append(("invalid_manifest_field", path, f"must be an object, found {show(value)}"))
        return None
    for key in sorted(set(value) - set(known)):
        out.append(("unknown_manifest_field", f"{path}.{key}", f"unknown field {show(key)}: "
                    "the object refuses unknown fields"))
    return value


def _strings(obj: dict[str, Any], path: str, fields: tuple[str, ...], out: list[Problem]
             ) -> dict[str, str]:
    """The required string fields that are strings (a missing or null one: missing_value;
    another type: invalid_manifest_field, as serde refuses it)."""
    got: dict[str, str] = {}
    for key in fields:
        value = obj.get(key)
        if value is None:
            out.append(("missing_value", f"{path}.{key}",
                        f"required field {'is null' if key in obj else 'is missing'}"))
        elif not isinstance(value, str):
            out.append(("invalid_manifest_field", f"{path}.{key}",
                        f"must be a string, found {show(value)}"))
        else:
            got[key] = value
    return got


def _entries(manifest: dict[str, Any], out: list[Problem]) -> list[tuple[int, dict[str, str]]]:
    """publisher_metadata's entries as read: (index, the string fields that read)."""
    if "publisher_metadata" not in manifest:
        return []
    raw = manifest["publisher_metadata"]
    if not isinstance(raw, list):
        # a defaulted collection: absent is [], a null is a parse error (§1.1)
        out.append(("invalid_manifest_field", "publisher_metadata",
                    f"must be a list, found {show(raw)}"))
        return []
    entries: list[tuple[int, dict[str, str]]] = []
    for i, item in enumerate(raw):
        where = f"publisher_metadata[{i}]"
        obj = _object(item, where, ENTRY_FIELDS, out)
        if obj is None:
            continue
        fields = _strings(obj, where, ENTRY_FIELDS, out)
        if "role" in fields and fields["role"] not in ROLES:
            out.append(("invalid_manifest_field", f"{where}.role", f"unknown role "
                        f"{show(fields['role'])}: one of {', '.join(ROLES)}"))
            del fields["role"]
        entries.append((i, fields))
    return entries


def validate_publisher_metadata(manifest: dict[str, Any]) -> list[Problem]:
    """mesh-llm's validate_publisher_metadata (with the shape serde reads first)."""
    out: list[Problem] = []
    artifacts = _artifact_ids(manifest)
    source = manifest.get("source_model")
    source = source if isinstance(source, dict) else {}
    seen: set[tuple[str, str]] = set()
    for i, entry in _entries(manifest, out):
        where = f"publisher_metadata[{i}]"
        role, path = entry.get("role"), entry.get("source_path")
        if role is not None and path is not None:
            if (role, path) in seen:
                out.append(("duplicate_sidecar", where, f"publisher metadata semantic identity "
                            f"({role}, {show(path)}) appears more than once"))
            seen.add((role, path))
        if "artifact_id" in entry and entry["artifact_id"] not in artifacts:
            out.append(("unknown_artifact", f"{where}.artifact_id",
                        f"artifact {show(entry['artifact_id'])} does not exist"))
        for key in ("source_repo", "source_revision"):
            if key in entry and rust_blank(entry[key]):
                out.append(("missing_value", f"{where}.{key}", "value must not be empty"))
        revision = entry.get("source_revision")
        if revision is not None and not HEX40.fullmatch(revision):
            out.append(("source_identity_mismatch", f"{where}.source_revision",
                        "publisher metadata revision must be an immutable 40-character commit, "
                        f"found {show(revision)}"))
        if path is not None:
            problem = normalized_path_problem(path)
            if problem:
                out.append(("invalid_path", f"{where}.source_path", f"path {show(path)} must be "
                            f"a normalized relative package path: {problem}"))
        if "source_repo" in entry and source.get("repo") != entry["source_repo"]:
            out.append(("source_identity_mismatch", f"{where}.source_repo", "publisher metadata "
                        f"repository {show(entry['source_repo'])} differs from source_model.repo "
                        f"{show(source.get('repo'))}"))
        if revision is not None and source.get("revision") != revision:
            out.append(("source_identity_mismatch", f"{where}.source_revision",
                        f"publisher metadata revision {show(revision)} differs from "
                        f"source_model.revision {show(source.get('revision'))}"))
    return out


def validate_publisher_defaults(manifest: dict[str, Any]) -> list[Problem]:
    """mesh-llm's validate_publisher_defaults (with the shape serde reads first)."""
    out: list[Problem] = []
    raw = manifest.get("publisher_defaults")
    if raw is None:
        return out  # an Option: absent or null
    defaults = _object(raw, "publisher_defaults", DEFAULT_SLOTS, out)
    if defaults is None:
        return out
    artifacts = _artifact_ids(manifest)
    bound = _entries(manifest, [])  # its own problems are validate_publisher_metadata's
    for slot in DEFAULT_SLOTS:
        if defaults.get(slot) is None:
            continue
        path = f"publisher_defaults.{slot}"
        declaration = _object(defaults[slot], path, DECLARATION_FIELDS, out)
        if declaration is None:
            continue
        fields = _strings(declaration, path, DECLARATION_FIELDS, out)
        if "dtype" in fields and fields["dtype"] not in DTYPES:
            out.append(("invalid_manifest_field", f"{path}.dtype", f"unknown dtype "
                        f"{show(fields['dtype'])}: one of {', '.join(DTYPES)}"))
        artifact_id = fields.get("artifact_id")
        if artifact_id is not None:
            out.extend(_binding(slot, path, artifact_id, artifacts, bound))
        if "json_path" in fields and rust_blank(fields["json_path"]):
            out.append(("missing_value", f"{path}.json_path", "value must not be empty"))
    return out


def _binding(slot: str, path: str, artifact_id: str, artifacts: set[str],
             entries: list[tuple[int, dict[str, str]]]) -> Iterator[Problem]:
    if artifact_id not in artifacts:
        yield ("unknown_artifact", f"{path}.artifact_id",
               f"artifact {show(artifact_id)} does not exist")
    entry = next((e for _, e in entries if e.get("artifact_id") == artifact_id), None)
    if entry is None:
        yield ("source_identity_mismatch", f"{path}.artifact_id",
               "typed publisher default is not bound to publisher_metadata")
    elif entry.get("role") not in SLOT_ROLES[slot]:
        yield ("source_identity_mismatch", f"{path}.artifact_id", f"publisher default {slot} "
               f"cannot be sourced from {show(entry.get('role'))} (only from "
               f"{' or '.join(sorted(SLOT_ROLES[slot]))})")


def findings_of(problems: list[Problem]) -> Iterator[Finding]:
    """(code, JSON path, message) as findings on the manifest, the JSON path in the message."""
    for code, path, message in problems:
        yield finding(code, f"{path}: {message}" if path else message, path=MANIFEST_NAME,
                      severity="error" if code == "unknown_manifest_field" else None)


@register("v2_publisher", order=14, codes=[
    "unknown_manifest_field", "invalid_manifest_field", "missing_value", "duplicate_sidecar",
    "unknown_artifact", "source_identity_mismatch", "invalid_path",
], formats=["v2"])
def v2_publisher(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if view.package_format != "v2" or m is None:
        return
    yield from findings_of(validate_publisher_metadata(m))
    yield from findings_of(validate_publisher_defaults(m))
