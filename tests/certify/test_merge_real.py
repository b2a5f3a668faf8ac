"""The real SmolLM2-135M (30 layers), split as v1 and v2: `--stage I/4` on each "node", then
merge, gives the whole-package verdict; a flipped byte in layer 17 is caught by stage 2 only."""

from __future__ import annotations

import pytest

from meshcert.certify.merge import Slice, merge_slices
from meshcert.certify.scope import parse_stage
from tests.certify.test_merge import verdict
from tests.certify.test_scope import certify, errors
from tests.support.real_models import smollm2_path
from tests.support.splits import SplitPackage, split_v1, split_v2

pytestmark = pytest.mark.slow
N = 4  # 30 layers: stages of 8, 8, 7, 7


@pytest.fixture(scope="module", params=["v1", "v2"])
def real(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> SplitPackage:
    split = split_v1 if request.param == "v1" else split_v2
    return split(smollm2_path(), tmp_path_factory.mktemp(request.param) / "pkg",
                 model_id="HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1")


def test_four_node_slices_merge_to_the_whole_verdict_then_catch_a_flipped_byte(
        real: SplitPackage) -> None:
    whole = certify(real.root)
    parts = [Slice(f"node-{i}.json", certify(real.root, parse_stage(f"{i}/{N}")))
             for i in range(N)]
    assert [(s.report.scope.layer_start, s.report.scope.layer_end) for s in parts
            if s.report.scope] == [(0, 8), (8, 16), (16, 23), (23, 30)]
    merged = merge_slices(parts)
    assert merged.status == whole.status, (errors(merged), errors(whole))
    assert verdict(merged) == verdict(whole)
    assert merged.digests == whole.digests
    layer = next(p for p in real.files if p.startswith("layers/") and "017" in p)
    path = real.files[layer]
    original = path.read_bytes()
    try:
        data = bytearray(original)
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
        owners = [i for i in range(N)
                  if ("artifact_sha256_mismatch", layer)
                  in errors(certify(real.root, parse_stage(f"{i}/{N}")))]
        assert owners == [2]
    finally:
        path.write_bytes(original)
