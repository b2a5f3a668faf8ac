"""Real package-v2 fixtures for tests: a tiny source model written with the gguf library and
split by the writer (`meshcert package write`), plus the edits that break one v2 rule at a
time."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meshcert.certify.formats.package_id import compute_package_id
from meshcert.certify.formats.v2_carrier import LOCATOR_ARRAYS
from meshcert.testing import glm_dsa_spec, llama_spec, write_source_gguf
from meshcert.writer.plan import V2Layout
from tests.support.splits import (
    Locator,
    SplitPackage,
    read_source,
    split_v1,
    split_v2,
    write_carrier,
)

MANIFEST = "model-package.json"
MODEL_ID = "meshcert/tiny-llama-GGUF:F32"


def tiny_source(base: Path, kind: str = "llama", layers: int = 4,
                drop: tuple[str, ...] = (), rope_freqs: bool = False) -> Path:
    spec = llama_spec(block_count=layers, rope_freqs=rope_freqs) if kind == "llama" else \
        glm_dsa_spec(block_count=layers)
    spec.tensors = [t for t in spec.tensors if t.name not in drop]
    return write_source_gguf(spec, base / "source" / spec.source_file)


# A pinned source commit (hand-made, lower-case 40 hex): mesh-llm's HF publication job refuses a
# branch name such as "main" (mesh-llm-0.79.md §6.1), so a package that should certify clean
# names a commit.
SOURCE_COMMIT = "5f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c"


def build_v2(base: Path, *, kind: str = "llama", layers: int = 4, layout: V2Layout = "common",
             part_budget: int | None = None, drop: tuple[str, ...] = ()) -> SplitPackage:
    source = tiny_source(base, kind, layers, drop)
    return split_v2(source, base / "pkg", model_id=MODEL_ID, layout=layout,
                    part_budget=part_budget, repo="meshcert/tiny-llama",
                    revision=SOURCE_COMMIT)


def build_v1(base: Path, *, kind: str = "llama", layers: int = 4, rope_freqs: bool = False
             ) -> SplitPackage:
    """A v1 package as skippy-model-package writes it (`rope_freqs`: with a metadata-role
    tensor, copied into every fragment)."""
    source = tiny_source(base, kind, layers, rope_freqs=rope_freqs)
    return split_v1(source, base / "pkg", model_id=MODEL_ID, repo="meshcert/tiny-llama",
                    revision="main")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_manifest(pkg: SplitPackage, manifest: dict[str, Any], *, reid: bool = True) -> None:
    if reid and manifest.get("schema_version") == 2:
        manifest["package_id"] = compute_package_id(manifest)
    (pkg.root / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    pkg.manifest = manifest


def edit_manifest(pkg: SplitPackage, edit: Callable[[dict[str, Any]], Any], *,
                  reid: bool = True) -> None:
    """Apply `edit` to the manifest; by default re-identify it (a writer-made package)."""
    manifest = json.loads((pkg.root / MANIFEST).read_text())
    edit(manifest)
    write_manifest(pkg, manifest, reid=reid)


def refresh_artifact(pkg: SplitPackage, rel: str) -> None:
    """Make the catalog entry for `rel` match the file again (size and sha256), re-identified."""
    path = pkg.root / rel

    def fix(m: dict[str, Any]) -> None:
        for entry in m["artifact_catalog"]["entries"]:
            if entry["path"] == rel:
                entry["byte_size"] = path.stat().st_size
                entry["sha256"] = sha256_file(path)

    edit_manifest(pkg, fix)


def refresh_v1_artifact(pkg: SplitPackage, rel: str) -> None:
    """v1: make the manifest's artifact_bytes and sha256 for `rel` match the file again (as a
    writer re-run would), so only the fragment's content is wrong."""
    path = pkg.root / rel

    def fix(m: dict[str, Any]) -> None:
        for entry in [*m["shared"].values(), *m["layers"]]:
            if entry["path"] == rel:
                entry["artifact_bytes"] = path.stat().st_size
                entry["sha256"] = sha256_file(path)

    edit_manifest(pkg, fix)


def flip_tensor_byte(pkg: SplitPackage, rel: str, name: str) -> None:
    """v1: flip one bit of tensor `name`'s data in fragment `rel`, manifest updated to match."""
    file = pkg.root / rel
    header = read_source(file)
    tensor = next(t for t in header.tensors if t.name == name)
    data = bytearray(file.read_bytes())
    data[header.data_offset + tensor.offset + 1] ^= 0x01
    file.write_bytes(bytes(data))
    refresh_v1_artifact(pkg, rel)


def carrier_locators(pkg: SplitPackage) -> list[list[int]]:
    header = read_source(pkg.root / "shared/metadata.gguf")
    arrays = [header.kv[k] for k in LOCATOR_ARRAYS]
    return [list(row) for row in zip(*arrays, strict=True)]


def tensor_index(pkg: SplitPackage, name: str) -> int:
    header = read_source(pkg.root / "shared/metadata.gguf")
    return next(i for i, t in enumerate(header.tensors) if t.name == name)


def rewrite_carrier(pkg: SplitPackage, edit: Callable[[list[list[int]]], Any] | None = None,
                    **options: Any) -> None:
    """Rewrite the carrier with edited locators (rows of part, offset, size, alignment) or
    other marker values, then make the manifest agree with the new file."""
    carrier = pkg.root / "shared/metadata.gguf"
    current = read_source(carrier)
    rows = carrier_locators(pkg)
    if edit is not None:
        edit(rows)
    locators: list[Locator] = [(r[0], r[1], r[2], r[3]) for r in rows]
    part_count = options.pop("part_count", current.kv["skippy.package.part_count"])
    write_carrier(carrier, pkg.source_path, list(current.tensors), locators,
                  part_count=part_count, **options)
    refresh_artifact(pkg, "shared/metadata.gguf")


# --- publisher files as mesh-llm v0.77-v0.79's writer adds them (mesh-llm-0.79.md §2.2) -------
PINNED_REVISION = "0123456789ABCDEF0123456789abcdef01234567"  # upper-case hex: mesh-llm accepts it


def tiny_config_json() -> dict[str, Any]:
    """A config.json that agrees with the tiny llama carrier's geometry (§2.4)."""
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 4, "max_position_embeddings": 256,
            "torch_dtype": "bfloat16"}


def add_publisher_files(pkg: SplitPackage, files: dict[str, bytes], *,
                        defaults: dict[str, Any] | None = None,
                        generation: dict[str, Any] | None = None,
                        revision: str = PINNED_REVISION) -> None:
    """Add publisher files the way mesh-llm's writer does: `metadata/<basename>` artifacts after
    the payload, `publisher_metadata[]` in the given (CLI) order, bound to the source's repo
    and a pinned revision; `defaults` as publisher_defaults (None: none), `generation` as the
    manifest's generation (None: unchanged); then re-identified, and the README written again
    from the new manifest."""
    from meshcert.certify.formats.publisher import BY_BASENAME

    (pkg.root / "metadata").mkdir(exist_ok=True)
    for basename, data in files.items():
        (pkg.root / "metadata" / basename).write_bytes(data)

    def edit(m: dict[str, Any]) -> None:
        m["source_model"]["revision"] = revision
        for basename, data in files.items():
            spec = BY_BASENAME[basename]
            m["artifact_catalog"]["entries"].append({
                "id": spec.artifact_id, "path": spec.package_path, "byte_size": len(data),
                "sha256": hashlib.sha256(data).hexdigest()})
            m.setdefault("publisher_metadata", []).append({
                "role": spec.role, "artifact_id": spec.artifact_id,
                "source_repo": m["source_model"]["repo"], "source_revision": revision,
                "source_path": basename})
        if defaults is not None:
            m["publisher_defaults"] = defaults
        if generation is not None:
            m["generation"] = generation

    edit_manifest(pkg, edit)
    card = pkg.root / "README.md"
    if card.exists():  # a writer writes its card from the manifest it wrote
        from meshcert.writer.card import render_card

        raw = (pkg.root / MANIFEST).read_bytes()
        card.write_text(render_card(pkg.manifest, hashlib.sha256(raw).hexdigest()),
                        encoding="utf-8")
