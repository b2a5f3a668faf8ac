"""The model card (package.md, "README.md"): present, and mentioning every item the spec lists.

Items are found by their VALUES (the model id, the sha256 digests, the layer count...), not by
fixed labels, so any wording or layout passes as long as the facts are there. Bare numbers
(layer count, width, prediction depth) must sit near a word that says what they are. Values the
manifest lacks are not demanded (the manifest checks report those).

Facts the card states under a label (`| **Layer count** | 30 |`, `- Model id: x`) are read back
(meshcert.certify.card_facts, the facts meshcert's own card is written from) and compared with
the manifest: a card that says another id, layer count or defaults than the manifest is
`readme_contradicts_manifest`. A card that is not UTF-8 is `readme_not_utf8`, and nothing else
is read from it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from meshcert.certify.card_facts import contradictions, profiles
from meshcert.certify.checks import register
from meshcert.certify.checks.generation import shown
from meshcert.certify.checks.speculative import read_speculative
from meshcert.certify.manifest_model import is_int
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

README_NAME = "README.md"
NEAR_LINES = 2  # a number counts when on the keyword's line or one of the next NEAR_LINES
LAYER_WORDS = r"layer|block"
WIDTH_WORDS = r"activation|width|hidden|embedding|n_embd|d_model"
DEPTH_WORDS = r"depth"
VALIDATION_COMMAND = re.compile(r"models\s+certify", re.IGNORECASE)
VALIDATION_RESULT = re.compile(r"\b(passed|failed|incomplete)\b", re.IGNORECASE)
RESULT_WINDOW = 400  # characters after the command where its result is looked for
CERT_NOTES = re.compile(r"^\s{0,3}#{1,6}\s.*certif|certification\s+notes?|"
                        r"model[- ]family\s+certification", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Card:
    """README text with value-matching helpers (all case-insensitive)."""

    text: str

    def mentions(self, value: str, word_chars: str = "A-Za-z0-9") -> bool:
        """`value` appears as a whole token (not inside a longer name, id or digest)."""
        pattern = rf"(?<![{word_chars}]){re.escape(value)}(?![{word_chars}])"
        return re.search(pattern, self.text, re.IGNORECASE) is not None

    def mentions_version(self, version: str) -> bool:
        """A dotted version as a whole (`0.1.0`, `v0.1.0`; not `10.1.0` or `0.1.0.5`)."""
        pattern = rf"(?<![\w.])v?{re.escape(version)}(?!\w|\.\d)"
        return re.search(pattern, self.text, re.IGNORECASE) is not None

    def mentions_file(self, path: str) -> bool:
        """The file's path, or at least its name."""
        return self.mentions(path) or self.mentions(PurePosixPath(path.replace("\\", "/")).name)

    def number_near(self, number: int, words: str) -> bool:
        """`number` (plain or with thousands separators) near a word matching `words`."""
        forms = {str(number), f"{number:,}", f"{number:_}", f"{number:,}".replace(",", " ")}
        value = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, forms))})(?![\w]|[.,]\d)")
        keyword = re.compile(words, re.IGNORECASE)
        lines = self.text.splitlines()
        for i, line in enumerate(lines):
            if keyword.search(line) and any(value.search(near)
                                             for near in lines[i:i + NEAR_LINES + 1]):
                return True
        return False


def _text(value: Any) -> str | None:
    """A non-blank string value, stripped; anything else is None."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@register("readme", order=90, codes=["readme_missing", "readme_missing_field",
                                     "readme_contradicts_manifest", "readme_not_utf8"])
def readme(view: PackageView) -> Iterator[Finding]:
    """A model card exists, is UTF-8, names each item package.md asks for (one finding per
    item) and states no checked fact (ids, layer count, defaults) otherwise than the
    manifest."""
    manifest = view.manifest
    if manifest is None:
        return  # the package was not read: nothing to say about its card
    if view.readme_text is None:
        yield finding("readme_missing", f"the package has no {README_NAME} model card",
                      path=README_NAME)
        return
    problem = _not_utf8(view.readme_raw)
    if problem is not None:
        yield finding("readme_not_utf8", f"{README_NAME} is not UTF-8 text ({problem}): its "
                      "facts were not read", path=README_NAME)
        return
    card = Card(view.readme_text)
    for item in _missing_items(view, manifest, card):
        yield finding("readme_missing_field", f"{README_NAME} does not mention the {item}",
                      path=README_NAME)
    for wrong in contradictions(manifest, view.readme_text):
        yield finding("readme_contradicts_manifest", f"{README_NAME} says {wrong.label.lower()} "
                      f"{shown(wrong.stated)}; model-package.json says {shown(wrong.expected)}",
                      path=README_NAME)


def _not_utf8(raw: bytes | None) -> str | None:
    """Why the card's bytes are not UTF-8 (None: they are, or were not kept). A multi-byte
    character cut by the read cap at the very end is not a fault of the card."""
    if raw is None:
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.end == len(raw):
            return None
        return f"byte 0x{raw[exc.start]:02x} at offset {exc.start}: {exc.reason}"
    return None


def _missing_items(view: PackageView, manifest: dict[str, Any], card: Card) -> Iterator[str]:
    yield from _source_items(manifest, card)
    if view.manifest_raw is not None:
        digest = hashlib.sha256(view.manifest_raw).hexdigest()
        if not card.mentions(digest):
            yield f"manifest checksum (sha256 of model-package.json: {digest})"
    yield from _projector_items(manifest, card)
    yield from _shape_items(manifest, card)
    yield from _generation_items(view, card)
    yield from _validation_items(card)
    if not CERT_NOTES.search(card.text):
        yield "model-family certification notes (a certification section)"


def _source_items(manifest: dict[str, Any], card: Card) -> Iterator[str]:
    source = _dict(manifest.get("source_model"))
    coordinates = [c for c in (_text(manifest.get("model_id")), _text(source.get("repo"))) if c]
    if coordinates and not any(card.mentions(c) for c in coordinates):
        yield f"source model coordinate ({' or '.join(map(shown, coordinates))})"
    revision = _text(source.get("revision"))
    if revision and not card.mentions(revision):
        yield f"source model revision ({shown(revision)})"
    names = _source_file_names(source)
    if names and not any(card.mentions_file(n) for n in names):
        yield f"source artifact filename ({' or '.join(map(shown, names))})"
    sha = _text(source.get("sha256"))
    if sha and not card.mentions(sha):
        yield f"source artifact checksum (source_model.sha256 {shown(sha)})"


def _source_file_names(source: dict[str, Any]) -> list[str]:
    """Base names the card may use for the source file. `source_model.path` is provenance (the
    writer stores the absolute local path it read): only its base name counts, as do
    primary_file and the files[] paths (v2 has no `path`)."""
    names: list[str] = []
    candidates = [source.get("primary_file"), source.get("path")]
    files = source.get("files")
    if isinstance(files, list):
        candidates += [f.get("path") for f in files if isinstance(f, dict)]
    for value in candidates:
        text = _text(value)
        if text:
            name = PurePosixPath(text.replace("\\", "/")).name
            if name and name not in names:
                names.append(name)
    return names


def _projector_items(manifest: dict[str, Any], card: Card) -> Iterator[str]:
    if manifest.get("schema_version") == 2:
        yield from _sidecar_items(manifest, card)
        return
    projectors = manifest.get("projectors")
    for i, entry in enumerate(projectors if isinstance(projectors, list) else []):
        entry = _dict(entry)
        path, sha = _text(entry.get("path")), _text(entry.get("sha256"))
        if path and not card.mentions_file(path):
            yield f"projector filename ({shown(path)})"
        if sha and not card.mentions(sha):
            yield f"projector checksum (projectors[{i}].sha256 {shown(sha)})"


def _sidecar_items(manifest: dict[str, Any], card: Card) -> Iterator[str]:
    sidecars = {s.get("artifact_id") for s in manifest.get("sidecars") or []
                if isinstance(s, dict)}
    artifact_entries = _dict(manifest.get("artifact_catalog")).get("entries")
    for entry in artifact_entries if isinstance(artifact_entries, list) else []:
        entry = _dict(entry)
        if entry.get("id") not in sidecars:
            continue
        path, sha = _text(entry.get("path")), _text(entry.get("sha256"))
        if path and not card.mentions_file(path):
            yield f"projector filename ({shown(path)})"
        if sha and not card.mentions(sha):
            yield f"projector checksum (artifact {entry.get('id')!r} sha256 {shown(sha)})"


def _shape_items(manifest: dict[str, Any], card: Card) -> Iterator[str]:
    layers, width = manifest.get("layer_count"), manifest.get("activation_width")
    if is_int(layers) and not card.number_near(layers, LAYER_WORDS):
        yield f"layer count ({layers})"
    if is_int(width) and not card.number_near(width, WIDTH_WORDS):
        yield f"activation width ({width})"
    abi_key = "native_abi_version" if manifest.get("schema_version") == 2 else "skippy_abi_version"
    abi = _text(manifest.get(abi_key))
    if abi and not card.mentions_version(abi):
        yield f"skippy ABI version ({abi_key} {shown(abi)})"


def _generation_items(view: PackageView, card: Card) -> Iterator[str]:
    """Every request profile by name; when speculative decoding is declared: its default
    strategy id and prediction depth."""
    for profile in profiles(view.manifest or {}):
        if not card.mentions(profile.name, word_chars=r"A-Za-z0-9_\-."):
            yield f"generation defaults: request profile {shown(profile.name)}"
    spec = read_speculative(view)
    default = _text(spec.raw.get("default")) if spec is not None else None
    if spec is None or default is None:
        return
    if not card.mentions(default, word_chars=r"A-Za-z0-9_\-"):
        yield f"generation defaults: default speculative strategy id ({shown(default)})"
    strategy_id = spec.default_strategy_id()
    strategy = spec.strategies.get(strategy_id) if strategy_id is not None else None
    depth = _prediction_depth(strategy, spec.proposers)
    if depth is not None and not card.number_near(depth, DEPTH_WORDS):
        yield f"generation defaults: prediction depth ({depth}) of strategy {shown(default)}"


def _prediction_depth(strategy: Any, proposers: dict[str, Any]) -> int | None:
    """The strategy's own prediction_depth, else its (primary) proposer's."""
    strategy = _dict(strategy)
    depth = strategy.get("prediction_depth")
    if is_int(depth):
        return int(depth)
    ref = strategy.get("proposer") or strategy.get("primary")
    proposer = _dict(proposers.get(ref)) if isinstance(ref, str) else {}
    depth = proposer.get("prediction_depth")
    return int(depth) if is_int(depth) else None


def _validation_items(card: Card) -> Iterator[str]:
    command = VALIDATION_COMMAND.search(card.text)
    if command is None:
        yield "validation command (`models certify ...`)"
        result_text = card.text
    else:
        start = card.text.rfind("\n", 0, command.start()) + 1
        result_text = card.text[start:command.end() + RESULT_WINDOW]
    if not VALIDATION_RESULT.search(result_text):
        yield "validation result (passed or failed)"
