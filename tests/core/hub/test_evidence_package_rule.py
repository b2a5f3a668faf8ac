"""`meshcert evidence report --package hf://...`: the q2_K NextN rule on a published package,
read header-only through the Hub (here: the fake Hub and the real huggingface_hub client)."""

from __future__ import annotations

from pathlib import Path

from gguf import GGMLQuantizationType as Q

from meshcert.evidence.package_rules import check_nextn_down, load_package
from meshcert.testing import glm_dsa_spec, write_package
from tests.support.hub_server import FakeHub

REPO = "meshcert/tiny-glm-dsa-layers"


def _publish(hub: FakeHub, tmp_path: Path, **spec: object) -> str:
    info = write_package(glm_dsa_spec(**spec), tmp_path / "pkg")  # type: ignore[arg-type]
    return hub.publish_dir(REPO, info.root)


def test_nextn_layer_kept_at_its_type_passes_over_the_hub(hub: FakeHub, tmp_path: Path) -> None:
    sha = _publish(hub, tmp_path, down_type=Q.Q2_K, nextn_down_type=Q.Q3_K)
    ref = f"hf://{REPO}@{sha}"
    result = check_nextn_down(load_package(ref), ref)
    assert (result.status, result.recipe_applied, result.nextn_layers) == ("passed", True, [3])
    storage = [r for r in hub.requests() if r.route == "lfs"]
    assert storage and all(r.range is not None for r in storage)  # header ranges, no download


def test_nextn_layer_quantized_with_the_recipe_fails_over_the_hub(hub: FakeHub,
                                                                  tmp_path: Path) -> None:
    sha = _publish(hub, tmp_path, down_type=Q.Q2_K)
    ref = f"hf://{REPO}@{sha}"
    result = check_nextn_down(load_package(ref), ref)
    assert result.status == "failed"
    assert "blk.3.ffn_down_exps.weight is q2_K" in result.messages[0]
