"""README.md, the model card (package.md, "README.md (model card)"): the one card meshcert
writes, into the package at `package write` and onto the Hub at `package publish` (with the
target repo for its quickstart). Pure: manifest in, Markdown out.

Every value comes from the manifest, through meshcert.certify.card_facts (the readme check reads
the same facts back and flags a card that contradicts the manifest): model and package ids,
source model, revision, file and checksum, layer count, activation width, the artifacts' total
size, the ABI, the manifest's checksum, the oldest mesh-llm that loads it, the typed defaults,
every request profile with its provenance, speculative decoding, every publisher file with its
role, every artifact, the validation command and its result, and the certification notes.
The result is written as certification gave it (`with_result` rewrites that one line once
certification has run).
"""

from __future__ import annotations

import re
from typing import Any

from meshcert.certify import card_facts as facts
from meshcert.certify.card_facts import (
    COMPUTE_DTYPE,
    DEFAULT_PROFILE,
    GENERATION_DEFAULTS,
    KV_CACHE_DTYPE,
    LAYER_COUNT,
    MODEL_ID,
    NONE_DECLARED,
    NOT_DECLARED,
    PACKAGE_ID,
)

RESULT_LINE = re.compile(r"^(- Result: )\S+", re.MULTILINE)
TAGS = ("gguf", "mesh-llm", "layer-package", "skippy", "distributed-inference",
        "local-inference", "openai-compatible")
QUANT = re.compile(r"(?i)(UD-)?(IQ\d+_[A-Z0-9]+(?:_[A-Z]+)?|Q\d+_[A-Z0-9]+(?:_[A-Z]+)?|BF16|F16|"
                   r"F32)")
SELECTION_WORDS = {"default": "default", "reasoning_enabled": "when reasoning is enabled",
                   "reasoning_disabled": "when reasoning is disabled"}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"


def _table(rows: list[tuple[str, Any]]) -> list[str]:
    return ["| Property | Value |", "|---|---|"] + [
        f"| **{_cell(k)}** | {_cell(v)} |" for k, v in rows if v is not None]


def _code(value: Any) -> str | None:
    return f"`{value}`" if isinstance(value, str) and value else None


def render_card(manifest: dict[str, Any], manifest_sha256: str, *, target: str | None = None,
                width: int | None = None, result: str = "passed",
                source_ref: str | None = None, experimental: bool = False,
                identity: tuple[str, str | None] | None = None) -> str:
    """README.md for the package `manifest` describes. `target`: the Hub repo it is published
    to (publish); `width`: the activation width when the manifest has none (v2); `result`:
    the certification result; `source_ref`: the source GGUF certification compared it with;
    `identity`: what the Hub said of the recorded source, (outcome, detail) as
    `SourceCheck.outcome`/`.detail` say it (None: not asked: "claimed, not verified")."""
    source = _dict(manifest.get("source_model"))
    repo = source.get("repo") if isinstance(source.get("repo"), str) else None
    model_id = str(manifest.get("model_id") or target or "layer package")
    lines = _front_matter(repo, experimental)
    lines += [f"# {model_id}", "",
              "Distributed GGUF layer package for [Mesh LLM](https://github.com/Mesh-LLM/mesh-llm)"
              + (f", split from [{repo}](https://huggingface.co/{repo})." if repo else "."), ""]
    if experimental:
        lines += ["> [!WARNING]", "> Experimental package: published for testing. Its catalog "
                  "entry is proposed as a pull request, not merged.", ""]
    lines += _overview(manifest, manifest_sha256, model_id, target, width, identity)
    lines += _quickstart(target)
    lines += _generation(manifest)
    lines += _publisher_files(manifest)
    lines += _included(manifest, manifest_sha256)
    lines += _validation(target, result, source_ref)
    return "\n".join(lines)


def identity_words(identity: tuple[str, str | None] | None) -> str:
    """What the card says of the recorded source: verified against the Hub (at which commit),
    or claimed, not verified (and why)."""
    if identity is None:
        return "claimed, not verified (the Hub was not asked)"
    outcome, detail = identity
    if outcome == "verified":
        return f"verified against the Hub at commit `{detail}`" if detail else \
            "verified against the Hub"
    if outcome == "mismatch":
        return f"does not match the Hub: {detail}"
    return f"claimed, not verified ({detail})" if detail else "claimed, not verified"


def with_result(card: str, result: str) -> str:
    return RESULT_LINE.sub(lambda m: m.group(1) + result, card, count=1)


def _front_matter(repo: str | None, experimental: bool) -> list[str]:
    front = ["---", "library_name: mesh-llm"]
    if repo:
        front += ["base_model:", f"- {repo}"]
    front += ["pipeline_tag: text-generation", "tags:"] + [f"- {t}" for t in TAGS]
    if experimental:
        front.append("- experimental")
    return [*front, "---", ""]


def _overview(manifest: dict[str, Any], manifest_sha256: str, model_id: str,
              target: str | None, width: int | None,
              identity: tuple[str, str | None] | None = None) -> list[str]:
    source = _dict(manifest.get("source_model"))
    v2 = facts.is_v2(manifest)
    file_name = facts.source_file(manifest)
    quant = QUANT.search(f"{model_id} {file_name or ''}")
    items = facts.artifacts(manifest)
    total = facts.total_bytes(manifest)
    if width is None and not v2 and isinstance(manifest.get("activation_width"), int):
        width = manifest["activation_width"]
    oldest = facts.oldest_mesh_llm(manifest)
    abi = facts.abi_version(manifest)
    return ["## Model Overview", "", *_table([
        ("Source model", source.get("repo") or "not recorded"),
        ("Source revision", _code(source.get("revision")) or "not recorded"),
        ("Source file", _code(file_name)),
        ("Source SHA-256", _code(source.get("sha256"))),
        ("Source identity", identity_words(identity) if source.get("repo") else None),
        (MODEL_ID, f"`{model_id}`"),
        (PACKAGE_ID, _code(manifest.get("package_id")) if v2 else None),
        ("Format", f"{manifest.get('format')} (schema_version "
                   f"{manifest.get('schema_version')})"),
        ("Quantization", f"`{quant.group(0)}`" if quant else None),
        (LAYER_COUNT, manifest.get("layer_count")),
        ("Activation width", width),
        ("Package size", f"{_size(total)} in {len(items)} artifacts ({total:,} bytes)"),
        ("Skippy ABI version", _code(abi)),
        ("Package manifest", f"`model-package.json` (sha256 `{manifest_sha256}`)"),
        ("Oldest mesh-llm that loads it", f"v{oldest.version} ({oldest.reason})" if oldest
         else "no minimum known (a v1 package)" if not v2 else None),
        ("Package repo", target)]), ""]


def _quickstart(target: str | None) -> list[str]:
    ref = f"hf://{target}@<commit>" if target else "hf://<namespace>/<repo>@<commit>"
    return ["## Quickstart", "", "```bash",
            "# on each machine that should contribute memory and compute; <commit> is the",
            "# commit the package is published at: a pinned ref never moves",
            f"mesh-llm serve --model {ref} --split", "```", ""]


def _generation(manifest: dict[str, Any]) -> list[str]:
    typed = {d.label: d for d in facts.typed_defaults(manifest)}
    profiles = facts.profiles(manifest)
    spec = facts.speculative_decoding(manifest)
    lines = ["## Generation Defaults", ""]
    if not facts.declares_defaults(manifest):
        return [*lines, *_table([(GENERATION_DEFAULTS, NONE_DECLARED)]), "",
                "The manifest declares no typed defaults, request profiles or speculative "
                "decoding: nodes use their own settings.", ""]
    default = facts.default_profile(manifest)
    lines += _table([
        (COMPUTE_DTYPE, f"`{typed[COMPUTE_DTYPE].dtype}` (from `{typed[COMPUTE_DTYPE].origin}`)"
         if COMPUTE_DTYPE in typed else NOT_DECLARED),
        (KV_CACHE_DTYPE, f"`{typed[KV_CACHE_DTYPE].dtype}` (from "
                         f"`{typed[KV_CACHE_DTYPE].origin}`)"
         if KV_CACHE_DTYPE in typed else NOT_DECLARED),
        (DEFAULT_PROFILE, f"`{default}`" if default else (NONE_DECLARED if not profiles
                                                           else NOT_DECLARED)),
        ("Speculative decoding", spec or NOT_DECLARED)])
    if profiles:
        lines += ["", "### Request profiles", "",
                  "| Profile | Selected | Settings | Provenance |", "|---|---|---|---|"]
        lines += [f"| `{_cell(p.name)}` | "
                  f"{_cell(', '.join(SELECTION_WORDS.get(r, r) for r in p.selection) or '')} | "
                  f"{_cell(facts.profile_settings(p))} | {_cell(facts.profile_provenance(p))} |"
                  for p in profiles]
    return [*lines, ""]


def _publisher_files(manifest: dict[str, Any]) -> list[str]:
    files = facts.publisher_files(manifest)
    if not files:
        return []
    lines = ["## Publisher Files", "",
             "Copied byte for byte from the source model's repository (never loaded as model "
             "weights):", "", "| Role | Path | Copied from | Bytes | SHA-256 |",
             "|---|---|---|---|---|"]
    lines += [f"| {_cell(f.role)} | `{_cell(f.path)}` | {_cell(f.source)} | "
              f"{f.size if f.size is not None else ''} | `{f.sha256 or 'not recorded'}` |"
              for f in files]
    return [*lines, ""]


def _included(manifest: dict[str, Any], manifest_sha256: str) -> list[str]:
    lines = ["## What Is Included", "", "| Artifact | Path | Bytes | SHA-256 |",
             "|---|---|---|---|", f"| Manifest | `model-package.json` | | `{manifest_sha256}` |"]
    lines += [f"| {_cell(a.label)} | `{_cell(a.path)}` | {a.size if a.size is not None else ''} "
              f"| `{a.sha256 or 'not recorded'}` |" for a in facts.artifacts(manifest)]
    return [*lines, ""]


def _validation(target: str | None, result: str, source_ref: str | None) -> list[str]:
    command = "meshcert models certify <package dir> --package-only"
    if source_ref:
        command += f" --source {source_ref}"
    lines = ["## Validation", "",
             f"Certified by meshcert, every artifact hashed (`{command}`):",
             f"- Result: {result}", ""]
    if target:
        lines += [f"The published commit is certified the same way: `meshcert models certify "
                  f"hf://{target}@<commit> --package-only`.", ""]
    return [*lines, "## Certification notes", "",
            "Package certification only: the manifest, every artifact's size and SHA-256, the "
            "GGUF headers and the tensor layout were checked by meshcert. Model-family "
            "certification (runtime and split correctness under mesh-llm) is separate.", ""]
