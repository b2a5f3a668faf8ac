"""Publisher files (metadata/config.json, ...), beyond mesh-llm: it never downloads or reads
them (mesh-llm-0.79.md §3.2), but a node may render their chat template and a publisher may
have declared typed defaults from them. Here each JSON file must be a bounded JSON object,
config.json's geometry must agree with the carrier's GGUF metadata (§2.4), and every typed
default in publisher_defaults must be what its file says (§2.3).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import applicable, register
from meshcert.certify.formats import publisher_json
from meshcert.certify.formats.publisher import (
    DEFAULT_SLOTS,
    derive_compute_dtype,
    derive_kv_cache_dtype,
    kv_pointer_value,
    map_dtype,
    resolve_pointer,
)
from meshcert.certify.formats.publisher_geometry import geometry_differences
from meshcert.certify.publisher_view import PublisherDoc, parsed_objects, publisher_docs
from meshcert.certify.view import MAX_PUBLISHER_FILE_BYTES, PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader

GEOMETRY_MISMATCH = "publisher_config_geometry_mismatch"
NEXTN_BLOCK = "publisher_config_nextn_block"
DEFAULT_MISMATCH = "publisher_default_mismatch"
NOT_REDERIVED = "publisher_defaults_not_rederived"


NO_PUBLISHER_FILES = applicable(lambda view: bool(publisher_docs(view)),
                                "the manifest declares no publisher files")


@register("publisher_json", order=420, formats=("v2",), codes=publisher_json.CODES,
          runs_when=[NO_PUBLISHER_FILES])
def check_publisher_json(view: PackageView) -> Iterator[Finding]:
    for doc in publisher_docs(view):
        if doc.file is None:
            continue
        if doc.file.too_large:
            yield finding(publisher_json.TOO_LARGE, f"{doc.path} is {doc.file.size} bytes, "
                          f"over the {MAX_PUBLISHER_FILE_BYTES} byte limit for a publisher "
                          "file; it was not read", path=doc.path)
            continue
        if not doc.is_json:
            if doc.file.data is not None:
                text = publisher_json.decode_text(doc.file.data)
                if isinstance(text, publisher_json.JsonProblem):
                    yield finding(text.code, f"{doc.path} {text.message}", path=doc.path)
            continue
        value = doc.json()
        if isinstance(value, publisher_json.JsonProblem):
            yield finding(value.code, f"{doc.path} ({doc.role}) {value.message}",
                          path=doc.path)


def _carrier_kv(view: PackageView) -> tuple[str, dict[str, Any]] | None:
    carrier = view.carrier_entry()
    header = view.headers.get(carrier.path) if carrier is not None and isinstance(
        carrier.path, str) else None
    if not isinstance(header, GGUFHeader):
        return None
    arch = header.architecture
    return (arch, header.kv) if arch else None


@register("publisher_config_geometry", order=421, formats=("v2",),
          codes=[GEOMETRY_MISMATCH, NEXTN_BLOCK], runs_when=[applicable(
              lambda view: any(d.role == "model_config" for d in publisher_docs(view)),
              "no publisher file has the model_config role")])
def check_config_geometry(view: PackageView) -> Iterator[Finding]:
    docs = [d for d in publisher_docs(view) if d.role == "model_config"]
    carrier = _carrier_kv(view) if docs else None
    if carrier is None:
        return
    arch, kv = carrier
    for doc in docs:
        config = doc.json()
        if not isinstance(config, dict):
            continue
        for diff in geometry_differences(config, kv, arch):
            if diff.is_nextn_block:
                yield finding(NEXTN_BLOCK, f"{doc.path}: /{diff.config_key} = "
                              f"{diff.config_value} and GGUF {diff.gguf_key} = {diff.gguf_value}"
                              f" differ by {arch}.nextn_predict_layers = {diff.nextn_layers}: "
                              "the GGUF counts the NextN (MTP) block(s) Hugging Face leaves out",
                              path=doc.path)
            else:
                yield finding(GEOMETRY_MISMATCH, f"{doc.path}: publisher config "
                              f"/{diff.config_key} = {diff.config_value} conflicts with GGUF "
                              f"{diff.gguf_key} = {diff.gguf_value} (the carrier's metadata)",
                              path=doc.path)


def _declared(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    defaults = manifest.get("publisher_defaults")
    if not isinstance(defaults, dict):
        return {}
    return {slot: decl for slot in DEFAULT_SLOTS
            if isinstance(decl := defaults.get(slot), dict)}


def _declared_value(slot: str, document: dict[str, Any], pointer: str) -> tuple[bool, Any]:
    """(resolves, the string the writer would read there or the raw value)."""
    found, value = resolve_pointer(document, pointer)
    if not found:
        return False, None
    if slot == "kv_cache_dtype":
        read = kv_pointer_value(document, pointer)
        return True, read if read is not None else value
    return True, value


@register("publisher_defaults_files", order=422, formats=("v2",),
          codes=[DEFAULT_MISMATCH, NOT_REDERIVED], runs_when=[NO_PUBLISHER_FILES])
def check_publisher_defaults(view: PackageView) -> Iterator[Finding]:
    docs = publisher_docs(view)
    if not docs:
        return
    by_id = {d.artifact_id: d for d in docs}
    objects = parsed_objects(docs)
    declared = _declared(view.manifest or {})
    for slot, decl in declared.items():
        yield from _check_declaration(slot, decl, by_id, objects)
    yield from _rederive(declared, docs, objects)


def _check_declaration(slot: str, decl: dict[str, Any], by_id: dict[str, PublisherDoc],
                       objects: dict[str, dict[str, Any]]) -> Iterator[Finding]:
    artifact_id, pointer, dtype = decl.get("artifact_id"), decl.get("json_path"), \
        decl.get("dtype")
    doc = by_id.get(artifact_id) if isinstance(artifact_id, str) else None
    document = objects.get(artifact_id) if isinstance(artifact_id, str) else None
    if doc is None or document is None or not isinstance(pointer, str) or not pointer.strip():
        return  # not bound, not read or not JSON: the manifest and file checks say so
    where = f"publisher_defaults.{slot}"
    found, value = _declared_value(slot, document, pointer)
    if not found:
        yield finding(DEFAULT_MISMATCH, f"{where}: json_path {pointer!r} does not resolve in "
                      f"{doc.path}", path=doc.path)
        return
    if not isinstance(value, str):
        yield finding(DEFAULT_MISMATCH, f"{where}: {doc.path} at {pointer} holds "
                      f"{_short(value)}, not a dtype string", path=doc.path)
        return
    mapped = map_dtype(value)
    if mapped != dtype:
        became = f"maps to {mapped!r}" if mapped else "maps to no publisher dtype"
        yield finding(DEFAULT_MISMATCH, f"{where}: declared dtype {dtype!r}, but {doc.path} at "
                      f"{pointer} holds {value!r}, which {became} by the writer's mapping",
                      path=doc.path)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _rederive(declared: dict[str, dict[str, Any]], docs: list[PublisherDoc],
              objects: dict[str, dict[str, Any]]) -> Iterator[Finding]:
    """What mesh-llm's writer would have declared from these files (§2.3), compared slot by
    slot with the manifest. Skipped when a file it would parse was not read or is not JSON."""
    sources = [d for d in docs if d.role in ("model_config", "hf_quant_config")]
    if any(d.artifact_id not in objects for d in sources):
        return
    expected: dict[str, tuple[str, str, str]] = {}  # slot -> (dtype, artifact_id, json_path)
    for doc in sources:
        document = objects[doc.artifact_id]
        derived = [derive_kv_cache_dtype(document)]
        if doc.role == "model_config":
            derived.insert(0, derive_compute_dtype(document))
        for item in derived:
            if item is None:
                continue
            if item.dtype is None:
                if item.slot == "kv_cache_dtype":
                    yield finding(NOT_REDERIVED, f"{doc.path} at {item.json_path} holds "
                                  f"{item.raw!r}: mesh-llm's writer refuses it (unsupported "
                                  "publisher KV-cache dtype)", path=doc.path)
                continue  # an unmapped compute dtype is silently ignored by the writer
            first = expected.get(item.slot)
            if first is None:
                expected[item.slot] = (item.dtype, doc.artifact_id, item.json_path)
            elif first[0] != item.dtype:
                yield finding(NOT_REDERIVED, f"{doc.path} at {item.json_path} says "
                              f"{item.slot} {item.dtype!r} but an earlier file says "
                              f"{first[0]!r}: mesh-llm's writer refuses conflicting publisher "
                              f"{item.slot} declarations", path=doc.path)
    for slot in DEFAULT_SLOTS:
        want = expected.get(slot)
        decl = declared.get(slot)
        have = None if decl is None else (decl.get("dtype"), decl.get("artifact_id"),
                                          decl.get("json_path"))
        if want == have:
            continue
        named = want[1] if want is not None else have[1] if have is not None else None
        path = next((d.path for d in docs if d.artifact_id == named), None)
        wrote = ("nothing" if want is None
                 else f"{{dtype {want[0]!r}, artifact_id {want[1]!r}, json_path {want[2]!r}}}")
        says = ("none" if have is None
                else f"{{dtype {have[0]!r}, artifact_id {have[1]!r}, json_path {have[2]!r}}}")
        yield finding(NOT_REDERIVED, f"publisher_defaults.{slot}: the manifest declares {says}; "
                      f"mesh-llm's writer would declare {wrote} from these files",
                      path=path)
