"""The package against the source GGUF given with `--source` (facts from source_gguf.py).

The source file(s) must match the manifest's source_model checksums; every source tensor must
be in the package and every package tensor in the source, with the same type, shape and bytes.
Projectors are not source-model tensors and are left out. When the source (or part of it)
cannot be read the comparison is incomplete (``check_not_run``), never passed.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from meshcert.certify.checks import asked_for, register
from meshcert.certify.package_gguf.fragments import Fragment, capped, fragments, preview
from meshcert.certify.package_gguf.source_facts import SourceFacts, SourceTensor, source_facts
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.constants import GGML_TYPE_NAMES
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem, TensorInfo
from meshcert.core.gguf.names import layer_of


@register("source_parity", order=360, codes=[
    "source_sha256_mismatch", "source_not_package_source", "source_tensor_missing_from_package",
    "package_tensor_not_in_source", "source_tensor_data_mismatch", "check_not_run",
    "unknown_source_file", "source_metadata_mismatch", "layer_count_mismatch",
], runs_when=[asked_for("--source SOURCE.gguf", lambda view: view.options.source)])
def check_source_parity(view: PackageView) -> Iterator[Finding]:
    facts = source_facts(view)
    if facts is None:
        yield finding("check_not_run", "source GGUF not compared: it was never read")
        return
    if facts.error is not None:
        yield finding("check_not_run", f"source GGUF not compared: {facts.error}")
        return
    unreadable = [s for s in facts.shards if s.error is not None]
    for shard in unreadable:
        yield finding("check_not_run", f"source file {shard.path} not compared: {shard.error}")
    for problem in facts.problems:
        yield finding("check_not_run", f"source parity incomplete: {problem}")
    package = (_v2_package_tensors(view) if view.package_format == "v2"
               else _package_tensors(fragments(view)))
    # One fault, one finding: a file that is not the package's source would otherwise fail
    # every tensor; per-tensor comparison runs only against the right source.
    wrong = _not_the_source(view, facts, package, complete=not unreadable)
    if wrong is not None:
        yield wrong
        return
    if not unreadable:  # a missing shard would make its tensors look absent from the source
        yield from _missing_from_package(facts, package)
        yield from _not_in_source(facts, package)
    yield from capped(list(_data_mismatches(facts, package)), limit=50)
    if view.package_format == "v2":
        yield from _v2_source_identity(view, facts)
    if not facts.package_data_hashed:
        yield finding("check_not_run", "tensor bytes not compared with the source: the package "
                      "files are not on local disk (types and shapes were compared)")


def _not_the_source(view: PackageView, facts: SourceFacts,
                    package: dict[str, tuple[Fragment, TensorInfo]], complete: bool
                    ) -> Finding | None:
    """The one finding for a --source that is not the package's source, else None.

    Evidence, strongest first: a declared SHA-256 the file does not have (whatever its tensors,
    it is not the file the manifest names); without a declared digest, a tensor set of another
    model (another architecture or block count, or most of its tensors in no artifact)."""
    differing = list(_checksum_differences(view.manifest, facts))
    summary = _tensor_set_summary(view, facts, package) if complete else None
    if differing:
        shown = "; ".join(f"{os.path.basename(path)} has sha256 {actual}, {field} says {sha}"
                          for path, actual, field, sha in differing[:3])
        more = f" (and {len(differing) - 3} more file(s))" if len(differing) > 3 else ""
        tail = f". {summary.text}" if summary is not None else ""
        return finding("source_sha256_mismatch", f"{facts.given_path} is not the package's "
                       f"source: {shown}{more}{tail}", path=differing[0][0])
    if summary is not None and summary.another_model:
        return finding("source_not_package_source", f"{facts.given_path} is not the package's "
                       f"source (the manifest declares no SHA-256 to compare): {summary.text}",
                       path=facts.given_path)
    return None


def _checksum_differences(manifest: dict[str, Any] | None, facts: SourceFacts
                          ) -> Iterator[tuple[str, str, str, str]]:
    """(shard path, its sha256, the manifest field, the sha256 that field declares) for each
    declared digest a hashed source file does not have."""
    source = manifest.get("source_model") if manifest else None
    if not isinstance(source, dict):
        return
    expected: dict[str, str] = {}  # file base name -> declared sha256
    for entry in source.get("files") or []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) \
                and isinstance(entry.get("sha256"), str):
            expected[os.path.basename(entry["path"])] = entry["sha256"].lower()
    main = source.get("primary_file") or source.get("path")
    main_name = os.path.basename(main) if isinstance(main, str) else None
    hashed = [s for s in facts.shards if s.sha256 is not None]
    names = [os.path.basename(s.path) for s in hashed]
    main_shard = names.index(main_name) if main_name in names else 0
    declared_main = source.get("sha256")
    for i, shard in enumerate(hashed):
        claims = set()
        if names[i] in expected:
            claims.add(("source_model.files[]", expected[names[i]]))
        if i == main_shard and isinstance(declared_main, str):
            claims.add(("source_model.sha256", declared_main.lower()))
        for field, sha in sorted(claims):
            if shard.sha256 is not None and sha != shard.sha256:
                yield shard.path, shard.sha256, field, sha


@dataclass(frozen=True)
class _TensorSetSummary:
    text: str
    another_model: bool  # the tensor set alone says this is another model's file


def _tensor_set_summary(view: PackageView, facts: SourceFacts,
                        package: dict[str, tuple[Fragment, TensorInfo]]) -> _TensorSetSummary:
    """How the source's tensors compare with the package's, in one sentence."""
    header = facts.shards[0].header if facts.shards else None
    source_arch = header.architecture if isinstance(header, GGUFHeader) else None
    blocks = header.kv.get(f"{source_arch}.block_count") if isinstance(header, GGUFHeader) \
        else None
    package_arch = _package_architecture(view)
    layers = (view.manifest or {}).get("layer_count")
    missing = [n for n in facts.tensors if n not in package]
    extra = [n for n in package if n not in facts.tensors]
    parts: list[str] = []
    if source_arch and package_arch and source_arch != package_arch:
        parts.append(f"it is a {source_arch} model, the package a {package_arch} model")
    if isinstance(blocks, int) and isinstance(layers, int) and blocks != layers:
        parts.append(f"it has {blocks} blocks, the package {layers} layers")
    tensor_sets_differ = bool(missing or extra)
    if tensor_sets_differ:
        parts.append(f"{len(missing)} of its {len(facts.tensors)} tensors are in no package "
                     f"artifact and {len(extra)} of the package's {len(package)} are not in it")
    if parts:
        identity_differs = len(parts) > (1 if tensor_sets_differ else 0)
        mostly_absent = len(missing) * 2 > len(facts.tensors)
        return _TensorSetSummary("Its tensors are not the package's: " + "; ".join(parts),
                                 identity_differs or mostly_absent)
    differing = [m.message.split(" in ", 1)[0] for m in _data_mismatches(facts, package)]
    if differing:
        return _TensorSetSummary(f"Its {len(facts.tensors)} tensors match the package's by "
                                 f"name, but {len(differing)} differ in type, shape or bytes: "
                                 f"{preview(differing, limit=4)}", False)
    compared = "type, shape and bytes" if facts.package_data_hashed else "type and shape"
    keys = _carrier_differences(view, header)
    why = (f"its metadata differs from the carrier's in {len(keys)} key(s): {preview(keys)}"
           if keys else "its metadata differs, or the manifest's digest is wrong")
    return _TensorSetSummary(f"Its {len(facts.tensors)} tensors equal the package's by name, "
                             f"{compared}; {why}", False)


def _carrier_differences(view: PackageView, source: GGUFHeader | HeaderProblem | None
                         ) -> list[str]:
    carrier = view.carrier_entry() if view.package_format == "v2" else None
    header = view.headers.get(carrier.path) if carrier is not None else None
    if not isinstance(source, GGUFHeader) or not isinstance(header, GGUFHeader):
        return []
    return _metadata_differences(source, header)


def _package_architecture(view: PackageView) -> str | None:
    carrier = view.carrier_entry() if view.package_format == "v2" else None
    if carrier is not None:
        header = view.headers.get(carrier.path)
        if isinstance(header, GGUFHeader):
            return header.architecture
    for frag in fragments(view):
        if frag.header.architecture:
            return frag.header.architecture
    return None


def _v2_package_tensors(view: PackageView) -> dict[str, tuple[Fragment, TensorInfo]]:
    """v2: every tensor of the tensor catalog where its locator puts it, then any tensor a
    payload artifact's own directory adds (a foreign one is not in the source: reported below)."""
    out: dict[str, tuple[Fragment, TensorInfo]] = {}
    tensor_catalog = view.tensor_catalog()
    frags = {f.path: f for f in fragments(view)}
    for t in tensor_catalog.tensors if tensor_catalog is not None else []:
        frag = frags.get(t.artifact.path) if t.artifact is not None else None
        if frag is not None:
            out.setdefault(t.name, (frag, TensorInfo(t.name, t.shape, t.ggml_type,
                                                     t.offset - frag.header.data_offset,
                                                     t.size)))
    for frag in frags.values():
        if frag.role != "shared.metadata":
            for info in frag.header.tensors:
                out.setdefault(info.name, (frag, info))
    return out


def _v2_source_identity(view: PackageView, facts: SourceFacts) -> Iterator[Finding]:
    """What verify-package-v2 adds: the declared files are the real inventory, layer_count is
    the source's block_count, and the carrier holds the source's normalized metadata."""
    manifest = view.manifest or {}
    source = manifest.get("source_model")
    declared = {os.path.basename(f["path"]): f for f in (source or {}).get("files") or []
                if isinstance(f, dict) and isinstance(f.get("path"), str)} \
        if isinstance(source, dict) else {}
    for shard in facts.shards:
        name = os.path.basename(shard.path)
        entry = declared.get(name)
        if entry is None:
            yield finding("unknown_source_file", f"source file {name} is not listed in "
                          "source_model.files", path=shard.path)
        elif shard.size is not None and entry.get("byte_size") != shard.size:
            yield finding("source_sha256_mismatch", f"{name} is {shard.size} bytes, "
                          f"source_model.files says {entry.get('byte_size')}", path=shard.path)
    shard_names = {os.path.basename(s.path) for s in facts.shards}
    for name in sorted(set(declared) - shard_names):
        yield finding("unknown_source_file", f"source_model.files lists {name}, which is not "
                      "part of the source given with --source")
    first = facts.shards[0].header if facts.shards else None
    carrier = view.carrier_entry()
    carrier_header = view.headers.get(carrier.path) if carrier is not None else None
    if not isinstance(first, GGUFHeader) or not isinstance(carrier_header, GGUFHeader):
        return
    arch = first.architecture
    blocks = first.kv.get(f"{arch}.block_count")
    layers = manifest.get("layer_count")
    if isinstance(blocks, int) and isinstance(layers, int) and blocks != layers:
        yield finding("layer_count_mismatch", f"layer_count is {layers} but the source's "
                      f"{arch}.block_count is {blocks}")
    differing = _metadata_differences(first, carrier_header)
    if differing:
        yield finding("source_metadata_mismatch", f"the carrier's metadata differs from the "
                      f"source's for {len(differing)} key(s): {preview(differing)}",
                      path=carrier.path if carrier is not None else None)


def _metadata_differences(source: GGUFHeader, carrier: GGUFHeader) -> list[str]:
    """Keys whose values differ, ignoring what the writer normalizes (split.* removed,
    general.alignment added, skippy.package.* locators added)."""
    from meshcert.certify.formats.v2_carrier import KEY_PREFIX, SPLIT_KEYS

    def normal(kv: dict[str, Any], added: bool) -> dict[str, Any]:
        out = {k: v for k, v in kv.items() if k not in SPLIT_KEYS
               and not k.startswith(KEY_PREFIX)}
        if added and "general.alignment" not in source.kv:
            out.pop("general.alignment", None)
        return out

    ours, theirs = normal(source.kv, False), normal(carrier.kv, True)
    return sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))


def _package_tensors(frags: list[Fragment]) -> dict[str, tuple[Fragment, TensorInfo]]:
    out: dict[str, tuple[Fragment, TensorInfo]] = {}
    for frag in frags:
        for t in frag.header.tensors:
            out.setdefault(t.name, (frag, t))
    return out


def _missing_from_package(facts: SourceFacts, package: dict[str, Any]) -> Iterator[Finding]:
    """Grouped by owner (a layer, or the shared files) so a missing layer is one finding."""
    by_owner: dict[int | None, list[str]] = defaultdict(list)
    for name in facts.tensors:
        if name not in package:
            by_owner[layer_of(name)].append(name)
    for layer, names in sorted(by_owner.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
        owner = f"layer {layer}" if layer is not None else "the shared files"
        yield finding("source_tensor_missing_from_package", f"{len(names)} source tensor(s) of "
                      f"{owner} are in no package artifact: {preview(names)}", layer_index=layer)


def _not_in_source(facts: SourceFacts, package: dict[str, tuple[Fragment, TensorInfo]]
                   ) -> Iterator[Finding]:
    by_path: dict[str, list[str]] = defaultdict(list)
    layers: dict[str, int | None] = {}
    for name, (frag, _) in package.items():
        if name not in facts.tensors:
            by_path[frag.path].append(name)
            layers[frag.path] = frag.layer_index
    for path, names in by_path.items():
        yield finding("package_tensor_not_in_source", f"{path} holds {len(names)} tensor(s) the "
                      f"source model does not: {preview(names)}", path=path,
                      layer_index=layers[path])


def _data_mismatches(facts: SourceFacts, package: dict[str, tuple[Fragment, TensorInfo]]
                     ) -> Iterator[Finding]:
    for name, src in facts.tensors.items():
        if name not in package:
            continue
        frag, pkg = package[name]
        differences = _differences(src, pkg, facts.package_tensor_digest.get((frag.path, name)),
                                   facts.tensor_digest)
        if differences:
            yield finding("source_tensor_data_mismatch", f"{name} in {frag.path}: "
                          f"{'; '.join(differences)}", path=frag.path,
                          layer_index=frag.layer_index)


def _differences(src: SourceTensor, pkg: TensorInfo, pkg_digest: str | None,
                 algorithm: str) -> list[str]:
    out: list[str] = []
    if src.ggml_type != pkg.ggml_type:
        out.append(f"type {_type_name(src.ggml_type)} in the source, "
                   f"{_type_name(pkg.ggml_type)} in the package")
    if tuple(src.shape) != tuple(pkg.shape):
        out.append(f"shape {list(src.shape)} in the source, {list(pkg.shape)} in the package")
    if not out and src.digest is not None and pkg_digest is not None \
            and src.digest != pkg_digest:
        out.append(f"the {pkg.n_bytes} data bytes differ ({algorithm} {src.digest[:12]}... in "
                   f"the source, {pkg_digest[:12]}... in the package)")
    return out


def _type_name(ggml_type: int) -> str:
    return GGML_TYPE_NAMES.get(ggml_type, f"type {ggml_type}")
