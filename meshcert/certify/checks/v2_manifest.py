"""Package v2 manifest rules (package-v2.md, "v2 manifest"; mesh-llm-0.79.md §1.1): strict
keys, root values, source identity, the artifact catalog and sidecars, and the recomputed
canonical package id. publisher_metadata / publisher_defaults are checked in v2_publisher,
generation in v2_generation.

Every object rejects unknown keys in v2, so an unknown key is an error here (v1 is additive and
only notes them). Codes are mesh-llm's v2 names.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import applicable, register
from meshcert.certify.formats.package_id import compute_package_id
from meshcert.certify.formats.v2_layout import catalog_entries, sidecar_ids
from meshcert.certify.manifest_model import is_int
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

HEX64_LOWER = re.compile(r"[0-9a-f]{64}")  # lower case only (validate_sha256)
PACKAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")
IDENTIFIER = re.compile(r"[A-Za-z0-9._-]+")
V2_GGUF_FORMAT = "gguf"
# mesh-llm v0.77+'s PackageRoot (mesh-llm-0.79.md §1.1); the canonical id's order is
# meshcert.certify.formats.package_id.ROOT_ORDER
ROOT_KEYS = frozenset({
    "schema_version", "package_id", "model_id", "source_model", "format", "layer_count",
    "artifact_catalog", "sidecars", "publisher_metadata", "publisher_defaults", "generation",
    "native_abi_version", "generator_version", "created_at_unix_secs"})
V1_ROOT_KEYS = frozenset({"shared", "layers", "projectors", "activation_width",
                          "skippy_abi_version"})
INLINE_CATALOG_KEYS = frozenset({"model_metadata", "tensor_catalog"})
SOURCE_KEYS = frozenset({"sha256", "metadata_artifact_id", "repo", "revision", "primary_file",
                         "canonical_ref", "distribution_id", "files"})
OPTIONAL_SOURCE_TEXT = ("repo", "revision", "canonical_ref", "distribution_id")
FILE_KEYS = frozenset({"path", "byte_size", "sha256"})
ARTIFACT_KEYS = frozenset({"id", "path", "byte_size", "sha256"})
SIDECAR_KEYS = frozenset({"kind", "artifact_id", "name"})
SIDECAR_KINDS = frozenset({"mmproj"})


def _f(code: str, message: str, path: str = MANIFEST_NAME) -> Finding:
    return finding(code, message, path=path)


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def _v2(view: PackageView) -> dict[str, Any] | None:
    return view.manifest if view.package_format == "v2" else None


def normalized_path_problem(path: Any) -> str | None:
    """Why `path` is not a normalized safe relative path (v2's stricter rule), or None."""
    if not isinstance(path, str) or not path:
        return "path must be a non-empty string"
    if "\\" in path:
        return "path contains a backslash"
    if any(ord(c) < 0x20 for c in path):
        return "path contains a control character"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "path is absolute"
    if "//" in path:
        return "path contains '//'"
    if path.endswith("/"):
        return "path ends with '/'"
    if any(part in (".", "..", "") for part in path.split("/")):
        return "path has a '.' or '..' component"
    return None


def unknown_keys(where: str, obj: dict[str, Any], known: frozenset[str]) -> Iterator[Finding]:
    for key in sorted(set(obj) - known):
        yield finding("unknown_manifest_field", f"unknown field {where}{key!r}: v2 objects reject "
                      "unknown keys", path=MANIFEST_NAME, severity="error")


# unreleased_manifest_extension stays registered (a code is a contract) but nothing emits it
# since mesh-llm v0.77-v0.79 released publisher_metadata, publisher_defaults and
# generation.request_defaults (mesh-llm-0.79.md §3.3)
@register("v2_manifest_root", order=10, codes=[
    "unknown_manifest_field", "v1_field_in_v2_manifest", "inline_tensor_catalog",
    "unreleased_manifest_extension", "missing_value", "invalid_digest", "invalid_format",
    "too_few_layers", "invalid_manifest_field", "package_identity_mismatch",
    "skippy_abi_not_checked", "native_abi_differs",
], formats=["v2"])
def v2_manifest_root(view: PackageView) -> Iterator[Finding]:
    m = _v2(view)
    if m is None:
        return
    for key in sorted(set(m) - ROOT_KEYS):
        if key in V1_ROOT_KEYS:
            yield _f("v1_field_in_v2_manifest", f"{key!r} is a v1 key; a v2 manifest rejects it")
        elif key in INLINE_CATALOG_KEYS:
            yield _f("inline_tensor_catalog", f"inline {key!r}: written by pre-release v2 writers "
                     "(mesh-llm PRs #1672..#1706); no current consumer loads it")
        else:
            yield from unknown_keys("", {key: None}, frozenset())
    for key in ("model_id", "format", "native_abi_version", "generator_version"):
        if _blank(m.get(key)):
            yield _f("missing_value", f"{key} must be a non-blank string, found {m.get(key)!r}")
    fmt = m.get("format")
    if not _blank(fmt) and fmt != V2_GGUF_FORMAT:
        yield finding("invalid_format", f"format is {fmt!r}; the v2 writer writes "
                      f"{V2_GGUF_FORMAT!r} and verify-package-v2 requires it",
                      path=MANIFEST_NAME, severity="warning")
    yield from _layer_count(m.get("layer_count"))
    created = m.get("created_at_unix_secs")
    if created is None:
        yield _f("missing_value", "created_at_unix_secs is required in v2")
    elif not is_int(created) or created < 0:
        yield _f("invalid_manifest_field", f"created_at_unix_secs must be a non-negative "
                 f"integer, found {created!r}")
    yield from _package_id(m)
    yield from _native_abi(m.get("native_abi_version"), view.options.runtime_abi)


def _layer_count(count: Any) -> Iterator[Finding]:
    if count is None or count == 0:
        yield _f("missing_value", f"layer_count must be > 0, found {count!r}")
    elif not is_int(count) or count < 0:
        yield _f("invalid_manifest_field", f"layer_count must be an integer > 0, found {count!r}")
    elif count < 2:
        yield _f("too_few_layers", f"layer_count is {count}; certifying a split needs at least 2")


def _package_id(m: dict[str, Any]) -> Iterator[Finding]:
    declared = m.get("package_id")
    if not isinstance(declared, str) or _blank(declared):
        yield _f("missing_value", f"package_id must be set, found {declared!r}")
        return
    if not PACKAGE_ID.fullmatch(declared):
        yield _f("invalid_digest", f"package_id {declared!r} is not 'sha256:' + 64 lower-case hex")
        return
    computed = compute_package_id(m)
    if computed != declared:
        yield _f("package_identity_mismatch", f"package_id is {declared} but the canonical "
                 f"manifest hashes to {computed}")


def _native_abi(raw: Any, runtime: str | None) -> Iterator[Finding]:
    """A v2 `native_abi_version` is producer provenance (mesh-llm #1959): any non-blank text
    is valid ("7" is what mesh-llm's own fixtures carry), and the runtime checks its own ABI
    at load. With --runtime-abi, a producer ABI that differs from the runtime's, or that
    cannot be compared with it, is worth a warning, never an error."""
    if _blank(raw):
        return  # missing_value, above
    if runtime is None:
        yield _f("skippy_abi_not_checked", f"native_abi_version {raw} is producer provenance; "
                 "it was not compared with a runtime (no --runtime-abi given)")
        return
    from meshcert.certify.checks.manifest_fields import parse_abi

    version, rt = parse_abi(raw), parse_abi(runtime)
    if version is None or rt is None:
        bad = f"native_abi_version {raw!r}" if version is None else f"runtime ABI {runtime!r}"
        yield finding("native_abi_differs", f"{bad} is not major.minor[.patch], so the "
                      f"producer ABI {raw} cannot be compared with runtime ABI {runtime}; the "
                      "runtime checks its own ABI when it loads the package",
                      path=MANIFEST_NAME)
    elif version != rt:
        yield finding("native_abi_differs", f"the package was written with native ABI {raw}, "
                      f"the runtime is {runtime}: provenance only (the runtime checks its own "
                      "ABI when it loads the package)", path=MANIFEST_NAME)


@register("v2_source_model", order=11, codes=[
    "missing_value", "unknown_manifest_field", "invalid_digest", "invalid_path",
    "unknown_source_file", "unknown_artifact", "invalid_metadata_artifact",
    "source_identity_mismatch", "invalid_manifest_field",
], formats=["v2"])
def v2_source_model(view: PackageView) -> Iterator[Finding]:
    m = _v2(view)
    if m is None:
        return
    src = m.get("source_model")
    if not isinstance(src, dict):
        yield _f("missing_value", f"source_model must be an object, found {src!r}")
        return
    yield from unknown_keys("source_model.", src, SOURCE_KEYS)
    sha = src.get("sha256")
    if not isinstance(sha, str) or not HEX64_LOWER.fullmatch(sha):
        yield _f("invalid_digest", f"source_model.sha256 must be 64 lower-case hex, found {sha!r}")
    for key in OPTIONAL_SOURCE_TEXT:
        if key in src and src[key] is not None and _blank(src[key]):
            yield _f("missing_value", f"source_model.{key} is present but blank")
    yield from _metadata_artifact(m, src.get("metadata_artifact_id"))
    files = src.get("files")
    if not isinstance(files, list) or not files:
        yield _f("missing_value", "source_model.files must be a non-empty list")
        files = []
    by_path: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(files):
        yield from _source_file(i, item, by_path)
    primary = src.get("primary_file")
    if _blank(primary):
        yield _f("missing_value", "source_model.primary_file is required in v2")
    elif by_path and primary not in by_path:
        yield _f("unknown_source_file", f"primary_file {primary!r} is not in source_model.files")
    elif primary in by_path:
        primary_sha = by_path[primary].get("sha256")
        if isinstance(sha, str) and isinstance(primary_sha, str) and sha != primary_sha:
            yield _f("source_identity_mismatch", f"source_model.sha256 is {sha} but the primary "
                     f"file {primary} has sha256 {primary_sha}")


def _source_file(i: int, item: Any, by_path: dict[str, dict[str, Any]]) -> Iterator[Finding]:
    where = f"source_model.files[{i}]"
    if not isinstance(item, dict):
        yield _f("invalid_manifest_field", f"{where} must be an object")
        return
    yield from unknown_keys(f"{where}.", item, FILE_KEYS)
    path = item.get("path")
    problem = normalized_path_problem(path)
    if problem:
        yield _f("invalid_path", f"{where}.path {path!r}: {problem}")
    elif isinstance(path, str) and path in by_path:
        yield _f("invalid_path", f"{where}.path {path!r} is listed twice")
    elif isinstance(path, str):
        by_path[path] = item
    size = item.get("byte_size")
    if size is None:
        yield _f("missing_value", f"{where}.byte_size is required in v2")
    elif not is_int(size) or size <= 0:
        yield _f("invalid_manifest_field", f"{where}.byte_size must be an integer > 0, "
                 f"found {size!r}")
    sha = item.get("sha256")
    if sha is None:
        yield _f("missing_value", f"{where}.sha256 is required in v2")
    elif not isinstance(sha, str) or not HEX64_LOWER.fullmatch(sha):
        yield _f("invalid_digest", f"{where}.sha256 must be 64 lower-case hex, found {sha!r}")


def _metadata_artifact(m: dict[str, Any], artifact_id: Any) -> Iterator[Finding]:
    if _blank(artifact_id):
        yield _f("missing_value", "source_model.metadata_artifact_id is required")
        return
    paths = {e.get("id"): e.get("path") for e in catalog_entries(m)}
    if artifact_id not in paths:
        yield _f("unknown_artifact", f"metadata_artifact_id {artifact_id!r} names no artifact")
        return
    path = paths[artifact_id]
    if artifact_id in sidecar_ids(m):
        yield _f("invalid_metadata_artifact", f"metadata artifact {artifact_id!r} is a sidecar")
    elif not isinstance(path, str) or not path.endswith(".gguf"):
        yield _f("invalid_metadata_artifact", f"metadata artifact {artifact_id!r} ({path!r}) is "
                 "not a .gguf file")


@register("v2_artifact_catalog", order=30, codes=[
    "missing_value", "unknown_manifest_field", "invalid_identifier", "invalid_path",
    "invalid_digest", "duplicate_artifact", "duplicate_artifact_path", "empty_artifact",
    "invalid_manifest_field",
], formats=["v2"])
def v2_artifact_catalog(view: PackageView) -> Iterator[Finding]:
    m = _v2(view)
    if m is None:
        return
    artifact_catalog = m.get("artifact_catalog")
    if not isinstance(artifact_catalog, dict):
        yield _f("missing_value", f"artifact_catalog must be an object, "
                 f"found {artifact_catalog!r}")
        return
    yield from unknown_keys("artifact_catalog.", artifact_catalog, frozenset({"entries"}))
    entries = artifact_catalog.get("entries")
    if not isinstance(entries, list) or not entries:
        yield _f("missing_value", "artifact_catalog.entries must be a non-empty list")
        return
    for i, entry in enumerate(entries):
        yield from _artifact(i, entry)
    good = [e for e in entries if isinstance(e, dict)]
    for key, code in (("id", "duplicate_artifact"), ("path", "duplicate_artifact_path")):
        counts = Counter(e.get(key) for e in good if isinstance(e.get(key), str))
        for value, n in sorted(counts.items()):
            if n > 1:
                yield _f(code, f"{n} artifact_catalog entries have {key} {value!r}",
                         path=str(value) if key == "path" else MANIFEST_NAME)


def _artifact(i: int, entry: Any) -> Iterator[Finding]:
    where = f"artifact_catalog.entries[{i}]"
    if not isinstance(entry, dict):
        yield _f("invalid_manifest_field", f"{where} must be an object")
        return
    yield from unknown_keys(f"{where}.", entry, ARTIFACT_KEYS)
    ident, path = entry.get("id"), entry.get("path")
    where_path = path if isinstance(path, str) else MANIFEST_NAME
    if not isinstance(ident, str) or _blank(ident):
        yield _f("missing_value", f"{where}.id must be set")
    elif not IDENTIFIER.fullmatch(ident):
        yield _f("invalid_identifier", f"{where}.id {ident!r} has characters outside "
                 "[A-Za-z0-9._-]")
    problem = normalized_path_problem(path)
    if problem:
        yield _f("invalid_path", f"{where}.path {path!r}: {problem}")
    size = entry.get("byte_size")
    if size is None:
        yield _f("missing_value", f"{where}.byte_size is required", path=where_path)
    elif not is_int(size) or size <= 0:
        yield _f("empty_artifact", f"{where}.byte_size must be an integer > 0, found {size!r}",
                 path=where_path)
    sha = entry.get("sha256")
    if sha is None:
        yield _f("missing_value", f"{where}.sha256 is required", path=where_path)
    elif not isinstance(sha, str) or not HEX64_LOWER.fullmatch(sha):
        yield _f("invalid_digest", f"{where}.sha256 must be exactly 64 lower-case hex (v2), "
                 f"found {sha!r}", path=where_path)


@register("v2_sidecars", order=13, codes=[
    "missing_value", "unknown_manifest_field", "unsupported_projector_kind", "unknown_artifact",
    "duplicate_sidecar", "invalid_manifest_field", "mesh_certify_would_fail",
], formats=["v2"], runs_when=[applicable(lambda view: "sidecars" in (view.manifest or {}),
                                         "the manifest declares no sidecars")])
def v2_sidecars(view: PackageView) -> Iterator[Finding]:
    m = _v2(view)
    if m is None or "sidecars" not in m:
        return
    sidecars = m["sidecars"]
    if not isinstance(sidecars, list):
        # a defaulted collection: absent is [], but serde refuses a null (mesh-llm-0.79.md §1.1)
        yield _f("invalid_manifest_field", f"sidecars must be a list, found {sidecars!r}")
        return
    ids = {e.get("id") for e in catalog_entries(m)}
    seen: Counter[tuple[Any, Any]] = Counter()
    for i, item in enumerate(sidecars):
        where = f"sidecars[{i}]"
        if not isinstance(item, dict):
            yield _f("invalid_manifest_field", f"{where} must be an object")
            continue
        yield from unknown_keys(f"{where}.", item, SIDECAR_KEYS)
        kind = item.get("kind")
        if _blank(kind):
            yield _f("missing_value", f"{where}.kind must be set")
        elif kind not in SIDECAR_KINDS:
            yield _f("unsupported_projector_kind", f"{where}.kind {kind!r} is not supported "
                     "(only 'mmproj')")
        if item.get("artifact_id") not in ids:
            yield _f("unknown_artifact", f"{where}.artifact_id {item.get('artifact_id')!r} "
                     "names no artifact")
        if "name" in item and item["name"] is not None and _blank(item["name"]):
            yield _f("missing_value", f"{where}.name is present but blank")
        seen[(kind, item.get("name"))] += 1
    for (kind, name), n in sorted(seen.items(), key=repr):
        if n > 1:
            yield _f("duplicate_sidecar", f"{n} sidecars have kind {kind!r} and name {name!r}")
    keys = [(str(s.get("kind")), s.get("name") is not None, str(s.get("name") or ""),
             str(s.get("artifact_id"))) for s in sidecars if isinstance(s, dict)]
    if keys != sorted(keys):
        yield _f("mesh_certify_would_fail", "sidecars are not sorted by (kind, name, "
                 "artifact_id); mesh-llm's certifier refuses unsorted sidecars")
