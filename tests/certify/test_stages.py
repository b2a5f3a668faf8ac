"""Stage ranges and plans: what each node fetches."""

from __future__ import annotations

import pytest

from meshcert.certify.stages import certification_ranges, hashing_shares, plan_stages
from tests.conftest import PackageFactory, certify_dir


def test_certification_ranges_split_in_half() -> None:
    a, b = certification_ranges(94)
    assert (a.layer_start, a.layer_end, b.layer_start, b.layer_end) == (0, 47, 47, 94)
    assert a.include_embeddings() and not a.include_output(94)
    assert b.include_output(94) and not b.include_embeddings()


@pytest.mark.parametrize(("layers", "n", "sizes"), [
    (94, 4, [24, 24, 23, 23]), (10, 3, [4, 3, 3]), (4, 4, [1, 1, 1, 1]),
])
def test_plan_stages_matches_the_package_tool(layers: int, n: int, sizes: list[int]) -> None:
    plan = plan_stages(layers, n)
    assert [s.layer_end - s.layer_start for s in plan] == sizes
    assert plan[0].layer_start == 0 and plan[-1].layer_end == layers


def test_materialized_stages_in_report(packages: PackageFactory) -> None:
    info = packages.build("llama", layers=6)
    report = certify_dir(info.root, stages=3)
    s0, s1 = report.materialized_stages
    assert (s0.stage_id, s0.layer_start, s0.layer_end) == ("cert-stage-0", 0, 3)
    assert (s1.stage_id, s1.layer_start, s1.layer_end) == ("cert-stage-1", 3, 6)
    assert [p.path for p in s0.parts] == ["shared/metadata.gguf", "shared/embeddings.gguf",
                                          "layers/layer-000.gguf", "layers/layer-001.gguf",
                                          "layers/layer-002.gguf"]
    assert s1.parts[-1].path == "shared/output.gguf"
    assert s0.selected_part_count == s0.verified_artifacts == 5
    assert s0.materialized_bytes == sum(p.artifact_bytes or 0 for p in s0.parts)
    assert [(s.layer_start, s.layer_end) for s in report.stage_plan] == [(0, 2), (2, 4), (4, 6)]
    assert report.stage_plan[1].include_embeddings is False


def test_stage_zero_takes_the_first_mmproj(packages: PackageFactory) -> None:
    info = packages.build("llama")
    meta = dict(info.manifest["shared"]["metadata"])
    packages.edit_manifest(info, lambda m: m.update(projectors=[{**meta, "kind": "mmproj"}]))
    report = certify_dir(info.root)
    assert report.materialized_stages[0].parts[-1].role == "projector"
    assert all(p.role != "projector" for p in report.materialized_stages[1].parts)


def test_no_plan_has_more_stages_than_layers() -> None:
    """Never a smaller plan than asked for: mesh-llm's preflight refuses N > L."""
    assert plan_stages(3, 5) == []


def test_more_stages_than_layers_is_stage_count_exceeds_layer_count(
        packages: PackageFactory) -> None:
    info = packages.build("llama", layers=4)
    report = certify_dir(info.root, stages=5)
    [found] = [f for f in report.findings if f.code == "stage_count_exceeds_layer_count"]
    assert found.severity == "error" and "--stages 5" in found.message and "4" in found.message
    assert report.stage_plan == [] and report.status == "failed"


def test_one_stage_per_layer_is_still_a_plan(packages: PackageFactory) -> None:
    info = packages.build("llama", layers=4)
    report = certify_dir(info.root, stages=4)
    assert "stage_count_exceeds_layer_count" not in {f.code for f in report.findings}
    assert len(report.stage_plan) == 4


def test_hashing_shares_give_each_path_to_one_stage_balancing_the_shared_ones() -> None:
    # by hand: three stages; "common" (60) is loaded by all three, "meta" (1) by all three,
    # "emb" (50) only by stage 0 and "out" (10) only by stage 2. The single-owner parts go to
    # their stage first (totals 50+10, 20, 20+10), then the shared ones, largest first, to the
    # loader with the fewest bytes so far (ties: the lowest stage): common -> stage 1 (20),
    # then meta -> stage 2 (30 < 60 and 80)
    loads = [[("meta", 1), ("common", 60), ("emb", 50), ("l0", 10)],
             [("meta", 1), ("common", 60), ("l1", 20)],
             [("meta", 1), ("common", 60), ("l2", 20), ("out", 10)]]
    shares = hashing_shares(loads)
    assert shares == [["emb", "l0"], ["l1", "common"], ["l2", "out", "meta"]]
    every = [p for share in shares for p in share]
    assert sorted(every) == sorted({p for parts in loads for p, _ in parts})  # each exactly once
    assert hashing_shares(loads) == shares  # the launcher and each slice get the same answer


def test_hashing_shares_count_a_missing_size_as_zero_bytes() -> None:
    assert hashing_shares([[("a", None), ("s", None)], [("s", 5)]]) == [["a", "s"], []]
