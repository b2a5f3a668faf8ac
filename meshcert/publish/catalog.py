"""The catalog entry for a published package (writer.md, "The catalog"): pure functions.

`entries/<owner>/<repo>.json` per source repo: `{schema_version: 1, source_repo, variants:
{<variant>: {source, curated, packages: [...]}}}`, the variant key being the source file stem
without `-NNNNN-of-NNNNN`. Old entries may hold `variants` as a list: they stay a list. The
package reference is pinned: `"revision": "<40-hex commit>"` beside mesh-llm's fields; a
reference to the same package repo is replaced, every other entry field is kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from meshcert.catalog.errors import CatalogError
from meshcert.certify.card_facts import source_file, total_bytes

SPLIT_SUFFIX = re.compile(r"-\d{5}-of-\d{5}$")


@dataclass(frozen=True)
class Source:
    repo: str
    file: str | None
    revision: str | None


def source_of(manifest: dict[str, Any]) -> Source | None:
    """The source repo the catalog files the package under; None when the manifest has none."""
    model = manifest.get("source_model")
    model = model if isinstance(model, dict) else {}
    repo = model.get("repo")
    if not isinstance(repo, str) or repo.count("/") != 1 or not all(repo.split("/")):
        return None
    revision = model.get("revision")
    return Source(repo, source_file(manifest), revision if isinstance(revision, str) else None)


def entry_path(source: Source) -> str:
    owner, name = source.repo.split("/")
    return f"entries/{owner}/{name}.json"


def variant_key(source: Source, model_id: str) -> str:
    if source.file:
        stem = source.file[:-5] if source.file.lower().endswith(".gguf") else source.file
        return SPLIT_SUFFIX.sub("", stem)
    return model_id


def package_reference(manifest: dict[str, Any], *, target: str, commit: str) -> dict[str, Any]:
    source = source_of(manifest)
    reference: dict[str, Any] = {"type": "layer-package", "repo": target, "revision": commit}
    if isinstance(manifest.get("layer_count"), int):
        reference["layer_count"] = manifest["layer_count"]
    reference["total_bytes"] = total_bytes(manifest)
    if source is not None and source.revision:
        reference["source_revision"] = source.revision
    return reference


def updated_entry(existing: bytes | None, manifest: dict[str, Any], *, target: str,
                  commit: str, experimental: bool) -> dict[str, Any]:
    """The entry with this package added (or its reference re-pinned)."""
    source = source_of(manifest)
    if source is None:
        raise CatalogError("the manifest names no source repo (source_model.repo)")
    try:
        entry = json.loads(existing) if existing is not None else None
    except ValueError as exc:
        raise CatalogError(f"{entry_path(source)} is not JSON: {exc}") from None
    if entry is None:
        entry = {"schema_version": 1, "source_repo": source.repo, "variants": {}}
    if not isinstance(entry, dict) or not isinstance(entry.get("variants", {}), dict | list):
        raise CatalogError(f"{entry_path(source)} is not a catalog entry")
    model_id = str(manifest.get("model_id") or target)
    key = variant_key(source, model_id)
    variants = entry.setdefault("variants", {})
    variant = _find_variant(variants, key)
    if variant is None:
        variant = _new_variant(source, key, model_id, experimental)
        if isinstance(variants, dict):
            variants[key] = variant
        else:
            variants.append(variant)
    packages = [p for p in variant.get("packages") or []
                if not (isinstance(p, dict) and p.get("repo") == target)]
    variant["packages"] = [*packages, package_reference(manifest, target=target, commit=commit)]
    return entry


def _find_variant(variants: dict[str, Any] | list[Any], key: str) -> dict[str, Any] | None:
    if isinstance(variants, dict):
        found = variants.get(key)
        return found if isinstance(found, dict) else None
    for item in variants:
        if not isinstance(item, dict):
            continue
        file = (item.get("source") or {}).get("file") if isinstance(item.get("source"),
                                                                    dict) else None
        if isinstance(file, str) and variant_key(Source("x/y", file, None), "") == key:
            return item
        if (item.get("curated") or {}).get("name") == key:
            return item
    return None


def _new_variant(source: Source, key: str, model_id: str, experimental: bool
                 ) -> dict[str, Any]:
    origin: dict[str, Any] = {"repo": source.repo}
    if source.file:
        origin["file"] = source.file
    if source.revision:
        origin["revision"] = source.revision
    curated: dict[str, Any] = {"name": key, "description": f"Layer package for {model_id}",
                               "extra_files": []}
    if experimental:
        curated["draft"] = True
    return {"source": origin, "curated": curated, "packages": []}


def entry_bytes(entry: dict[str, Any]) -> bytes:
    return (json.dumps(entry, indent=2) + "\n").encode()
