"""A catalog entry file's bytes -> its `layer-package` references (pure).

An entry is `entries/<owner>/<repo>.json`:
`{schema_version: 1, source_repo, variants: {<variant>: {source: {repo, file?, revision?},
curated: {...}, packages: [{type: "layer-package", repo, layer_count?, total_bytes?,
source_revision?, revision?}]}}}`; old entries hold `variants` as a list (each item's variant
name is its `variant`/`name` field, else its source file's stem). Whatever does not read is a
`catalog_entry_invalid` finding naming the file: a file that is not such an object yields no
references, a bad variant or reference is left out, a bad optional field is ignored, and the
rest of the entry is still certified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from meshcert.certify.manifest_parse import bracket_depth, reject_constant
from meshcert.core.findings import Finding, finding
from meshcert.core.refs import RefError, parse_ref

ENTRY_SCHEMA_VERSION = 1
LAYER_PACKAGE = "layer-package"
MAX_ENTRY_BYTES = 1 << 20
_MAX_DEPTH = 32
_PIN = re.compile(r"^[0-9a-fA-F]{40}$")
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")


@dataclass(frozen=True)
class VariantSource:
    """The variant's `source`: the GGUF the package should have been written from."""

    repo: str | None = None
    file: str | None = None
    revision: str | None = None


@dataclass(frozen=True)
class PackageReference:
    """One `layer-package` reference of one variant, as the entry records it."""

    entry: str  # the entry file, e.g. entries/owner/repo.json
    variant: str
    index: int  # position in the variant's packages list
    repo: str
    revision: str | None = None  # as recorded; pinned only when it is a 40-hex commit
    layer_count: int | None = None
    total_bytes: int | None = None
    source_revision: str | None = None
    source: VariantSource = field(default_factory=VariantSource)
    list_shaped: bool = False  # the entry holds its variants as a list (the old shape)
    position: int = 0  # the variant's position among the entry's variants
    problems: tuple[Finding, ...] = ()  # bad optional fields (ignored, reported)

    @property
    def pinned_commit(self) -> str | None:
        """The recorded revision when it is a full commit id (lower-cased), else None."""
        return self.revision.lower() if self.revision and _PIN.match(self.revision) else None

    @property
    def where(self) -> str:
        return f"{self.entry} variant {self.variant!r} packages[{self.index}]"


@dataclass
class ParsedEntry:
    path: str
    references: list[PackageReference] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    readable: bool = True  # False: nothing of the file could be used
    source_repo: str | None = None


def _invalid(path: str, message: str) -> Finding:
    return finding("catalog_entry_invalid", f"{path}: {message}", path=path)


def decode_json(raw: bytes) -> Any:
    """Strict JSON (UTF-8, no NaN/Infinity, bounded size and nesting); raises ValueError."""
    if len(raw) > MAX_ENTRY_BYTES:
        raise ValueError(f"{len(raw)} bytes, over the {MAX_ENTRY_BYTES} byte limit")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start})") from None
    if bracket_depth(text) > _MAX_DEPTH:
        raise ValueError(f"nests deeper than {_MAX_DEPTH} levels")
    try:
        return json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def parse_entry(path: str, raw: bytes) -> ParsedEntry:
    """Read one entry file; never raises."""
    out = ParsedEntry(path)
    try:
        data = decode_json(raw)
    except ValueError as exc:
        out.readable = False
        out.findings.append(_invalid(path, f"the file does not parse: {exc}"))
        return out
    if not isinstance(data, dict):
        out.readable = False
        out.findings.append(_invalid(path, f"an entry is a JSON object, found "
                                     f"{type(data).__name__}"))
        return out
    version = data.get("schema_version")
    if "schema_version" in data and (version != ENTRY_SCHEMA_VERSION or isinstance(version,
                                                                                   bool)):
        out.readable = False
        out.findings.append(_invalid(path, f"schema_version {version!r} is not "
                                     f"{ENTRY_SCHEMA_VERSION}; the entry was not read"))
        return out
    source_repo = data.get("source_repo")
    if isinstance(source_repo, str) and source_repo.strip():
        out.source_repo = source_repo
        expected = _repo_of_path(path)
        if expected is not None and source_repo.lower() != expected.lower():
            out.findings.append(_invalid(path, f"source_repo {source_repo!r} does not match "
                                         f"the file name (entries/{expected}.json)"))
    elif "source_repo" in data:
        out.findings.append(_invalid(path, f"source_repo must be a non-empty string, found "
                                     f"{source_repo!r}"))
    variants = data.get("variants")
    if isinstance(variants, dict):
        items = [(str(name), value) for name, value in variants.items()]
        listed = False
    elif isinstance(variants, list):
        items = [(_list_variant_name(value, i), value) for i, value in enumerate(variants)]
        listed = True
    else:
        out.readable = False
        out.findings.append(_invalid(path, "variants must be an object keyed by variant (or "
                                     f"the old list), found {_kind(variants)}"))
        return out
    for position, (name, variant) in enumerate(items):
        _read_variant(out, name, variant, listed, position)
    return out


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _repo_of_path(path: str) -> str | None:
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == "entries" and parts[2].endswith(".json"):
        return f"{parts[1]}/{parts[2][:-5]}"
    return None


def _list_variant_name(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in ("variant", "name", "key"):
            if isinstance(item.get(key), str) and item[key].strip():
                return str(item[key])
        source = item.get("source")
        file = source.get("file") if isinstance(source, dict) else None
        if isinstance(file, str) and file.strip():
            return variant_key(file)
    return f"variants[{index}]"


def variant_key(file: str) -> str:
    """The variant key of a source file: its stem without `-NNNNN-of-NNNNN`."""
    stem = file.rsplit("/", 1)[-1]
    stem = stem[:-5] if stem.lower().endswith(".gguf") else stem
    return _SHARD.sub("", stem)


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _source(out: ParsedEntry, name: str, value: Any) -> VariantSource:
    if value is None:
        return VariantSource()
    if not isinstance(value, dict):
        out.findings.append(_invalid(out.path, f"variant {name!r}: source must be an object, "
                                     f"found {_kind(value)}"))
        return VariantSource()
    return VariantSource(repo=_optional_str(value.get("repo")),
                         file=_optional_str(value.get("file")),
                         revision=_optional_str(value.get("revision")))


def _read_variant(out: ParsedEntry, name: str, variant: Any, listed: bool, position: int
                  ) -> None:
    if not isinstance(variant, dict):
        out.findings.append(_invalid(out.path, f"variant {name!r} must be an object, found "
                                     f"{_kind(variant)}"))
        return
    source = _source(out, name, variant.get("source"))
    packages = variant.get("packages")
    if packages is None:
        return
    if not isinstance(packages, list):
        out.findings.append(_invalid(out.path, f"variant {name!r}: packages must be a list, "
                                     f"found {_kind(packages)}"))
        return
    for index, package in enumerate(packages):
        where = f"variant {name!r} packages[{index}]"
        if not isinstance(package, dict):
            out.findings.append(_invalid(out.path, f"{where} must be an object, found "
                                         f"{_kind(package)}"))
            continue
        if package.get("type") != LAYER_PACKAGE:
            continue  # another kind of package: not ours to certify
        reference = _reference(out.path, name, index, package, source, listed, position)
        if isinstance(reference, Finding):
            out.findings.append(reference)
        else:
            out.references.append(reference)


def _reference(path: str, variant: str, index: int, package: dict[str, Any],
               source: VariantSource, listed: bool, position: int
               ) -> PackageReference | Finding:
    where = f"variant {variant!r} packages[{index}]"
    repo = package.get("repo")
    if not isinstance(repo, str):
        return _invalid(path, f"{where}: repo must be a string \"ns/name\", found {_kind(repo)}")
    try:
        ref = parse_ref(f"hf://{repo}")
    except RefError as err:
        return _invalid(path, f"{where}: repo {repo!r} is not a Hub repository id ({err})")
    if ref.revision is not None:
        return _invalid(path, f"{where}: repo {repo!r} holds a revision; record it as "
                        "\"revision\"")
    problems: list[Finding] = []

    def field_of(key: str, kind: str) -> Any:
        value = package.get(key)
        if value is None:
            return None
        ok = (isinstance(value, int) and not isinstance(value, bool) and value >= 0
              if kind == "count" else isinstance(value, str) and bool(value.strip()))
        if ok:
            return value
        wanted = "a non-negative integer" if kind == "count" else "a non-empty string"
        problems.append(_invalid(path, f"{where}: {key} must be {wanted}, found {value!r}; "
                                 "it is ignored"))
        return None

    return PackageReference(
        entry=path, variant=variant, index=index, repo=repo,
        revision=field_of("revision", "text"), layer_count=field_of("layer_count", "count"),
        total_bytes=field_of("total_bytes", "count"),
        source_revision=field_of("source_revision", "text"), source=source,
        list_shaped=listed, position=position, problems=tuple(problems))
