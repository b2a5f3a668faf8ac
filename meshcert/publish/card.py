"""The model card a publish writes as README.md: mesh-llm's card (front matter, overview,
quickstart, package variant, what is included, validation), with each value read from where
the manifest's format keeps it, so a v2 card is as complete as a v1 card (mesh-llm's own card
reads only v1 fields: for v2 it says "not recorded" and a package size of 0), and every item
package.md asks of a card (meshcert/certify/checks/readme.py checks them) is there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

TAGS = ("gguf", "mesh-llm", "layer-package", "skippy", "distributed-inference",
        "local-inference", "openai-compatible")
QUANT = re.compile(r"(?i)(UD-)?(IQ\d+_[A-Z0-9]+(?:_[A-Z]+)?|Q\d+_[A-Z0-9]+(?:_[A-Z]+)?|BF16|F16|"
                   r"F32)")


@dataclass(frozen=True)
class Artifact:
    label: str
    path: str
    size: int | None
    sha256: str | None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_v2(manifest: dict[str, Any]) -> bool:
    return manifest.get("schema_version") == 2


def artifacts(manifest: dict[str, Any]) -> list[Artifact]:
    """Every artifact the manifest declares, in its own order, with size and sha256."""
    if is_v2(manifest):
        sidecars = {s.get("artifact_id") for s in _list(manifest.get("sidecars"))
                    if isinstance(s, dict)}
        return [Artifact("Projector" if e.get("id") in sidecars else str(e.get("id")),
                         str(e.get("path")), e.get("byte_size"), e.get("sha256"))
                for e in map(_dict, _list(_dict(manifest.get("artifact_catalog")).get(
                    "entries")))]
    out = [Artifact(name.capitalize(), str(e.get("path")), e.get("artifact_bytes"),
                    e.get("sha256"))
           for name, e in _dict(manifest.get("shared")).items() if isinstance(e, dict)]
    out += [Artifact(f"Layer {e.get('layer_index')}", str(e.get("path")),
                     e.get("artifact_bytes"), e.get("sha256"))
            for e in map(_dict, _list(manifest.get("layers")))]
    out += [Artifact("Projector", str(e.get("path")), e.get("artifact_bytes") or e.get(
        "size_bytes"), e.get("sha256")) for e in map(_dict, _list(manifest.get("projectors")))]
    return out


def total_bytes(manifest: dict[str, Any]) -> int:
    return sum(a.size for a in artifacts(manifest) if isinstance(a.size, int))


def source_file(manifest: dict[str, Any]) -> str | None:
    source = _dict(manifest.get("source_model"))
    files = [_dict(f).get("path") for f in _list(source.get("files"))]
    for candidate in (source.get("primary_file"), *files, source.get("path")):
        if isinstance(candidate, str) and candidate.strip():
            return PurePosixPath(candidate.replace("\\", "/")).name
    return None


def abi_version(manifest: dict[str, Any]) -> str | None:
    value = manifest.get("native_abi_version" if is_v2(manifest) else "skippy_abi_version")
    return value if isinstance(value, str) else None


def generation_defaults(manifest: dict[str, Any]) -> str:
    spec = _dict(_dict(manifest.get("generation")).get("speculative_decoding"))
    default = spec.get("default")
    if not isinstance(default, str):
        return "none declared"
    strategy = _dict(_dict(spec.get("strategies")).get(default))
    ref = strategy.get("proposer") or strategy.get("primary")
    proposer = _dict(_dict(spec.get("proposers")).get(ref)) if isinstance(ref, str) else {}
    depth = strategy.get("prediction_depth", proposer.get("prediction_depth"))
    kind = strategy.get("type") or proposer.get("type") or "speculative"
    shown = f", prediction depth {depth}" if depth is not None else ""
    return f"speculative strategy `{default}` ({kind}{shown})"


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n = n / 1000  # type: ignore[assignment]
    return f"{n} B"


def _table(rows: list[tuple[str, Any]]) -> list[str]:
    return ["| Property | Value |", "|---|---|"] + [
        f"| **{_cell(k)}** | {_cell(v)} |" for k, v in rows if v is not None]


def render_card(manifest: dict[str, Any], *, manifest_sha256: str, target: str,
                experimental: bool = False, local_status: str = "passed") -> str:
    """README.md for `target`, built from the manifest that is published beside it."""
    source = _dict(manifest.get("source_model"))
    source_repo = source.get("repo") if isinstance(source.get("repo"), str) else None
    model_id = str(manifest.get("model_id") or target)
    file_name = source_file(manifest)
    quant = QUANT.search(f"{model_id} {file_name or ''}")
    items = artifacts(manifest)
    front = ["---", "library_name: mesh-llm"]
    if source_repo:
        front += ["base_model:", f"- {source_repo}"]
    front += ["pipeline_tag: text-generation", "tags:"] + [f"- {t}" for t in TAGS]
    if experimental:
        front.append("- experimental")
    lines = [*front, "---", "", f"# {model_id}", "",
             "Distributed GGUF layer package for [Mesh LLM](https://github.com/Mesh-LLM/mesh-llm)"
             + (f", split from [{source_repo}](https://huggingface.co/{source_repo})."
                if source_repo else "."), ""]
    if experimental:
        lines += ["> [!WARNING]", "> Experimental package: published for testing. Its catalog "
                  "entry is proposed as a pull request, not merged.", ""]
    lines += ["## Model Overview", "", *_table([
        ("Source model", source_repo), ("Model id", f"`{model_id}`"),
        ("Quantization", f"`{quant.group(0)}`" if quant else None),
        ("Layer count", manifest.get("layer_count")),
        ("Activation width", None if is_v2(manifest) else manifest.get("activation_width")),
        ("Package size", f"{_size(total_bytes(manifest))} in {len(items)} artifacts"),
        ("Source file", f"`{file_name}`" if file_name else None),
        ("Package repo", target)]), ""]
    lines += ["## Quickstart", "", "```bash",
              "# on each machine that should contribute memory and compute; <commit> is the",
              "# commit this card was published with: a pinned ref never moves",
              f"mesh-llm serve --model hf://{target}@<commit> --split", "```", ""]
    lines += ["## Package Variant", "", *_table([
        ("Format", f"{manifest.get('format')} (schema_version {manifest.get('schema_version')})"),
        ("Package id", f"`{manifest.get('package_id')}`" if is_v2(manifest) else None),
        ("Source revision", f"`{source.get('revision')}`" if source.get("revision") else None),
        ("Source SHA-256", f"`{source.get('sha256')}`" if source.get("sha256") else None),
        ("Skippy ABI", f"`{abi_version(manifest)}`" if abi_version(manifest) else None),
        ("Package manifest SHA-256", f"`{manifest_sha256}`"),
        ("Generation defaults", generation_defaults(manifest))]), ""]
    lines += ["## What Is Included", "", "| Artifact | Path | Bytes | SHA-256 |",
              "|---|---|---|---|", f"| Manifest | `model-package.json` | | `{manifest_sha256}` |"]
    lines += [f"| {_cell(a.label)} | `{_cell(a.path)}` | {a.size if a.size is not None else ''} "
              f"| `{a.sha256 or 'not recorded'}` |" for a in items]
    lines += ["", "## Validation", "",
              f"`meshcert models certify <package dir> --package-only`: {local_status} "
              "(every artifact hashed, before upload).", "",
              f"The published commit is certified the same way: `meshcert models certify "
              f"hf://{target}@<commit> --package-only`.", "",
              "## Certification notes", "",
              "Package certification only: the manifest, every artifact's size and SHA-256, the "
              "GGUF headers and the tensor layout were checked by meshcert. Model-family "
              "certification (runtime and split correctness under mesh-llm) is separate.", ""]
    return "\n".join(lines)
