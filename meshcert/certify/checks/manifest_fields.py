"""Top-level manifest rules: schema, format, identity, source model, layer count, width, ABI,
shared and projector sections (package.md, "Manifest")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, applicable, register
from meshcert.certify.manifest_model import SHARED_ROLES, is_int
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
ABI = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")
KNOWN_TOP_LEVEL = frozenset({
    "schema_version", "format", "model_id", "source_model", "layer_count", "activation_width",
    "shared", "layers", "projectors", "generation", "skippy_abi_version", "created_at_unix_secs",
})
SOURCE_IDENTITY_FIELDS = ("repo", "revision", "primary_file", "canonical_ref", "distribution_id")
KNOWN_SOURCE_FIELDS = frozenset({"path", "sha256", "files", *SOURCE_IDENTITY_FIELDS})


def _f(code: str, message: str) -> Finding:
    return finding(code, message, path=MANIFEST_NAME)


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


@register("manifest_fields", order=10, codes=[
    "unsupported_schema_version", "invalid_format", "empty_model_id", "model_id_not_coordinate",
    "missing_manifest_field", "invalid_manifest_field", "too_few_layers",
    "missing_activation_width", "invalid_activation_width", "missing_created_at",
    "unknown_manifest_field", "missing_shared_artifact",
], formats=["v1"], runs_when=[MANIFEST_READ])
def manifest_fields(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if m is None:
        return
    version = m.get("schema_version")
    if version != 1 or isinstance(version, bool):
        yield _f("unsupported_schema_version",
                 f"schema_version is {version!r}; only 1 is supported (unknown versions are "
                 "rejected, never loaded best-effort)")
    if m.get("format") != "layer-package":
        yield _f("invalid_format", f"format is {m.get('format')!r}, expected 'layer-package'")
    yield from _model_id(m.get("model_id"))
    yield from _layer_count(m)
    yield from _activation_width(m)
    yield from _shared(m)
    for key in ("layers",):
        if key not in m:
            yield _f("missing_manifest_field", f"{key} is missing")
        elif not isinstance(m[key], list):
            yield _f("invalid_manifest_field", f"{key} must be a list, found "
                     f"{type(m[key]).__name__}")
    created = m.get("created_at_unix_secs")
    if created is None:
        yield _f("missing_created_at", "created_at_unix_secs is not set (provenance)")
    elif not is_int(created) or created < 0:
        yield _f("invalid_manifest_field",
                 f"created_at_unix_secs must be a non-negative integer, found {created!r}")
    for key in sorted(set(m) - KNOWN_TOP_LEVEL):
        yield finding("unknown_manifest_field", f"unknown top-level field {key!r} (ignored; "
                      "schema 1 is additive)", path=MANIFEST_NAME)


def _model_id(model_id: Any) -> Iterator[Finding]:
    if _blank(model_id):
        yield _f("empty_model_id", f"model_id must be a non-empty string, found {model_id!r}")
        return
    text = model_id.strip()
    if (text.startswith(("/", "./", "../", "~")) or text.lower().endswith(".gguf")
            or "\\" in text):
        yield _f("model_id_not_coordinate",
                 f"model_id {model_id!r} looks like a filesystem name, not a model coordinate")


def _layer_count(m: dict[str, Any]) -> Iterator[Finding]:
    count = m.get("layer_count")
    if "layer_count" not in m:
        yield _f("missing_manifest_field", "layer_count is missing")
    elif not is_int(count) or count < 0:
        yield _f("invalid_manifest_field",
                 f"layer_count must be a non-negative integer, found {count!r}")
    elif count < 2:
        yield _f("too_few_layers", f"layer_count is {count}; certifying a split needs at least 2")


def _activation_width(m: dict[str, Any]) -> Iterator[Finding]:
    if "activation_width" not in m or m["activation_width"] is None:
        yield _f("missing_activation_width", "activation_width is not set")
        return
    width = m["activation_width"]
    if not is_int(width) or width <= 0:
        yield _f("invalid_activation_width",
                 f"activation_width must be an integer > 0, found {width!r}")


def _shared(m: dict[str, Any]) -> Iterator[Finding]:
    shared = m.get("shared")
    if shared is None:
        yield _f("missing_manifest_field", "shared is missing")
        return
    if not isinstance(shared, dict):
        yield _f("invalid_manifest_field", f"shared must be an object, found "
                 f"{type(shared).__name__}")
        return
    for role in SHARED_ROLES:
        entry = shared.get(role)
        if entry is None:
            yield _f("missing_shared_artifact", f"shared.{role} is missing")
        elif not isinstance(entry, dict):
            yield _f("invalid_manifest_field", f"shared.{role} must be an artifact object")
    for key in sorted(set(shared) - set(SHARED_ROLES)):
        yield _f("unknown_manifest_field", f"unknown field shared.{key!r} (ignored)")


@register("source_model", order=11, codes=[
    "empty_source_model_path", "invalid_source_model_sha256", "empty_source_identity_field",
    "missing_manifest_field", "invalid_manifest_field", "unknown_manifest_field",
], formats=["v1"], runs_when=[MANIFEST_READ])
def source_model(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if m is None:
        return
    src = m.get("source_model")
    if src is None:
        yield _f("missing_manifest_field", "source_model is missing")
        return
    if not isinstance(src, dict):
        yield _f("invalid_manifest_field", "source_model must be an object")
        return
    if _blank(src.get("path")):
        yield _f("empty_source_model_path",
                 f"source_model.path must be non-empty, found {src.get('path')!r}")
    sha = src.get("sha256")
    if not isinstance(sha, str) or not HEX64.match(sha):
        yield _f("invalid_source_model_sha256",
                 f"source_model.sha256 must be 64 hex characters, found {sha!r}")
    for key in SOURCE_IDENTITY_FIELDS:
        if key in src and _blank(src[key]):
            yield _f("empty_source_identity_field",
                     f"source_model.{key} is present but blank ({src[key]!r})")
    yield from _source_files(src.get("files"))
    for key in sorted(set(src) - KNOWN_SOURCE_FIELDS):
        yield _f("unknown_manifest_field", f"unknown field source_model.{key!r} (ignored)")


def _source_files(files: Any) -> Iterator[Finding]:
    if files is None:
        return
    if not isinstance(files, list):
        yield _f("invalid_manifest_field", "source_model.files must be a list")
        return
    for i, item in enumerate(files):
        where = f"source_model.files[{i}]"
        if not isinstance(item, dict):
            yield _f("invalid_manifest_field", f"{where} must be an object")
            continue
        if _blank(item.get("path")):
            yield _f("empty_source_model_path", f"{where}.path must be non-empty")
        # the real writer emits null for unknown values (always sha256 for Hub inputs, both
        # for local ones); mesh-llm treats null as absent. A present value must be valid.
        sha = item.get("sha256")
        if sha is not None and (not isinstance(sha, str) or not HEX64.match(sha)):
            yield _f("invalid_source_model_sha256",
                     f"{where}.sha256 must be 64 hex characters or null, found {sha!r}")
        size = item.get("size_bytes")
        if size is not None and (not is_int(size) or size < 0):
            yield _f("invalid_manifest_field",
                     f"{where}.size_bytes must be a non-negative integer or null, found {size!r}")


def parse_abi(text: Any) -> tuple[int, int, int] | None:
    if not isinstance(text, str):
        return None
    match = ABI.match(text.strip())
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


@register("skippy_abi", order=12, codes=[
    "missing_skippy_abi_version", "incompatible_skippy_abi_version", "skippy_abi_not_checked",
], formats=["v1"], runs_when=[MANIFEST_READ])
def skippy_abi(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if m is None:
        return
    raw = m.get("skippy_abi_version")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        yield _f("missing_skippy_abi_version", "skippy_abi_version is required")
        return
    version = parse_abi(raw)
    if version is None:
        yield _f("incompatible_skippy_abi_version",
                 f"skippy_abi_version {raw!r} is not major.minor[.patch]")
        return
    runtime = view.options.runtime_abi
    if runtime is None:
        yield _f("skippy_abi_not_checked",
                 f"skippy_abi_version {raw} is well-formed but was not checked against a runtime "
                 "(no --runtime-abi given)")
        return
    rt = parse_abi(runtime)
    if rt is None:
        yield _f("incompatible_skippy_abi_version", f"runtime ABI {runtime!r} is malformed")
    elif version[0] != rt[0] or version[1] > rt[1]:
        yield _f("incompatible_skippy_abi_version",
                 f"package ABI {raw} is not accepted by runtime ABI {runtime} (needs the same "
                 "major and a minor not above the runtime's)")


@register("projectors", order=13, codes=[
    "empty_projector_kind", "unsupported_projector_kind", "invalid_manifest_field",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: (view.manifest or {}).get("projectors") is not None,
    "the manifest declares no projectors")])
def projectors(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if m is None or m.get("projectors") is None:
        return
    items = m["projectors"]
    if not isinstance(items, list):
        yield _f("invalid_manifest_field", "projectors must be a list")
        return
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            yield _f("invalid_manifest_field", f"projectors[{i}] must be an artifact object")
            continue
        kind = item.get("kind")
        path = item.get("path") if isinstance(item.get("path"), str) else MANIFEST_NAME
        if _blank(kind):
            yield finding("empty_projector_kind", f"projectors[{i}].kind is empty or missing",
                          path=path)
        elif kind != "mmproj":
            yield finding("unsupported_projector_kind",
                          f"projectors[{i}].kind {kind!r} is not supported (only 'mmproj'); "
                          "identity is never inferred from file names", path=path)
