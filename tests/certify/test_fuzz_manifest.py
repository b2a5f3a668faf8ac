"""Property-based fuzzing of the manifest path (structure-aware mutations of a real manifest).

Properties: a report is always produced; no check crashes (no `internal_error`); a mutation
that breaks a MUST rule fails the package; a valid manifest (including harmless variations)
yields no error finding. Fixed seed and budget so CI is reproducible.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meshcert.certify.engine import build_report, utc_now
from meshcert.certify.manifest_parse import parse_manifest
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.testing import glm_dsa_spec, write_package

FUZZ = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def base_view(tmp_path_factory: pytest.TempPathFactory) -> PackageView:
    root = tmp_path_factory.mktemp("fuzz") / "pkg"
    write_package(glm_dsa_spec(), root)
    return load_local_package(str(root), display_ref=str(root), options=CertOptions())


def _with_manifest(view: PackageView, manifest: Any) -> PackageView:
    raw = json.dumps(manifest).encode()
    return replace(view, manifest_raw=raw, parsed=parse_manifest(raw))


def _report(view: PackageView):
    report = build_report(view, input_text="fuzz", started_at=utc_now())
    assert "internal_error" not in {f.code for f in report.findings}, [
        f.message for f in report.findings if f.code == "internal_error"]
    assert report.status in {"passed", "failed"}
    return report


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _set_at(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def _delete_at(doc: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return doc
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return doc


@FUZZ
@given(data=st.data())
def test_any_mutation_yields_a_report_and_no_crash(base_view: PackageView, data) -> None:
    manifest = copy.deepcopy(base_view.manifest)
    paths = _paths(manifest)
    for _ in range(data.draw(st.integers(1, 4))):
        paths = _paths(manifest)
        if not isinstance(manifest, dict | list) or not paths:
            break
        path = data.draw(st.sampled_from(paths))
        if data.draw(st.booleans()) and path:
            manifest = _delete_at(manifest, path)
        else:
            manifest = _set_at(manifest, path, data.draw(json_values))
    _report(_with_manifest(base_view, manifest))


@FUZZ
@given(raw=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_arbitrary_bytes_as_manifest(base_view: PackageView, raw: bytes) -> None:
    view = replace(base_view, manifest_raw=raw, parsed=parse_manifest(raw))
    _report(view)


def _must_breakers() -> list[tuple[str, Any]]:
    def layer(key: str, value: Any):
        return lambda m: m["layers"][0].__setitem__(key, value)
    return [
        ("schema_version", lambda m: m.__setitem__("schema_version", 2)),
        ("format", lambda m: m.__setitem__("format", "other")),
        ("model_id", lambda m: m.__setitem__("model_id", "")),
        ("drop layer", lambda m: m["layers"].pop()),
        ("duplicate layer", lambda m: m["layers"].append(copy.deepcopy(m["layers"][0]))),
        ("artifact_bytes", layer("artifact_bytes", 0)),
        ("sha256", layer("sha256", "xyz")),
        ("unsafe path", layer("path", "../../etc/passwd")),
        ("abi", lambda m: m.pop("skippy_abi_version")),
        ("source sha", lambda m: m["source_model"].__setitem__("sha256", "1234")),
        ("too few layers", lambda m: m.__setitem__("layer_count", 1)),
        ("projector kind", lambda m: m.__setitem__("projectors", [
            {**m["shared"]["metadata"], "kind": "vision"}])),
    ]


@pytest.mark.parametrize(("name", "breaker"), _must_breakers(), ids=[n for n, _ in
                                                                     _must_breakers()])
def test_breaking_a_must_rule_fails(base_view: PackageView, name: str, breaker) -> None:
    manifest = copy.deepcopy(base_view.manifest)
    breaker(manifest)
    report = _report(_with_manifest(base_view, manifest))
    assert report.status == "failed", name


@FUZZ
@given(extra=st.dictionaries(st.text(min_size=1, max_size=8).filter(
    lambda k: k not in {"schema_version", "format", "model_id", "source_model", "layer_count",
                        "activation_width", "shared", "layers", "projectors", "generation",
                        "skippy_abi_version", "created_at_unix_secs"}), json_values, max_size=3),
       upper=st.booleans(), reorder=st.booleans())
def test_valid_manifest_variants_have_no_error(base_view: PackageView, extra, upper: bool,
                                               reorder: bool) -> None:
    manifest = copy.deepcopy(base_view.manifest)
    assert manifest is not None
    manifest.update(extra)
    if upper:
        for entry in manifest["layers"]:
            entry["sha256"] = entry["sha256"].upper()
    if reorder:
        manifest = dict(reversed(list(manifest.items())))
        manifest["layers"] = list(reversed(manifest["layers"]))
    report = _report(_with_manifest(base_view, manifest))
    errors = [f.code for f in report.findings if f.severity == "error"]
    assert errors == [], errors


def test_fixture_is_really_valid(base_view: PackageView, tmp_path: Path) -> None:
    assert _report(base_view).status == "passed"
