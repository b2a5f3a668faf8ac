"""--write-pins: the entries with each passed package's commit added as "revision", the
diff a catalog pull request would carry, and never over the catalog itself."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from meshcert.catalog.entries import parse_entry
from meshcert.catalog.pins import PinError, check_target, plan_pins, write_pins
from meshcert.catalog.report import CatalogPackage

PATH = "entries/meshcert/tiny-llama.json"
OLD = "entries/old/tiny-llama.json"
A, B = "a" * 40, "b" * 40


def row(repo: str, status: str = "passed", revision: str | None = A) -> CatalogPackage:
    return CatalogPackage(entry=PATH, variant="F16", index=0, repo=repo, status=status,  # type: ignore[arg-type]
                          revision=revision, revision_source="resolved" if revision else None)


def text(data: Any, indent: int | str | None = 2) -> bytes:
    return (json.dumps(data, indent=indent) + "\n").encode()


ENTRY = {"schema_version": 1, "source_repo": "meshcert/tiny-llama", "variants": {
    "F16": {"source": {"repo": "meshcert/tiny-llama"}, "curated": {"name": "Tiny \u00e9"},
            "packages": [{"type": "layer-package", "repo": "ns/a", "layer_count": 4},
                         {"type": "layer-package", "repo": "ns/b", "revision": "main"},
                         {"type": "layer-package", "repo": "ns/c", "revision": B},
                         {"type": "layer-package", "repo": "ns/d"}]}}}


def plan_for(files: dict[str, bytes], rows: dict[str, CatalogPackage]) -> Any:
    refs = [r for p in sorted(files) for r in parse_entry(p, files[p]).references]
    return plan_pins(files, refs, [rows[r.repo] for r in refs])


def test_a_passed_package_gets_its_commit_right_after_its_repo() -> None:
    files = {PATH: text(ENTRY)}
    plan = plan_for(files, {"ns/a": row("ns/a"), "ns/b": row("ns/b", revision=B),
                            "ns/c": row("ns/c", revision=B), "ns/d": row("ns/d", "failed")})
    diff = [line for line in difflib.unified_diff(
        files[PATH].decode().splitlines(), plan.files[PATH].splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert diff == [
        '+          "revision": "' + A + '",',  # inserted after "repo" in ns/a
        '-          "revision": "main"',  # a moving revision is replaced by the commit
        '+          "revision": "' + B + '"']
    assert [r.repo for r in plan.pinned] == ["ns/a", "ns/b"]  # ns/c was pinned already
    assert [(r.repo, why) for r, why in plan.left] == [("ns/d",
                                                        "not pinned: its verdict is failed")]
    assert json.loads(plan.files[PATH])["variants"]["F16"]["curated"]["name"] == "Tiny \u00e9"


@pytest.mark.parametrize("indent", [2, 4, "\t", None])
def test_the_entry_keeps_its_own_layout(indent: int | str | None) -> None:
    raw = text(ENTRY, indent)
    plan = plan_for({PATH: raw}, {r: row(r, "failed") for r in ("ns/b", "ns/c", "ns/d")}
                    | {"ns/a": row("ns/a")})
    expected = json.loads(raw)
    expected["variants"]["F16"]["packages"][0] = {"type": "layer-package", "repo": "ns/a",
                                                  "revision": A, "layer_count": 4}
    assert plan.files[PATH] == json.dumps(expected, indent=indent) + "\n"


def test_an_old_list_shaped_entry_is_pinned_by_position() -> None:
    old = {"schema_version": 1, "source_repo": "old/tiny-llama", "variants": [
        {"variant": "Q4", "packages": [{"type": "layer-package", "repo": "ns/x"}]},
        {"variant": "Q8", "packages": [{"type": "layer-package", "repo": "ns/y"}]}]}
    files = {OLD: text(old)}
    refs = parse_entry(OLD, files[OLD]).references
    rows = [row("ns/x", "failed").model_copy(update={"entry": OLD}),
            row("ns/y").model_copy(update={"entry": OLD, "variant": "Q8"})]
    plan = plan_pins(files, refs, rows)
    pinned = json.loads(plan.files[OLD])["variants"]
    assert "revision" not in pinned[0]["packages"][0]
    assert pinned[1]["packages"][0] == {"type": "layer-package", "repo": "ns/y", "revision": A}


def test_an_entry_with_nothing_to_pin_is_not_written(tmp_path: Path) -> None:
    files = {PATH: text(ENTRY)}
    plan = plan_for(files, {r: row(r, revision=None) for r in ("ns/a", "ns/b", "ns/d")}
                    | {"ns/c": row("ns/c")})
    assert plan.files == {} and len(plan.left) == 3
    assert all(why == "not pinned: it could not be resolved" for _, why in plan.left)
    assert write_pins(plan, tmp_path / "pins", None) == []


def test_pins_are_written_beside_the_catalog_never_over_it(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    (catalog / "entries" / "meshcert").mkdir(parents=True)
    original = text(ENTRY)
    (catalog / PATH).write_bytes(original)
    plan = plan_for({PATH: original}, {r: row(r) for r in ("ns/a", "ns/b", "ns/c", "ns/d")})
    for inside in (catalog, catalog / "entries", catalog / "pins"):
        with pytest.raises(PinError, match="inside the catalog checkout"):
            write_pins(plan, inside, str(catalog))
    written = write_pins(plan, tmp_path / "pins", str(catalog))
    assert written == [tmp_path / "pins" / PATH]
    assert (catalog / PATH).read_bytes() == original  # untouched
    assert json.loads(written[0].read_text())["variants"]["F16"]["packages"][3]["revision"] == A
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(PinError, match="is not a directory"):
        check_target(tmp_path / "a-file", None)
