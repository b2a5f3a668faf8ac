"""What a model card says about a package, read from its manifest: one source of truth for the
card meshcert writes (meshcert/writer/card.py, for `package write` and `package publish`) and
for the `readme` check, which flags a card whose stated facts contradict the manifest.

Pure: manifest dict in, facts out. Every reader tolerates a malformed manifest (a value of the
wrong type is left out, never raised on): the manifest checks report those.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from meshcert.certify.mesh_llm_versions import VersionNeed, minimum_mesh_llm
from meshcert.certify.node_defaults import request_profiles
from meshcert.certify.report import RequestProfile

# The labels the card states its checked facts under (`| **Label** | value |` or
# `- Label: value`); the readme check reads the same labels back.
MODEL_ID = "Model id"
PACKAGE_ID = "Package id"
LAYER_COUNT = "Layer count"
GENERATION_DEFAULTS = "Generation defaults"
DEFAULT_PROFILE = "Default request profile"
COMPUTE_DTYPE = "Compute dtype"
KV_CACHE_DTYPE = "KV cache dtype"
NONE_DECLARED = "none declared"
NOT_DECLARED = "not declared"
DTYPE_SLOTS = {COMPUTE_DTYPE: "compute_dtype", KV_CACHE_DTYPE: "kv_cache_dtype"}
PROFILE_FIELDS_SHOWN = 8  # settings listed per profile in the card; the rest are counted


@dataclass(frozen=True)
class Artifact:
    label: str
    path: str
    size: int | None
    sha256: str | None


@dataclass(frozen=True)
class PublisherFile:
    role: str
    path: str  # in the package (metadata/<basename>)
    source: str  # source_path at source_repo@source_revision
    size: int | None
    sha256: str | None


@dataclass(frozen=True)
class TypedDefault:
    label: str  # COMPUTE_DTYPE / KV_CACHE_DTYPE
    dtype: str
    origin: str  # "metadata/config.json /torch_dtype"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def is_v2(manifest: dict[str, Any]) -> bool:
    return manifest.get("schema_version") == 2


def _artifact_catalog(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in _list(_dict(manifest.get("artifact_catalog")).get("entries"))
            if isinstance(e, dict)]


def artifacts(manifest: dict[str, Any]) -> list[Artifact]:
    """Every artifact the manifest declares, in its own order, with size and sha256."""
    if is_v2(manifest):
        sidecars = {s.get("artifact_id") for s in _list(manifest.get("sidecars"))
                    if isinstance(s, dict)}
        publisher = {p.get("artifact_id"): p.get("role")
                     for p in map(_dict, _list(manifest.get("publisher_metadata")))}
        return [Artifact("Projector" if e.get("id") in sidecars else
                         f"Publisher file ({publisher[e.get('id')]})" if e.get("id") in publisher
                         else str(e.get("id")), str(e.get("path")), e.get("byte_size"),
                         e.get("sha256")) for e in _artifact_catalog(manifest)]
    out = [Artifact(name.capitalize(), str(e.get("path")), e.get("artifact_bytes"),
                    e.get("sha256"))
           for name, e in _dict(manifest.get("shared")).items() if isinstance(e, dict)]
    out += [Artifact(f"Layer {e.get('layer_index')}", str(e.get("path")),
                     e.get("artifact_bytes"), e.get("sha256"))
            for e in map(_dict, _list(manifest.get("layers")))]
    out += [Artifact("Projector", str(e.get("path")), e.get("artifact_bytes") or e.get(
        "size_bytes"), e.get("sha256")) for e in map(_dict, _list(manifest.get("projectors")))]
    return out


def total_bytes(manifest: dict[str, Any]) -> int:
    return sum(a.size for a in artifacts(manifest)
               if isinstance(a.size, int) and not isinstance(a.size, bool))


def projectors(manifest: dict[str, Any]) -> list[Artifact]:
    return [a for a in artifacts(manifest) if a.label == "Projector"]


def source_file(manifest: dict[str, Any]) -> str | None:
    """The source GGUF's file name: primary_file, else files[].path, else path's base name."""
    source = _dict(manifest.get("source_model"))
    files = [_dict(f).get("path") for f in _list(source.get("files"))]
    for candidate in (source.get("primary_file"), *files, source.get("path")):
        if isinstance(candidate, str) and candidate.strip():
            return PurePosixPath(candidate.replace("\\", "/")).name
    return None


def abi_version(manifest: dict[str, Any]) -> str | None:
    value = manifest.get("native_abi_version" if is_v2(manifest) else "skippy_abi_version")
    return value if isinstance(value, str) else None


def publisher_files(manifest: dict[str, Any]) -> list[PublisherFile]:
    """Every publisher_metadata entry with its artifact_catalog entry, in the manifest's order."""
    by_id = {e.get("id"): e for e in _artifact_catalog(manifest)}
    out: list[PublisherFile] = []
    for entry in map(_dict, _list(manifest.get("publisher_metadata"))):
        artifact = _dict(by_id.get(entry.get("artifact_id")))
        source = f"{entry.get('source_path')} at {entry.get('source_repo')}@" \
                 f"{entry.get('source_revision')}"
        out.append(PublisherFile(str(entry.get("role")), str(artifact.get("path") or
                                                             entry.get("artifact_id")),
                                 source, artifact.get("byte_size"), artifact.get("sha256")))
    return out


def typed_defaults(manifest: dict[str, Any]) -> list[TypedDefault]:
    """publisher_defaults' declarations (compute dtype, KV cache dtype) and where each is read."""
    by_id = {e.get("id"): e.get("path") for e in _artifact_catalog(manifest)}
    declared = _dict(manifest.get("publisher_defaults"))
    out: list[TypedDefault] = []
    for label, slot in DTYPE_SLOTS.items():
        decl = _dict(declared.get(slot))
        dtype = _text(decl.get("dtype"))
        if dtype is not None:
            where = by_id.get(decl.get("artifact_id")) or decl.get("artifact_id")
            out.append(TypedDefault(label, dtype, f"{where} {decl.get('json_path')}"))
    return out


def profiles(manifest: dict[str, Any]) -> list[RequestProfile]:
    """generation.request_defaults' profiles, as the report lists them (sorted by name)."""
    return request_profiles(manifest)


def default_profile(manifest: dict[str, Any]) -> str | None:
    request = _dict(_dict(manifest.get("generation")).get("request_defaults"))
    return _text(_dict(request.get("selection")).get("default"))


def profile_settings(profile: RequestProfile) -> str:
    """`temperature 0.6, top_p 0.95, ...` (provenance apart; long lists counted)."""
    items = [(k, v) for k, v in profile.fields.items() if k != "provenance"]
    shown = [f"{k} {_value(v)}" for k, v in items[:PROFILE_FIELDS_SHOWN]]
    if len(items) > PROFILE_FIELDS_SHOWN:
        shown.append(f"and {len(items) - PROFILE_FIELDS_SHOWN} more")
    return ", ".join(shown) or "no settings"


def profile_provenance(profile: RequestProfile) -> str:
    prov = _dict(profile.fields.get("provenance"))
    if not prov:
        return "not recorded"
    where = f"{prov.get('file')} ({prov.get('section')}) of {prov.get('source_repo')}@" \
            f"{prov.get('revision')}"
    return f"{where}: {prov.get('url')}" if prov.get("url") else where


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def speculative_decoding(manifest: dict[str, Any]) -> str | None:
    """`speculative strategy `mtp` (native-mtp, prediction depth 1)`; None when undeclared."""
    spec = _dict(_dict(manifest.get("generation")).get("speculative_decoding"))
    default = spec.get("default")
    if not isinstance(default, str):
        return None
    strategy = _dict(_dict(spec.get("strategies")).get(default))
    ref = strategy.get("proposer") or strategy.get("primary")
    proposer = _dict(_dict(spec.get("proposers")).get(ref)) if isinstance(ref, str) else {}
    depth = strategy.get("prediction_depth", proposer.get("prediction_depth"))
    kind = strategy.get("type") or proposer.get("type") or "speculative"
    shown = f", prediction depth {depth}" if depth is not None else ""
    return f"speculative strategy `{default}` ({kind}{shown})"


def declares_defaults(manifest: dict[str, Any]) -> bool:
    """Whether the manifest declares any default a node applies: typed publisher defaults,
    request profiles or speculative decoding."""
    return bool(typed_defaults(manifest) or profiles(manifest)
                or speculative_decoding(manifest))


def oldest_mesh_llm(manifest: dict[str, Any]) -> VersionNeed | None:
    """The oldest mesh-llm release that loads the manifest (None for v1)."""
    return minimum_mesh_llm(manifest)


# --- facts a card states, read back by the readme check -------------------------------------

_FACT_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\|?\s*\**\s*(?P<label>[A-Za-z][A-Za-z -]{1,40}?)\s*\**"
                        r"\s*(?::\s*\**|\|)\s*(?P<value>.+?)\s*\|?\s*$")
_TOKEN = re.compile(r"[^\s`*|,;()]+")
_INTEGER = re.compile(r"(?<![\w.])\d[\d,_]*(?![\w.])")


@dataclass(frozen=True)
class Contradiction:
    label: str
    stated: str
    expected: str


def stated_facts(card: str) -> dict[str, list[str]]:
    """Each labelled fact the card states (`| **Label** | value |`, `- Label: value`), by its
    lower-cased label, in the card's order."""
    out: dict[str, list[str]] = {}
    for line in card.splitlines():
        match = _FACT_LINE.match(line)
        if match is not None:
            out.setdefault(match.group("label").strip().lower(), []).append(
                match.group("value").strip())
    return out


def _first_token(value: str) -> str | None:
    match = _TOKEN.search(value)
    return match.group(0) if match else None


def _says_none(value: str) -> bool:
    return value.strip("`* ").lower().startswith(("none", NOT_DECLARED))


def _unstated(value: str) -> bool:
    """A value that states nothing ("not recorded", "unknown", a dash): missing, not wrong."""
    return value.strip("`* ").lower().startswith(("not recorded", "unknown", "n/a", "-",
                                                  "\u2014", "?"))


def contradictions(manifest: dict[str, Any], card: str) -> list[Contradiction]:
    """Every checked fact (ids, layer count, defaults) the card states otherwise than the
    manifest. A fact the card does not state is not a contradiction (readme_missing_field
    covers the items a card must name)."""
    stated = stated_facts(card)
    out: list[Contradiction] = []

    def each(label: str) -> list[str]:
        return stated.get(label.lower(), [])

    for label, expected in ((MODEL_ID, _text(manifest.get("model_id"))),
                            (PACKAGE_ID, _text(manifest.get("package_id")) if is_v2(manifest)
                             else None),
                            (DEFAULT_PROFILE, default_profile(manifest))):
        for value in each(label):
            token = None if _unstated(value) else _first_token(value)
            if expected is None and label == DEFAULT_PROFILE and token is not None \
                    and not _says_none(value):
                out.append(Contradiction(label, value, NONE_DECLARED))
            elif expected is not None and token is not None and token != expected:
                out.append(Contradiction(label, value, expected))
    layers = manifest.get("layer_count")
    if isinstance(layers, int) and not isinstance(layers, bool):
        for value in each(LAYER_COUNT):
            number = _INTEGER.search(value)
            if number is not None and int(re.sub(r"[,_]", "", number.group(0))) != layers:
                out.append(Contradiction(LAYER_COUNT, value, str(layers)))
    if declares_defaults(manifest):
        out += [Contradiction(GENERATION_DEFAULTS, value, _declared_summary(manifest))
                for value in each(GENERATION_DEFAULTS) if _says_none(value)]
    declared = {d.label: d.dtype for d in typed_defaults(manifest)}
    for label in DTYPE_SLOTS:
        for value in filter(lambda v: not _unstated(v), each(label)):
            token, expected_dtype = _first_token(value), declared.get(label)
            if expected_dtype is None and token is not None and not _says_none(value):
                out.append(Contradiction(label, value, NOT_DECLARED))
            elif expected_dtype is not None and (token is None or _says_none(value)
                                                 or token.lower() != expected_dtype):
                out.append(Contradiction(label, value, expected_dtype))
    return out


def _declared_summary(manifest: dict[str, Any]) -> str:
    parts = [f"{d.label.lower()} {d.dtype}" for d in typed_defaults(manifest)]
    names = [p.name for p in profiles(manifest)]
    if names:
        parts.append(f"request profiles {', '.join(names)}")
    spec = speculative_decoding(manifest)
    if spec:
        parts.append(spec.replace("`", ""))
    return "; ".join(parts)
