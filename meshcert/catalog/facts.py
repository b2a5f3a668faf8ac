"""What a certified package says about itself, read from its manifest (pure)."""

from __future__ import annotations

from typing import Any

from meshcert.catalog.report import PackageFacts
from meshcert.certify.manifest_model import is_int
from meshcert.certify.mesh_llm_versions import minimum_mesh_llm
from meshcert.certify.node_defaults import node_defaults
from meshcert.certify.view import PackageView


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _base_name(path: str | None) -> str | None:
    if path is None:
        return None
    return path.replace("\\", "/").rsplit("/", 1)[-1] or None


def package_facts(view: PackageView) -> PackageFacts | None:
    """None when there is no manifest to read facts from."""
    manifest = view.manifest
    if manifest is None:
        return None
    fmt = view.package_format
    source = manifest.get("source_model")
    source = source if isinstance(source, dict) else {}
    sizes = [a.declared_size for a in view.artifacts()]
    total = sum(s for s in sizes if s is not None) if sizes and None not in sizes else None
    files = source.get("files")
    first = files[0].get("path") if isinstance(files, list) and files \
        and isinstance(files[0], dict) else None
    # primary_file, else the first listed file, else (v1) the writer's absolute source path
    primary = _text(source.get("primary_file")) or _text(first) or _text(source.get("path"))
    layers = manifest.get("layer_count")
    return PackageFacts(
        format=fmt, model_id=_text(manifest.get("model_id")),
        package_id=_text(manifest.get("package_id")) if fmt == "v2" else None,
        layer_count=layers if is_int(layers) else None, total_bytes=total,
        artifacts=len(sizes), source_repo=_text(source.get("repo")),
        source_revision=_text(source.get("revision")), source_file=_base_name(primary),
        producer_abi=_text(manifest.get("native_abi_version" if fmt == "v2"
                                        else "skippy_abi_version")),
        **_node_facts(manifest))


def _node_facts(manifest: dict[str, Any]) -> dict[str, Any]:
    """The mesh-llm release it needs and the defaults it ships (v2; empty for v1)."""
    need = minimum_mesh_llm(manifest)
    node = node_defaults(manifest)
    if need is None or node is None:
        return {}
    default = next((p.name for p in node.request_profiles if "default" in p.selection), None)
    return {"mesh_llm_minimum": need.version, "kv_cache_type": node.kv_cache_type,
            "compute_dtype": node.declared_compute_dtype,
            "request_profiles": [p.name for p in node.request_profiles],
            "default_profile": default}
