"""Package v2 metadata carrier and tensor catalog (package-v2.md, "The metadata carrier and the
tensor catalog"), from headers only.

- the carrier: no payload bytes, `general.architecture` and a positive
  `{arch}.embedding_length`, well-formed locator keys (`invalid_metadata_carrier`);
- every tensor of the rebuilt tensor catalog: unique, non-zero dimensions, ordinal in range,
  alignment a power of two, aligned offset, stored length equal to its type and shape, inside
  its artifact, not overlapping another tensor of that artifact;
- placement: `blk.N.*` tensors stored in layer N's artifact, other tensors outside layer files
  (`tensor_in_wrong_layer`); every tensor the architecture requires is in the tensor catalog;
- every payload artifact's own GGUF directory agrees with the carrier's locators and holds no
  foreign tensor (`carrier_directory_mismatch`): what the builder's verify command re-checks;
- artifacts mesh-llm's certifier cannot select (`mesh_certify_would_fail`, a warning).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.formats.v2_carrier import CatalogTensor, TensorCatalog
from meshcert.certify.formats.v2_layout import (
    MESH_SELECTABLE_SHARED,
    NOT_PAYLOAD_ROLES,
    PUBLISHER_ROLE,
)
from meshcert.certify.manifest_model import ArtifactEntry, is_int
from meshcert.certify.package_gguf.fragments import capped, preview
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.names import layer_of, required_tensors


def _carrier(view: PackageView) -> tuple[ArtifactEntry, GGUFHeader] | None:
    entry = view.carrier_entry()
    header = view.headers.get(entry.path) if entry is not None else None
    return (entry, header) if entry is not None and isinstance(header, GGUFHeader) else None


@register("v2_carrier", order=300, codes=[
    "carrier_has_payload", "invalid_metadata_carrier", "check_not_run",
], formats=["v2"])
def v2_carrier(view: PackageView) -> Iterator[Finding]:
    if view.package_format != "v2":
        return
    found = _carrier(view)
    if found is None:
        entry = view.carrier_entry()
        if entry is None:
            yield _unidentified(view)
        elif isinstance(entry.path, str) and entry.path in view.files \
                and view.files[entry.path].kind == "file" and entry.path not in view.headers:
            yield finding("check_not_run", f"the metadata carrier {entry.path} was not read",
                          path=entry.path)
        return  # a missing or unreadable carrier is reported by the artifact/structure checks
    entry, header = found
    path = entry.path
    size = header.file_size
    if size is not None and size != header.data_offset:
        yield finding("carrier_has_payload", f"{path} is {size} bytes but its GGUF data section "
                      f"starts at {header.data_offset}: the carrier must hold no tensor data",
                      path=path)
    arch = header.architecture
    if arch is None:
        yield finding("invalid_metadata_carrier", f"{path} has no general.architecture",
                      path=path)
    else:
        width = header.kv.get(f"{arch}.embedding_length")
        if not (is_int(width) and width > 0):
            yield finding("invalid_metadata_carrier", f"{path}: {arch}.embedding_length must be "
                          f"a positive integer, found {width!r}", path=path)
    tensor_catalog = view.tensor_catalog()
    for problem in tensor_catalog.problems if tensor_catalog is not None else []:
        yield finding("invalid_metadata_carrier", f"{path}: {problem}", path=path)


def _unidentified(view: PackageView) -> Finding:
    """No carrier named: the manifest checks say why; this says what could not be checked."""
    layout = view.unidentified_carrier()
    looks = (f"; {layout.path} is the carrier by its layout (no data section), so it was not "
             "bounds-checked as a plain GGUF either") if layout is not None else ""
    return finding("check_not_run", "the metadata carrier cannot be identified "
                   "(source_model.metadata_artifact_id names no artifact): the tensor catalog "
                   f"and its locators were not checked{looks}",
                   path=layout.path if layout is not None else None)


def _usable_tensor_catalog(view: PackageView) -> TensorCatalog | None:
    if view.package_format != "v2":
        return None
    tensor_catalog = view.tensor_catalog()
    return tensor_catalog if tensor_catalog is not None and tensor_catalog.usable else None


@register("v2_tensor_catalog", order=301, codes=[
    "duplicate_tensor", "invalid_dimension", "layer_out_of_bounds", "invalid_alignment",
    "misaligned_offset", "invalid_stored_length", "storage_out_of_bounds",
    "overlapping_storage", "unknown_artifact",
], formats=["v2"])
def v2_tensor_catalog(view: PackageView) -> Iterator[Finding]:
    tensor_catalog = _usable_tensor_catalog(view)
    if tensor_catalog is None:
        return
    manifest = view.manifest or {}
    layers = manifest.get("layer_count") if is_int(manifest.get("layer_count")) else None
    names = Counter(t.name for t in tensor_catalog.tensors)
    for name, n in sorted(names.items()):
        if n > 1:
            yield finding("duplicate_tensor", f"tensor {name!r} appears {n} times in the "
                          "carrier's directory", path=_carrier_path(view))
    out: list[Finding] = []
    for t in tensor_catalog.tensors:
        out.extend(_tensor_rules(t, layers))
    yield from capped(out, limit=50)
    yield from capped(list(_overlaps(tensor_catalog)), limit=20)


def _carrier_path(view: PackageView) -> str | None:
    entry = view.carrier_entry()
    return entry.path if entry is not None and isinstance(entry.path, str) else None


def _tensor_rules(t: CatalogTensor, layers: int | None) -> Iterator[Finding]:
    art = t.artifact
    path = art.path if art is not None and isinstance(art.path, str) else None
    where = f"tensor {t.name!r}"
    if art is None:
        yield finding("unknown_artifact", f"{where}: tensor_part {t.part} names no payload "
                      "artifact (parts are the artifacts other than the carrier, the sidecars "
                      "and the publisher files, sorted by id)")
    if not t.shape or any(d == 0 for d in t.shape):
        yield finding("invalid_dimension", f"{where} has dimensions {list(t.shape)}", path=path)
    if layers is not None and t.layer_ordinal is not None and t.layer_ordinal >= layers:
        yield finding("layer_out_of_bounds", f"{where} is stored in layer {t.layer_ordinal}'s "
                      f"artifact, but layer_count is {layers}", path=path,
                      layer_index=t.layer_ordinal)
    if t.alignment == 0 or t.alignment & (t.alignment - 1):
        yield finding("invalid_alignment", f"{where}: tensor_alignment {t.alignment} is not a "
                      "power of two", path=path)
    elif t.offset % t.alignment:
        yield finding("misaligned_offset", f"{where}: tensor_offset {t.offset} is not a multiple "
                      f"of {t.alignment}", path=path)
    if t.size == 0:
        yield finding("invalid_stored_length", f"{where}: tensor_size is 0", path=path)
    elif t.n_bytes and t.size != t.n_bytes:
        yield finding("invalid_stored_length", f"{where}: tensor_size is {t.size} but its type "
                      f"and shape take {t.n_bytes} bytes", path=path)
    declared = art.declared_size if art is not None else None
    if declared is not None and t.offset + t.size > declared:
        yield finding("storage_out_of_bounds", f"{where}: bytes {t.offset}..{t.offset + t.size} "
                      f"lie beyond {path}'s byte_size {declared}", path=path,
                      layer_index=t.layer_ordinal)


def _overlaps(tensor_catalog: TensorCatalog) -> Iterator[Finding]:
    by_part: dict[int, list[CatalogTensor]] = defaultdict(list)
    for t in tensor_catalog.tensors:
        if t.size:
            by_part[t.part].append(t)
    for tensors in by_part.values():
        tensors.sort(key=lambda t: t.offset)
        for prev, cur in zip(tensors, tensors[1:], strict=False):
            if cur.offset < prev.offset + prev.size:
                path = cur.artifact.path if cur.artifact is not None else None
                yield finding("overlapping_storage", f"tensors {prev.name!r} "
                              f"({prev.offset}..{prev.offset + prev.size}) and {cur.name!r} "
                              f"(from {cur.offset}) share bytes", path=path)


@register("v2_tensor_placement", order=321, codes=[
    "tensor_in_wrong_layer", "missing_required_tensor",
], formats=["v2"])
def v2_tensor_placement(view: PackageView) -> Iterator[Finding]:
    tensor_catalog = _usable_tensor_catalog(view)
    if tensor_catalog is None:
        return
    wrong: dict[str, list[str]] = defaultdict(list)
    for t in tensor_catalog.tensors:
        if t.artifact is None or not isinstance(t.artifact.path, str):
            continue
        own = layer_of(t.name)
        if own != t.layer_ordinal:
            wrong[t.artifact.path].append(t.name)
    for path, names in wrong.items():
        entry = next(t.artifact for t in tensor_catalog.tensors
                     if t.artifact is not None and t.artifact.path == path)
        kind = (f"layer {entry.layer_index}'s artifact" if entry.layer_index is not None
                else "a non-layer artifact")
        yield finding("tensor_in_wrong_layer", f"{path} is {kind} but stores {len(names)} "
                      f"tensor(s) of another owner: {preview(names)}", path=path,
                      layer_index=entry.layer_index)
    present = {t.name for t in tensor_catalog.tensors}
    found = _carrier(view)
    arch = found[1].architecture if found is not None else None
    manifest = view.manifest or {}
    layers = manifest.get("layer_count") if is_int(manifest.get("layer_count")) else 0
    wanted = [*required_tensors(arch, "shared.embeddings"),
              *required_tensors(arch, "shared.output")]
    for layer in range(layers or 0):
        wanted.extend(required_tensors(arch, "layer", layer))
    missing = [name for name in wanted if name not in present]
    if missing:
        yield finding("missing_required_tensor", f"the tensor catalog lacks {len(missing)} "
                      f"tensor(s) the {arch} architecture needs: {preview(missing)}",
                      path=_carrier_path(view))


@register("v2_payload_directories", order=302, codes=["carrier_directory_mismatch"], formats=["v2"])
def v2_payload_directories(view: PackageView) -> Iterator[Finding]:
    """Each payload artifact's own GGUF directory against the carrier's locators."""
    tensor_catalog = _usable_tensor_catalog(view)
    if tensor_catalog is None:
        return
    directory = {t.name for t in tensor_catalog.tensors}
    located: dict[str, list[CatalogTensor]] = defaultdict(list)
    for t in tensor_catalog.tensors:
        if t.artifact is not None and isinstance(t.artifact.path, str):
            located[t.artifact.path].append(t)
    out: list[Finding] = []
    for entry in view.artifacts():
        path = entry.path
        if entry.role in NOT_PAYLOAD_ROLES or not isinstance(path, str):
            continue
        header = view.headers.get(path)
        if not isinstance(header, GGUFHeader):
            continue
        own = {t.name: t for t in header.tensors}
        foreign = [n for n in own if n not in directory]
        if foreign:
            out.append(finding("carrier_directory_mismatch", f"{path} holds {len(foreign)} "
                               f"tensor(s) the carrier's directory does not list: "
                               f"{preview(foreign)}", path=path, layer_index=entry.layer_index))
        for t in located.get(path, []):
            info = own.get(t.name)
            if info is None:
                out.append(finding("carrier_directory_mismatch", f"the carrier locates "
                                   f"{t.name!r} in {path}, whose directory lacks it", path=path,
                                   layer_index=entry.layer_index))
                continue
            diffs = []
            if info.ggml_type != t.ggml_type:
                diffs.append(f"type {info.ggml_type} vs {t.ggml_type}")
            if tuple(info.shape) != tuple(t.shape):
                diffs.append(f"shape {list(info.shape)} vs {list(t.shape)}")
            if header.data_offset + info.offset != t.offset:
                diffs.append(f"offset {header.data_offset + info.offset} vs {t.offset}")
            if info.n_bytes and info.n_bytes != t.size:
                diffs.append(f"size {info.n_bytes} vs {t.size}")
            if diffs:
                out.append(finding("carrier_directory_mismatch", f"{t.name!r} in {path} "
                                   f"disagrees with the carrier (artifact vs carrier): "
                                   f"{'; '.join(diffs)}", path=path,
                                   layer_index=entry.layer_index))
    yield from capped(out, limit=50)


@register("v2_mesh_compatibility", order=303, codes=["mesh_certify_would_fail"], formats=["v2"])
def v2_mesh_compatibility(view: PackageView) -> Iterator[Finding]:
    """Valid layouts mesh-llm's certifier still refuses ("unsupported artifact path").
    Publisher artifacts are never selected, so never refused (mesh-llm-0.79.md §3.2)."""
    if view.package_format != "v2":
        return
    layout = view.unidentified_carrier()
    for entry in view.artifacts():
        path = entry.path
        if entry.role in ("shared.metadata", "projector", "layer", PUBLISHER_ROLE) \
                or not isinstance(path, str):
            continue
        if layout is not None and path == layout.path:
            continue  # the carrier by layout: what is wrong is the manifest's metadata id
        if path not in MESH_SELECTABLE_SHARED:
            yield finding("mesh_certify_would_fail", f"{path}: mesh-llm's certifier selects only "
                          "shared/common.gguf, shared/embeddings.gguf and shared/output.gguf "
                          "besides layer files, and fails with 'unsupported artifact path'",
                          path=path)
