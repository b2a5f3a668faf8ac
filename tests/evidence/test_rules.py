"""The rules are data: rows, required sets, gates, decisions and the environment variables."""

from __future__ import annotations

import pytest

from meshcert.evidence.parsers.params import parse_params
from meshcert.evidence.rules import (
    ENV_VARS,
    RULES,
    GateSpec,
    RowSpec,
    Rules,
)
from meshcert.evidence.settings import SettingsError, load_settings

REQUIRED_15 = [
    "route", "weighted sum 1 tok", "routed q2_K gate/up", "routed q3_K down", "routed q2_K down",
    "routed fused SwiGLU", "small routed fused whole graph", "shared fused GLU q4_K",
    "shared q3_K fused GLU", "shared q2_K fused GLU", "combined FFN q3_K down",
    "combined FFN q2_K down", "combined FFN q2_K weighted down",
    "combined FFN q3_K + merged shared gate/up", "shared SwiGLU split component",
]


def test_the_15_required_rows_in_the_spec_order() -> None:
    assert [RULES.title(lbl) for lbl in RULES.required(kernel_sweep=False)] == REQUIRED_15


def test_kernel_sweep_adds_the_sweep_rows_and_both_dispatch_checks() -> None:
    extra = RULES.required(kernel_sweep=True)[15:]
    variants = [RULES.row(lbl).variant for lbl in extra if lbl.startswith("sweep_")]
    assert variants == [
        "mul-mm-id-min-1", "q3-k-mul-mv-id-nsg-1", "q3-k-mul-mv-id-nsg-2",
        "q3-k-mul-mv-id-nsg-4", "q3-k-mul-mv-id-nr0-1", "q3-k-mul-mv-id-nr0-2",
        "q3-k-mul-mv-id-nr0-4", "q3-k-mul-mv-id-nr0-8", "q3-k-mul-mv-id-glm-down-nsg-2",
        "q3-k-mul-mv-id-glm-down-nsg-4"]
    assert extra[-2:] == ("dispatch_default", "dispatch_disabled")


def test_phase_d_rows_are_never_required() -> None:
    required = set(RULES.required(True))
    assert not [r.label for r in RULES.rows if r.phase == "D" and r.label in required]


def test_labels_unique_titles_comma_free_and_every_reference_resolves() -> None:
    labels = [r.label for r in RULES.rows]
    assert len(labels) == len(set(labels))
    assert all("," not in r.title for r in RULES.rows)  # the missing-rows list is a comma list
    referenced = {lbl for g in RULES.gates for lbl, _ in g.numerator + g.denominator}
    referenced |= {lbl for d in RULES.decisions for lbl in d.rows()}
    referenced |= {d.row for d in RULES.dispatch_checks}
    assert referenced <= set(labels)


def test_environment_variables_and_defaults_match_the_script() -> None:
    assert {v.name: v.default for v in ENV_VARS} == {
        "GLM52_PHASE_E_REQUIRE_GATES": "0", "GLM52_PHASE_E_KERNEL_SWEEP": "0",
        "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP": "1.08",
        "GLM52_PHASE_E_Q2_WEIGHTED_REVIEW_SPEEDUP": "1.02",
        "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP": "1.02",
        "GLM52_PHASE_E_ROUTED_WHOLE_GRAPH_SANITY": "1"}


def test_decision_table_policies_thresholds_and_kinds() -> None:
    table = {d.policy: (d.kind, d.threshold_env, d.default_threshold()) for d in RULES.decisions}
    assert table == {
        "moe_merged_shared_gate_up": ("review-tripwire",
                                      "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP", 1.02),
        "moe_weighted_down": ("review-tripwire", "GLM52_PHASE_E_Q2_WEIGHTED_REVIEW_SPEEDUP",
                              1.02),
        "q2_K_routed_down": ("quant-recipe", "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP", 1.08),
        "selected_row_flash": ("experimental", None, 1.0),
        "decode": ("phase-default", None, 1.0),
        "short_prefill": ("phase-default", None, 1.0),
    }


def test_gate_table_kinds() -> None:
    kinds = {g.name: g.kind for g in RULES.gates}
    assert kinds["q2_ffn_min_speedup"] == "promotion"
    assert kinds["q2_weighted_review"] == kinds["merged_shexp_review"] == "review-tripwire"
    assert kinds["q2_down_faster"] == kinds["fused_swiglu_share"] == "guard"


# -- matching on the parsed param dict ------------------------------------------------------

_Q3_DOWN = "type_a=q3_K,type_b=f32,n_mats=256,n_used=8,b=0,m=6144,n=1,k=2048"


@pytest.mark.parametrize(("op", "params", "variant", "expected"), [
    ("MUL_MAT_ID", _Q3_DOWN, "default", True),
    ("MUL_MAT_ID", _Q3_DOWN + ",o=1", "default", True),  # extra params are fine
    ("MUL_MAT_ID", _Q3_DOWN.replace("q3_K", "q2_K"), "default", False),
    ("MUL_MAT_ID", _Q3_DOWN.replace("k=2048", "k=20480"), "default", False),  # no substrings
    ("MUL_MAT_ID", _Q3_DOWN.replace(",b=0", ""), "default", False),  # a required param absent
    ("MUL_MAT", _Q3_DOWN, "default", False),
    ("MUL_MAT_ID", _Q3_DOWN, "q3-k-mul-mv-id-nsg-4", False),  # another variant
])
def test_row_matching(op: str, params: str, variant: str, expected: bool) -> None:
    _, parsed = parse_params(params)
    assert RULES.row("routed_down_q3_K").matches(op, variant, parsed) is expected


def test_matching_compares_numbers_by_value_and_arrays_as_tuples() -> None:
    spec = RowSpec("x", "x", "E", "ADD", {"ne": (4096, 1, 1, 1), "eps": 1e-5})
    _, parsed = parse_params("type=f32,ne=[4096,1,1,1],eps=0.00001")
    assert spec.matches("ADD", "default", parsed)
    _, other = parse_params("type=f32,ne=[4096,1,1,2],eps=0.00001")
    assert not spec.matches("ADD", "default", other)


def test_a_new_gate_is_a_table_row() -> None:
    extra = GateSpec("route_cheap", "route under 10% of weighted sum", "guard",
                     (("route", 1),), (("weighted_sum_1tok", 1),), "<", "route too slow",
                     threshold=0.1)
    rules = Rules(gates=(*RULES.gates, extra))
    assert rules.gates[-1].default_threshold() == 0.1


# -- settings ---------------------------------------------------------------------------------


def test_settings_defaults_env_and_flag_overrides() -> None:
    s = load_settings({})
    assert (s.require_gates, s.kernel_sweep, s.sanity) == (False, False, True)
    assert s.get("GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP") == 1.08
    s = load_settings({"GLM52_PHASE_E_KERNEL_SWEEP": "2", "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP":
                       "1.5", "GLM52_PHASE_E_ROUTED_WHOLE_GRAPH_SANITY": "0"},
                      overrides={"GLM52_PHASE_E_REQUIRE_GATES": True})
    assert (s.require_gates, s.kernel_sweep, s.sanity) == (True, True, False)
    assert s.get("GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP") == 1.5
    assert s.source("GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP") == "env"
    assert s.source("GLM52_PHASE_E_REQUIRE_GATES") == "flag"
    assert load_settings({"GLM52_PHASE_E_REQUIRE_GATES": " "}).require_gates is False


@pytest.mark.parametrize(("name", "value", "message"), [
    ("GLM52_PHASE_E_REQUIRE_GATES", "yes",
     "invalid GLM52_PHASE_E_REQUIRE_GATES='yes': expected an integer (0 = off, non-zero = on)"),
    ("GLM52_PHASE_E_KERNEL_SWEEP", "1.5",
     "invalid GLM52_PHASE_E_KERNEL_SWEEP='1.5': expected an integer (0 = off, non-zero = on)"),
    ("GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP", "fast",
     "invalid GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP='fast': expected a positive number such as 1.08"),
    ("GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP", "-1",
     "invalid GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP='-1': expected a positive number such "
     "as 1.02"),
    ("GLM52_PHASE_E_Q2_WEIGHTED_REVIEW_SPEEDUP", "nan",
     "invalid GLM52_PHASE_E_Q2_WEIGHTED_REVIEW_SPEEDUP='nan': expected a positive number such "
     "as 1.02"),
])
def test_invalid_settings_name_the_variable_and_the_value(name: str, value: str,
                                                          message: str) -> None:
    with pytest.raises(SettingsError) as err:
        load_settings({name: value})
    assert str(err.value) == message
