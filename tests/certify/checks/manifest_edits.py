"""Helpers for the generation / speculative / README check tests.

`at(...)` and `spec(...)` make manifest edits for `PackageFactory.edit_manifest`; `shapes(...)`
and `run_named_checks(...)` drive the "any JSON shape" sweeps in process, so hundreds of broken
manifests can be tried against one real package quickly.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import run_checks
from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.core.findings import Finding
from meshcert.testing import PackageInfo

Edit = Callable[[dict[str, Any]], None]
DROP: Any = object()  # as a value: delete the key instead of setting it

# Values of every JSON type, including the awkward ones (unhashable, blank, bool-as-int).
GARBAGE: tuple[Any, ...] = (None, [], {}, "", "  ", "x", 0, -1, 1.5, True, 2**70,
                            [1, {"a": []}], {"type": []}, {"": {}})


def at(*path: str, value: Any = DROP) -> Edit:
    """Set (or, with the default, delete) the manifest value at `path`, creating objects."""
    def edit(manifest: dict[str, Any]) -> None:
        target = manifest
        for key in path[:-1]:
            target = target.setdefault(key, {})
        if value is DROP:
            target.pop(path[-1], None)
        else:
            target[path[-1]] = copy.deepcopy(value)
    return edit


def spec(*path: str, value: Any = DROP) -> Edit:
    """`at` below generation.speculative_decoding."""
    return at("generation", "speculative_decoding", *path, value=value)


def every_path(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key/index path inside a JSON value (containers and leaves)."""
    items: Any = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        yield (*prefix, key)
        yield from every_path(item, (*prefix, key))


def replaced(document: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A deep copy of `document` with the value at `path` replaced by `new`."""
    out = copy.deepcopy(document)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = copy.deepcopy(new)
    return out


def shapes(document: Any) -> Iterator[tuple[str, Any]]:
    """(label, variant): `document` with each of its values in turn replaced by each GARBAGE."""
    for path in every_path(document):
        for junk in GARBAGE:
            yield f"{'/'.join(map(str, path))}={junk!r}", replaced(document, path, junk)


def real_view(info: PackageInfo, **options: Any) -> PackageView:
    """The PackageView the certifier builds for a real package directory."""
    return load_local_package(str(info.root), display_ref=str(info.root),
                              options=CertOptions(**options))


def run_named_checks(view: PackageView, manifest: dict[str, Any], names: set[str]
                     ) -> list[Finding]:
    """Run only the named checks over `view` with `manifest` in place of its own."""
    swapped = dataclasses.replace(view, parsed=ParsedManifest(manifest))
    checks = [c for c in all_checks() if c.name in names]
    assert {c.name for c in checks} == names
    findings, _ = run_checks(swapped, checks)
    return findings
