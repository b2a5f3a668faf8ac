"""v2 test packages with publisher files, as mesh-llm v0.77+ writes them (mesh-llm-0.79.md
§2.2): the files under metadata/, one catalog entry each (after the payload), one
publisher_metadata entry each (in the order given), typed publisher_defaults, and the
package re-identified."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from meshcert.certify.formats.publisher import BY_BASENAME
from tests.certify.v2_packages import build_v2, edit_manifest
from tests.support.splits import SplitPackage

SOURCE_REVISION = "0123456789abcdef0123456789abcdef01234567"
# the tiny llama carrier's geometry (tests/certify/v2_packages.py: 4 layers, width 64, 4 heads)
TINY_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 4, "hidden_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 256,
    "torch_dtype": "bfloat16",
}


def json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def add_publisher_files(pkg: SplitPackage, files: dict[str, bytes], *,
                        defaults: dict[str, Any] | None = None,
                        edit: Any = None) -> SplitPackage:
    """Add `files` (basename -> bytes) as publisher artifacts; `defaults` is written as
    publisher_defaults when given; `edit(manifest)` runs last, before re-identifying."""
    for basename, data in files.items():
        path = pkg.root / "metadata" / basename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def publish(manifest: dict[str, Any]) -> None:
        source = manifest["source_model"]
        source["revision"] = SOURCE_REVISION
        entries = manifest["artifact_catalog"]["entries"]
        meta = manifest.setdefault("publisher_metadata", [])
        for basename, data in files.items():
            spec = BY_BASENAME[basename]
            entries.append({"id": spec.artifact_id, "path": spec.package_path,
                            "byte_size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
            meta.append({"role": spec.role, "artifact_id": spec.artifact_id,
                         "source_repo": source["repo"], "source_revision": SOURCE_REVISION,
                         "source_path": basename})
        if defaults is not None:
            manifest["publisher_defaults"] = defaults
        if edit is not None:
            edit(manifest)

    edit_manifest(pkg, publish)
    return pkg


def compute_default(dtype: str = "bf16", json_path: str = "/torch_dtype") -> dict[str, Any]:
    return {"compute_dtype": {"dtype": dtype, "artifact_id": "publisher-config-json",
                              "json_path": json_path}}


def build_published(base: Path, files: dict[str, bytes] | None = None, *,
                    defaults: dict[str, Any] | None = None, edit: Any = None) -> SplitPackage:
    """A tiny v2 package with config.json (TINY_CONFIG) and its writer-derived default, unless
    other files or defaults are given."""
    pkg = build_v2(base)
    return add_publisher_files(
        pkg, files if files is not None else {"config.json": json_bytes(TINY_CONFIG)},
        defaults=defaults if defaults is not None else compute_default(), edit=edit)


def five_publisher_files() -> dict[str, bytes]:
    """All five publisher files mesh-llm knows (§2.2), agreeing with the tiny carrier."""
    return {
        "config.json": json_bytes(TINY_CONFIG),
        "generation_config.json": json_bytes({"bos_token_id": 1, "eos_token_id": 2,
                                              "temperature": 0.6, "top_p": 0.95}),
        "tokenizer_config.json": json_bytes({"model_max_length": 256, "bos_token": "<s>"}),
        "chat_template.jinja": b"{% for m in messages %}{{ m['content'] }}{% endfor %}\n",
        "hf_quant_config.json": json_bytes({"producer": {"name": "modelopt"}}),
    }
