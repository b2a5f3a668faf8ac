"""Publisher metadata as mesh-llm v0.77+ writes it (mesh-llm-0.79.md §1.2-1.3, §2.2-2.4): the five
source files, their roles, artifact ids and package paths; the typed-default dtypes and the
writer's mapping from a config value to one; the JSON pointers the writer reads.

One definition for the certifier (which re-derives the defaults to check them), the writer
(which derives them) and the reports. Pure data and pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# role enum in declaration order: mesh-llm's derived Ord sorts publisher_metadata by this order
ROLES: tuple[str, ...] = ("model_config", "generation_config", "tokenizer_config",
                          "chat_template", "hf_quant_config")
ROLE_RANK = {role: rank for rank, role in enumerate(ROLES)}


@dataclass(frozen=True)
class PublisherFile:
    basename: str
    role: str

    @property
    def artifact_id(self) -> str:
        """`publisher-` + the basename with every `.` and `_` made `-` (§2.2)."""
        return "publisher-" + self.basename.replace(".", "-").replace("_", "-")

    @property
    def package_path(self) -> str:
        return f"metadata/{self.basename}"

    @property
    def is_json(self) -> bool:
        return self.basename.endswith(".json")


PUBLISHER_FILES: tuple[PublisherFile, ...] = (
    PublisherFile("config.json", "model_config"),
    PublisherFile("generation_config.json", "generation_config"),
    PublisherFile("tokenizer_config.json", "tokenizer_config"),
    PublisherFile("chat_template.jinja", "chat_template"),
    PublisherFile("hf_quant_config.json", "hf_quant_config"),
)
BY_BASENAME = {f.basename: f for f in PUBLISHER_FILES}

# publisher_defaults.<slot>.dtype, a closed enum (snake_case)
DTYPES: tuple[str, ...] = ("f16", "bf16", "f32", "fp8", "fp8_e4m3", "fp8_e5m2", "q8_0", "q4_0")
DEFAULT_SLOTS: tuple[str, ...] = ("compute_dtype", "kv_cache_dtype")
# the roles a typed default may be bound to (validate_publisher_defaults)
SLOT_ROLES: dict[str, frozenset[str]] = {
    "compute_dtype": frozenset({"model_config"}),
    "kv_cache_dtype": frozenset({"model_config", "hf_quant_config"}),
}
_DTYPE_ALIASES: dict[str, str] = {
    "f16": "f16", "fp16": "f16", "float16": "f16",
    "bf16": "bf16", "bfloat16": "bf16",
    "f32": "f32", "fp32": "f32", "float32": "f32",
    "fp8": "fp8",
    "fp8_e4m3": "fp8_e4m3", "fp8_e4m3fn": "fp8_e4m3",
    "fp8_e5m2": "fp8_e5m2",
    "q8_0": "q8_0", "int8": "q8_0",
    "q4_0": "q4_0", "int4": "q4_0",
}
COMPUTE_DTYPE_POINTERS: tuple[str, ...] = ("/torch_dtype", "/dtype")
_KV_KEYS = ("kv_cache_quant_algo", "kv_cache_dtype", "kv_cache_scheme")
KV_CACHE_DTYPE_POINTERS: tuple[str, ...] = tuple(
    f"{prefix}/{key}" for prefix in ("", "/quantization_config", "/compression_config")
    for key in _KV_KEYS)
# the KV types that change a node's live cache; every other declared dtype runs F16/F16 (§2.3)
LIVE_KV_TYPES = frozenset({"q8_0", "q4_0"})


def map_dtype(raw: str) -> str | None:
    """The writer's mapping of a config string to a publisher dtype (trim, lower case, `-` made
    `_`), or None when it maps to none (the writer ignores that for compute_dtype and refuses it
    for kv_cache_dtype)."""
    return _DTYPE_ALIASES.get(raw.strip().lower().replace("-", "_"))


def resolve_pointer(document: Any, pointer: str) -> tuple[bool, Any]:
    """RFC 6901 JSON Pointer lookup: (found, value). Never raises."""
    if pointer == "":
        return True, document
    if not pointer.startswith("/"):
        return False, None
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and (token == "0" or token[0] != "0") \
                and int(token) < len(node):
            node = node[int(token)]
        else:
            return False, None
    return True, node


def kv_pointer_value(document: Any, pointer: str) -> str | None:
    """The string a KV-cache pointer yields as the writer reads it: a string, or an object's
    string `dtype` or `type`."""
    found, value = resolve_pointer(document, pointer)
    if not found:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("dtype", "type"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


@dataclass(frozen=True)
class DerivedDefault:
    slot: str          # compute_dtype | kv_cache_dtype
    dtype: str | None  # None: the value maps to no dtype (raw kept for the message)
    raw: str
    json_path: str


def derive_compute_dtype(config: dict[str, Any]) -> DerivedDefault | None:
    """compute_dtype from a config.json: the first string at /torch_dtype, else /dtype. An
    unmapped value is returned with dtype None (the writer silently ignores it)."""
    for pointer in COMPUTE_DTYPE_POINTERS:
        found, value = resolve_pointer(config, pointer)
        if found and isinstance(value, str):
            return DerivedDefault("compute_dtype", map_dtype(value), value, pointer)
    return None


def derive_kv_cache_dtype(document: dict[str, Any]) -> DerivedDefault | None:
    """kv_cache_dtype from a config.json or hf_quant_config.json: the first pointer that yields
    a string. An unmapped value is returned with dtype None (the writer refuses it)."""
    for pointer in KV_CACHE_DTYPE_POINTERS:
        value = kv_pointer_value(document, pointer)
        if value is not None:
            return DerivedDefault("kv_cache_dtype", map_dtype(value), value, pointer)
    return None


def publisher_artifact_ids(manifest: dict[str, Any]) -> set[str]:
    """Artifact ids the manifest's publisher_metadata names (the artifacts that are publisher
    files, not GGUFs)."""
    entries = manifest.get("publisher_metadata")
    if not isinstance(entries, list):
        return set()
    return {e["artifact_id"] for e in entries
            if isinstance(e, dict) and isinstance(e.get("artifact_id"), str)}
