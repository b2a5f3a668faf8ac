"""Publisher metadata as mesh-llm v0.79's writer adds it (mesh-llm-0.79.md §2.2-2.4), decided
before a byte is written.

The five source files (`config.json`, `generation_config.json`, `tokenizer_config.json`,
`chat_template.jinja`, `hf_quant_config.json`) become `metadata/<basename>` artifacts with ids
`publisher-<basename, '.' and '_' made '-'>`, each listed in `publisher_metadata[]` (in the order
given) with the manifest's source repo and revision. Refused, with mesh-llm's messages: another
basename, the same basename twice, no source repo, a revision that is not a 40-hex commit.

Typed defaults: only `model_config` and `hf_quant_config` files are read (each must be a JSON
object). A config.json is first checked against the GGUF's geometry (§2.4), then
`publisher_defaults` exists (possibly `{}`); `compute_dtype` comes from config.json only (an
unmapped value is ignored), `kv_cache_dtype` from either file (an unmapped value is refused);
two declarations of one slot must agree, the first keeps its artifact id and JSON pointer.

One deliberate difference from mesh-llm: an MTP source whose GGUF `block_count` counts the NextN
block(s) that HF's `num_hidden_layers` leaves out (block_count = num_hidden_layers +
nextn_predict_layers, GLM-4.x MoE style) is accepted, where mesh-llm's writer aborts; any other
geometry difference is refused as mesh-llm refuses it. Pure apart from reading local files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from meshcert.certify.formats.publisher import (
    BY_BASENAME,
    PUBLISHER_FILES,
    DerivedDefault,
    PublisherFile,
    derive_compute_dtype,
    derive_kv_cache_dtype,
)
from meshcert.certify.formats.publisher_geometry import geometry_differences
from meshcert.certify.formats.publisher_json import JsonProblem, parse_publisher_json
from meshcert.certify.view import MAX_PUBLISHER_FILE_BYTES
from meshcert.core.errors import Refused

REVISION = re.compile(r"^[0-9A-Fa-f]{40}$")  # upper case accepted, as mesh-llm's format does
REFUSED = "publisher_metadata"  # the basename / identity refusals
CONFIG_CONFLICT = "publisher_config_conflict"  # config.json contradicts the GGUF (§2.4)
DEFAULTS_REFUSED = "publisher_defaults"  # an unmapped KV dtype, conflicting declarations
BAD_FILE = "bad_publisher_file"  # unreadable, too large, not a JSON object


@dataclass(frozen=True)
class PublisherInput:
    """One publisher file as read: its basename, where it was read from, its exact bytes."""

    basename: str
    location: str  # a local path, or `hf://repo@commit/path` for a file picked up on the Hub
    data: bytes = field(repr=False)
    picked_up: bool = False  # found at the Hub source's revision (not named by the caller)

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class PublisherPlan:
    """The publisher files in manifest order, their `publisher_metadata[]` entries and the
    typed `publisher_defaults` (None: absent from the manifest)."""

    files: list[tuple[PublisherFile, PublisherInput]]
    entries: list[dict[str, str]]
    defaults: dict[str, dict[str, str]] | None


def describe_known() -> str:
    return ", ".join(f.basename for f in PUBLISHER_FILES)


def publisher_file_of(basename: str) -> PublisherFile:
    known = BY_BASENAME.get(basename)
    if known is None:
        raise Refused(f"unsupported publisher metadata filename {basename!r} (mesh-llm "
                      f"accepts {describe_known()})", code=REFUSED)
    return known


def read_local(path: str) -> PublisherInput:
    """A `--publisher-metadata FILE`: its basename checked first, then at most
    MAX_PUBLISHER_FILE_BYTES read."""
    basename = os.path.basename(path)
    publisher_file_of(basename)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PUBLISHER_FILE_BYTES + 1)
    except OSError as exc:
        raise Refused(f"--publisher-metadata {path}: {exc.strerror or exc}", code="usage") from None
    if len(data) > MAX_PUBLISHER_FILE_BYTES:
        raise Refused(f"{path} is over the {MAX_PUBLISHER_FILE_BYTES} byte limit "
                      "for a publisher file", code=BAD_FILE)
    return PublisherInput(basename, path, data)


def combine(named: list[PublisherInput], picked: list[PublisherInput]) -> list[PublisherInput]:
    """The files named by the caller, in their order, then those picked up from the source
    revision that the caller did not name (a named file wins over the source's). The same
    basename named twice is refused."""
    seen: set[str] = set()
    for item in named:
        if item.basename in seen:
            raise Refused(f"duplicate publisher metadata file {item.basename!r}: "
                          "each of the five files may be given once", code=REFUSED)
        seen.add(item.basename)
    return named + [p for p in picked if p.basename not in seen]


def plan_publisher(inputs: list[PublisherInput], *, repo: str | None, revision: str | None,
                   gguf_kv: dict[str, Any], architecture: str) -> PublisherPlan | None:
    """Every refusal of §2.2-2.4, in mesh-llm's order; None when there is no publisher file."""
    if not inputs:
        return None
    files: list[tuple[PublisherFile, PublisherInput]] = []
    seen: set[str] = set()
    for item in inputs:
        known = publisher_file_of(item.basename)
        if item.basename in seen:
            raise Refused(f"duplicate publisher metadata file {item.basename!r}: "
                          "each of the five files may be given once", code=REFUSED)
        seen.add(item.basename)
        files.append((known, item))
    if repo is None or not repo.strip():
        raise Refused("publisher metadata requires a source repo (the manifest's "
                      "source_model.repo: --source-repo, or a Hub source)", code=REFUSED)
    if revision is None or not REVISION.match(revision):
        raise Refused("publisher metadata requires a 40-character immutable Hugging "
                      f"Face commit revision (source_model.revision is {revision!r}: give "
                      "--source-revision <commit>)", code=REFUSED)
    entries = [{"role": known.role, "artifact_id": known.artifact_id, "source_repo": repo,
                "source_revision": revision, "source_path": known.basename}
               for known, _ in files]
    defaults = derive_defaults(files, gguf_kv, architecture)
    return PublisherPlan(files, entries, defaults)


def _json_object(item: PublisherInput) -> dict[str, Any]:
    parsed = parse_publisher_json(item.data)
    if isinstance(parsed, JsonProblem):
        raise Refused(f"publisher file {item.location} {parsed.message}", code=BAD_FILE)
    return parsed


def check_geometry(config: dict[str, Any], gguf_kv: dict[str, Any], architecture: str,
                   location: str) -> None:
    """§2.4, with meshcert's one exception: the NextN block counted by the GGUF only."""
    for d in geometry_differences(config, gguf_kv, architecture):
        if d.is_nextn_block:
            continue  # block_count = num_hidden_layers + nextn_predict_layers: accepted
        raise Refused(f"publisher config {d.config_key}={d.config_value} "
                      f"conflicts with GGUF {d.gguf_key}={d.gguf_value} ({location})",
                      code=CONFIG_CONFLICT)


def derive_defaults(files: list[tuple[PublisherFile, PublisherInput]], gguf_kv: dict[str, Any],
                    architecture: str) -> dict[str, dict[str, str]] | None:
    defaults: dict[str, dict[str, str]] | None = None
    for known, item in files:
        if known.role == "model_config":
            config = _json_object(item)
            check_geometry(config, gguf_kv, architecture, item.location)
            defaults = {} if defaults is None else defaults
            compute = derive_compute_dtype(config)
            if compute is not None and compute.dtype is not None:  # unmapped: ignored
                _declare(defaults, compute, known, item)
            kv = derive_kv_cache_dtype(config)
        elif known.role == "hf_quant_config":
            kv = derive_kv_cache_dtype(_json_object(item))
        else:
            continue  # the other three files are copied, never read
        if kv is not None:
            if kv.dtype is None:
                raise Refused(f"unsupported publisher KV-cache dtype "
                              f"{kv.raw!r} at {kv.json_path} in {item.location}",
                              code=DEFAULTS_REFUSED)
            defaults = {} if defaults is None else defaults
            _declare(defaults, kv, known, item)
    return None if defaults is None else _ordered(defaults)


def _declare(defaults: dict[str, dict[str, str]], derived: DerivedDefault,
             known: PublisherFile, item: PublisherInput) -> None:
    assert derived.dtype is not None
    prior = defaults.get(derived.slot)
    if prior is None:
        defaults[derived.slot] = {"dtype": derived.dtype, "artifact_id": known.artifact_id,
                                  "json_path": derived.json_path}
    elif prior["dtype"] != derived.dtype:
        raise Refused(f"conflicting publisher {derived.slot} declarations: "
                      f"{prior['dtype']} ({prior['artifact_id']} {prior['json_path']}) and "
                      f"{derived.dtype} ({known.artifact_id} {derived.json_path}, "
                      f"{item.location})", code=DEFAULTS_REFUSED)


def _ordered(defaults: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """compute_dtype before kv_cache_dtype, as mesh-llm's struct serializes them."""
    return {slot: defaults[slot] for slot in ("compute_dtype", "kv_cache_dtype")
            if slot in defaults}
