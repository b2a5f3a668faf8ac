"""The Phase E gate reproduces glm52-phase-e-moe-report.sh's checks and messages."""

from __future__ import annotations

import pytest

from meshcert.evidence.gates import evaluate_gate
from meshcert.evidence.matching import BackendError, resolve_rules
from meshcert.evidence.report import GateResult
from meshcert.evidence.rules import RULES
from meshcert.evidence.settings import EvidenceSettings
from tests.evidence.gate_logs import (
    ESTIMATE_US,
    PASSING_US,
    PLAIN_KERNEL,
    SWEEP_US,
    dispatch_logs,
    perf_console,
    row_name,
    settings,
    sweep_logs,
    table,
)

MISSING = "error: missing Phase E MoE gate rows: "


def gate_of(texts: dict[str, str], s: EvidenceSettings | None = None,
            backend: str | None = None) -> GateResult:
    ev = resolve_rules(table(texts), RULES, backend)
    return evaluate_gate(ev, s or settings())


def with_us(**changes: float) -> dict[str, str]:
    return {"run-1.console.log": perf_console({**PASSING_US, **changes})}


def check(result: GateResult, name: str) -> str:
    return next(c.status for c in result.checks if c.name == name)


def test_all_rows_present_and_passing() -> None:
    result = gate_of(with_us(), settings(GLM52_PHASE_E_REQUIRE_GATES=1))
    assert result.passed and result.enforced
    assert result.errors == [] and result.missing_rows == []
    assert {c.status for c in result.checks} == {"passed", "skipped"}
    assert check(result, "mul_mm_id_slowdown") == "skipped"  # kernel sweep off
    e = result.estimate
    assert e is not None and result.estimate_message is None
    assert e.total_us == pytest.approx(ESTIMATE_US)
    assert e.share_us["matmuls"] == pytest.approx(2 * 110.0 + 164.0)
    assert e.shares["SwiGLU"] == pytest.approx(5.35 / ESTIMATE_US)
    assert e.share_us["route+sum"] == pytest.approx(3.26 + 6.69)
    assert e.shared_expert_share == pytest.approx(405.32 / (ESTIMATE_US + 405.32))


def test_a_missing_row_is_listed_and_its_gate_is_not_evaluated() -> None:
    us = dict(PASSING_US)
    del us["routed_down_q2_K"]
    result = gate_of({"run-1.console.log": perf_console(us)})
    assert result.errors == [MISSING + "routed q2_K down"]
    assert [m.label for m in result.missing_rows] == ["routed_down_q2_K"]
    assert check(result, "q2_down_faster") == "missing"
    assert result.estimate is not None  # the q2_K down is not part of the estimate
    assert not result.passed and not result.enforced


def test_missing_rows_prevent_the_estimate_and_keep_the_spec_order() -> None:
    us = {k: v for k, v in PASSING_US.items()
          if k not in {"routed_gate_up_q2_K", "shexp_component_5", "route"}}
    result = gate_of({"run-1.console.log": perf_console(us)})
    assert result.errors[0] == MISSING + ("route, routed q2_K gate/up, "
                                          "shared SwiGLU split component")
    assert result.estimate is None
    assert result.estimate_message == "Missing rows prevented the per-layer estimate."


def test_an_unsupported_row_counts_as_missing() -> None:
    us = dict(PASSING_US)
    del us["shexp_q2_K"]
    text = perf_console(us).replace(
        "  Backend Metal: OK", f"  {row_name('shexp_q2_K')}: not supported\n  Backend Metal: OK")
    result = gate_of({"run-1.console.log": text})
    assert result.errors == [MISSING + "shared q2_K fused GLU"]


@pytest.mark.parametrize(("changes", "gate", "error"), [
    ({"routed_down_q2_K": 170.0}, "q2_down_faster",
     "error: routed q2_K down is not faster than routed q3_K down (q3_K/q2_K = 0.965x, needs > "
     "1.00x)"),
    ({"ffn_q2_down": 1100.0, "ffn_q2_down_weighted": 1095.0}, "q2_ffn_min_speedup",
     "error: combined FFN q3_K-down / q2_K-down speedup 1.043x is below "
     "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP=1.08"),
    ({"ffn_q2_down_weighted": 700.0}, "q2_weighted_review",
     "error: combined FFN q2_K / q2_K weighted down speedup 1.168x is above "
     "GLM52_PHASE_E_Q2_WEIGHTED_REVIEW_SPEEDUP=1.02: revisit q2 unweighted policy"),
    ({"ffn_q3_down_merged_shexp": 868.59}, "merged_shexp_review",
     "error: combined FFN q3_K / q3_K merged shared gate/up speedup 1.321x is above "
     "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP=1.02: revisit disabled merged shared-expert "
     "policy"),
    ({"routed_swiglu_fused": 30.0}, "fused_swiglu_share",
     "error: routed fused SwiGLU is 7.1% of the routed FFN decode estimate (must be under 5%)"),
    ({"sanity_q3_K_down": 50.0}, "sanity_q3_K_down",
     "error: sanity probe q3_K down is 12.5% of the isolated estimate (under 25%): rejected"),
    ({"sanity_q2_K_down_weighted": 40.0}, "sanity_q2_K_down_weighted",
     "error: sanity probe q2_K weighted down is 11.3% of the isolated estimate (under 25%): "
     "rejected"),
])
def test_each_hard_gate_fails_with_its_message(changes: dict[str, float], gate: str,
                                               error: str) -> None:
    result = gate_of(with_us(**changes))
    assert result.errors == [error]
    failed = next(c for c in result.checks if c.name == gate)
    assert failed.status == "failed" and failed.error == error
    assert failed.value is not None and failed.threshold is not None


def test_a_plausible_sanity_row_passes_and_the_probe_can_be_switched_off() -> None:
    assert check(gate_of(with_us(sanity_q3_K_down=300.0)), "sanity_q3_K_down") == "passed"
    off = gate_of(with_us(sanity_q3_K_down=50.0),
                  settings(GLM52_PHASE_E_ROUTED_WHOLE_GRAPH_SANITY=0))
    assert off.passed and check(off, "sanity_q3_K_down") == "skipped"


def test_threshold_environment_overrides() -> None:
    strict = gate_of(with_us(), settings(GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP=1.5))
    assert strict.errors == ["error: combined FFN q3_K-down / q2_K-down speedup 1.404x is below "
                             "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP=1.5"]
    q2 = next(c for c in strict.checks if c.name == "q2_ffn_min_speedup")
    assert (q2.threshold, q2.threshold_source) == (1.5, "env")
    lax = gate_of(with_us(ffn_q3_down_merged_shexp=868.59),
                  settings(GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP=1.4))
    assert lax.passed


# -- kernel sweep ----------------------------------------------------------------------------

SWEEP_ON = {"GLM52_PHASE_E_KERNEL_SWEEP": 1}


def test_sweep_on_with_every_sweep_row_and_dispatch_check_passes() -> None:
    result = gate_of({**with_us(), **sweep_logs(), **dispatch_logs()}, settings(**SWEEP_ON))
    assert result.errors == []
    assert check(result, "mul_mm_id_slowdown") == "passed"
    assert check(result, "dispatch_default") == check(result, "dispatch_disabled") == "passed"


def test_sweep_on_requires_the_sweep_rows() -> None:
    result = gate_of(with_us(), settings(**SWEEP_ON))
    assert result.errors == [MISSING + (
        "forced mul_mm_id q3_K down, q3_K mul_mv_id nsg=1, q3_K mul_mv_id nsg=2, "
        "q3_K mul_mv_id nsg=4, q3_K mul_mv_id nr0=1, q3_K mul_mv_id nr0=2, q3_K mul_mv_id nr0=4, "
        "q3_K mul_mv_id nr0=8, GLM-down k=2048 kernel nsg=2, GLM-down k=2048 kernel nsg=4, "
        "fixed-block dispatch check default, fixed-block dispatch check disabled")]


def test_sweep_off_ignores_sweep_rows_and_their_gates() -> None:
    result = gate_of({**with_us(), **sweep_logs({"sweep_mul_mm_id": 170.0})})
    assert result.passed and check(result, "mul_mm_id_slowdown") == "skipped"


def test_forced_mul_mm_id_must_be_at_least_2x_slower() -> None:
    logs = {**with_us(), **sweep_logs({**SWEEP_US, "sweep_mul_mm_id": 300.0}), **dispatch_logs()}
    result = gate_of(logs, settings(**SWEEP_ON))
    assert result.errors == ["error: forced mul_mm_id q3_K down is only 1.83x slower than "
                             "default mul_mv_id (must be at least 2x)"]


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"default_kernel": PLAIN_KERNEL},
     "glm-down-default dispatched kernel_mul_mv_id_q3_K_f32 (expected a kernel that picks "
     "_glm_down)"),
    ({"disabled_kernel": "kernel_mul_mv_id_q3_K_f32_glm_down"},
     "glm-down-disabled dispatched kernel_mul_mv_id_q3_K_f32_glm_down (expected a kernel that "
     "does not pick _glm_down)"),
    ({"tests": (0, 1)}, "glm-down-default backend Metal reported 0/1 tests passed"),
    ({"backends": (2, 3)}, "glm-down-default reported 2/3 backends passed (expected 3/3)"),
])
def test_fixed_block_dispatch_check_failures(kwargs: dict[str, object], fragment: str) -> None:
    logs = {**with_us(), **sweep_logs(), **dispatch_logs(**kwargs)}  # type: ignore[arg-type]
    result = gate_of(logs, settings(**SWEEP_ON))
    assert len(result.errors) == 1
    assert result.errors[0].startswith("error: fixed-block dispatch check ")
    assert fragment in result.errors[0]


# -- which rows count -------------------------------------------------------------------------


def test_rows_of_another_backend_are_not_samples_of_this_one() -> None:
    bad = {**PASSING_US, "ffn_q3_down_merged_shexp": 500.0}
    texts = {"metal.console.log": perf_console(PASSING_US),
             "cpu.console.log": perf_console(bad, backend="CPU")}
    assert gate_of(texts).passed  # Metal evaluated by default
    assert not gate_of(texts, backend="CPU").passed
    with pytest.raises(BackendError, match="'Vulkan' has no benchmark rows"):
        gate_of(texts, backend="Vulkan")


def test_repeated_runs_use_the_median() -> None:
    texts = {f"run-{i}.console.log": perf_console({**PASSING_US, "ffn_q3_down_merged_shexp": v})
             for i, v in enumerate((1140.0, 860.0, 1141.0))}
    result = gate_of(texts)
    merged = next(c for c in result.checks if c.name == "merged_shexp_review")
    assert merged.value == pytest.approx(1147.21 / 1140.0)
    assert result.passed
