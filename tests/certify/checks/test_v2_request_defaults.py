"""generation.request_defaults read and validated as mesh-llm v0.78.1+ does (mesh-llm-0.79.md
§1.5, §1.7): one case per rule, each asserting mesh-llm's code and path; hostile values give
findings, never a traceback or a hang."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.checks.v2_request_defaults import (
    parses_as_rust_i32,
    request_defaults_problems,
    rust_trim,
)
from tests.certify.v2_packages import build_v2, edit_manifest
from tests.conftest import certify_dir, codes
from tests.support.splits import SplitPackage

REV = "a" * 40
PROVENANCE = {"source_repo": "Qwen/Qwen3-8B", "revision": REV, "file": "README.md",
              "section": "Best Practices", "url": f"https://huggingface.co/Qwen/Qwen3-8B/blob/"
              f"{REV}/README.md"}
BASE = "generation.request_defaults"
P = f"{BASE}.profiles[chat]"


def defaults(**profile: Any) -> dict[str, Any]:
    body = {"provenance": copy.deepcopy(PROVENANCE), **profile}
    return {"selection": {"default": "chat"}, "profiles": {"chat": body}}


def problems(obj: Any) -> set[tuple[str, str]]:
    return {(code, path) for code, path, _ in request_defaults_problems(obj)}


def test_the_format_tests_direct_profile_is_accepted() -> None:
    """mesh-llm's own format test: profile `direct`, reasoning off with budget 0; integer
    literals in float fields as the 19 reviewed input files write them."""
    obj = {"selection": {"default": "direct", "reasoning_disabled": "direct"},
           "profiles": {"direct": {"temperature": 1, "top_p": 1, "top_k": 20, "min_p": 0,
                                   "presence_penalty": 0, "reasoning": {"enabled": "off",
                                                                        "budget": 0},
                                   "provenance": PROVENANCE}}}
    assert request_defaults_problems(obj) == []


def test_every_field_at_a_valid_value_is_accepted() -> None:
    obj = defaults(
        max_tokens=4096, stop=["</s>"], temperature=0.6, top_p=0.95, top_k=0, min_p=0.0,
        typical_p=1, top_nsigma=-1, presence_penalty=-2, frequency_penalty=2, seed=4294967295,
        logit_bias={"+5": 100, "007": -100, "0": 0, "-0": 1.5}, repeat_penalty=1e9,
        repeat_last_n=-1, dynatemp_range=0, dynatemp_exponent=1, mirostat_mode=2,
        mirostat_entropy=5.0, mirostat_learning_rate=0.1, samplers=["penalties", "typ_p", "temp"],
        sampler_sequence="e d s\tk y p m x t", ignore_eos=False,
        dry={"multiplier": 0, "base": 1.75, "allowed_length": 0, "penalty_last_n": -1,
             "sequence_breakers": ["\n", "x" * 15]},
        xtc={"probability": 0, "threshold": 1},
        reasoning={"enabled": "auto", "format": "deepseek-legacy", "budget": "unrestricted"})
    obj["selection"].update(reasoning_enabled="chat", reasoning_disabled="chat")
    assert request_defaults_problems(obj) == []


def test_upper_case_provenance_revision_is_accepted() -> None:
    upper = "ABCDEF0123456789ABCDEF0123456789ABCDEF01"
    obj = defaults()
    obj["profiles"]["chat"]["provenance"].update(
        revision=f"  {upper} ", url=f"https://hf.co/x?revision={upper}&y=1")
    assert request_defaults_problems(obj) == []


INVALID = "invalid_generation_value"
RULES: list[tuple[dict[str, Any], tuple[str, str]]] = [
    ({"max_tokens": 0}, (INVALID, f"{P}.max_tokens")),
    ({"stop": ["ok", " \u3000"]}, ("missing_value", f"{P}.stop[1]")),
    ({"temperature": 100.5}, (INVALID, f"{P}.temperature")),
    ({"temperature": -0.1}, (INVALID, f"{P}.temperature")),
    ({"presence_penalty": -2.5}, (INVALID, f"{P}.presence_penalty")),
    ({"frequency_penalty": 2.01}, (INVALID, f"{P}.frequency_penalty")),
    ({"top_nsigma": -1.5}, (INVALID, f"{P}.top_nsigma")),
    ({"dynatemp_range": -1}, (INVALID, f"{P}.dynatemp_range")),
    ({"dynatemp_exponent": -0.5}, (INVALID, f"{P}.dynatemp_exponent")),
    ({"top_p": 1.01}, (INVALID, f"{P}.top_p")),
    ({"min_p": -0.01}, (INVALID, f"{P}.min_p")),
    ({"typical_p": 2}, (INVALID, f"{P}.typical_p")),
    ({"repeat_penalty": 0}, (INVALID, f"{P}.repeat_penalty")),
    ({"top_k": -1}, (INVALID, f"{P}.top_k")),
    ({"repeat_last_n": -2}, (INVALID, f"{P}.repeat_last_n")),
    ({"seed": 4294967296}, (INVALID, f"{P}.seed")),
    ({"logit_bias": {" 5": 1}}, (INVALID, f"{P}.logit_bias[ 5]")),
    ({"logit_bias": {"-1": 1}}, (INVALID, f"{P}.logit_bias[-1]")),
    ({"logit_bias": {"2147483648": 1}}, (INVALID, f"{P}.logit_bias[2147483648]")),
    ({"logit_bias": {"5_0": 1}}, (INVALID, f"{P}.logit_bias[5_0]")),
    ({"logit_bias": {"\u0665": 1}}, (INVALID, f"{P}.logit_bias[\u0665]")),  # Arabic-Indic 5
    ({"logit_bias": {"+": 1}}, (INVALID, f"{P}.logit_bias[+]")),
    ({"logit_bias": {"5": 100.5}}, (INVALID, f"{P}.logit_bias[5]")),
    ({"mirostat_mode": 3}, (INVALID, f"{P}.mirostat_mode")),
    ({"mirostat_entropy": 0}, (INVALID, f"{P}.mirostat_entropy")),
    ({"mirostat_learning_rate": -1}, (INVALID, f"{P}.mirostat_learning_rate")),
    ({"samplers": ["top_k", "greedy"]}, (INVALID, f"{P}.samplers[1]")),
    ({"sampler_sequence": "kpq"}, (INVALID, f"{P}.sampler_sequence")),
    ({"sampler_sequence": "  "}, ("missing_value", f"{P}.sampler_sequence")),
    ({"dry": {"multiplier": -0.1}}, (INVALID, f"{P}.dry")),
    ({"dry": {"base": 0}}, (INVALID, f"{P}.dry")),
    ({"dry": {"allowed_length": -1}}, (INVALID, f"{P}.dry")),
    ({"dry": {"penalty_last_n": -2}}, (INVALID, f"{P}.dry")),
    ({"dry": {"sequence_breakers": [""]}}, (INVALID, f"{P}.dry.sequence_breakers[0]")),
    ({"dry": {"sequence_breakers": ["\u00e9" * 8]}},  # 16 UTF-8 bytes, 8 characters
     (INVALID, f"{P}.dry.sequence_breakers[0]")),
    ({"xtc": {"probability": 1.5}}, (INVALID, f"{P}.xtc.probability")),
    ({"xtc": {"threshold": -0.5}}, (INVALID, f"{P}.xtc.threshold")),
]


@pytest.mark.parametrize(("profile", "expected"), RULES,
                         ids=[f"{k}-{i}" for i, (p, _) in enumerate(RULES) for k in list(p)[:1]])
def test_each_profile_rule_gives_mesh_llms_code_at_its_path(
        profile: dict[str, Any], expected: tuple[str, str]) -> None:
    assert problems(defaults(**profile)) == {expected}


def test_a_negative_temperature_raises_two_issues_as_mesh_llm_does() -> None:
    found = [(c, m) for c, p, m in request_defaults_problems(defaults(temperature=-1))
             if p == f"{P}.temperature"]
    assert [m for _, m in found] == ["value must be within 0..=100",
                                     "temperature must be non-negative"]


def test_a_blank_sampler_reports_both_issues() -> None:
    assert problems(defaults(samplers=[""])) == {("missing_value", f"{P}.samplers[0]"),
                                                 (INVALID, f"{P}.samplers[0]")}


@pytest.mark.parametrize(("field", "value", "code"), [
    ("source_repo", " ", "missing_value"), ("file", "", "missing_value"),
    ("section", "\t", "missing_value"), ("url", "ftp://x/" + REV, INVALID),
    ("url", "https://hf.co/x/" + REV + "README.md", INVALID),  # no segment equals it
    ("revision", "a" * 39, INVALID), ("revision", "g" * 40, INVALID),
])
def test_provenance_rules(field: str, value: str, code: str) -> None:
    obj = defaults()
    obj["profiles"]["chat"]["provenance"][field] = value
    assert (code, f"{P}.provenance.{field}") in problems(obj)


@pytest.mark.parametrize(("obj", "expected"), [
    ({"selection": {"default": "chat"}, "profiles": {}}, ("missing_value", f"{BASE}.profiles")),
    ({"selection": {"default": " "}, "profiles": {"chat": {"provenance": PROVENANCE}}},
     ("missing_value", f"{BASE}.selection.default")),
    ({"selection": {"default": "chat", "reasoning_enabled": "think"},
      "profiles": {"chat": {"provenance": PROVENANCE}}},
     (INVALID, f"{BASE}.selection.reasoning_enabled")),
    ({"selection": {"default": "chat", "reasoning_disabled": ""},
      "profiles": {"chat": {"provenance": PROVENANCE}}},
     ("missing_value", f"{BASE}.selection.reasoning_disabled")),
    ({"selection": {"default": "my chat"}, "profiles": {"my chat": {"provenance": PROVENANCE}}},
     ("invalid_identifier", f"{BASE}.profiles[my chat]")),
])
def test_request_defaults_rules(obj: dict[str, Any], expected: tuple[str, str]) -> None:
    assert expected in problems(obj)


def test_with_no_profiles_the_default_also_names_an_undeclared_one() -> None:
    assert problems({"selection": {"default": "chat"}, "profiles": {}}) == {
        ("missing_value", f"{BASE}.profiles"), (INVALID, f"{BASE}.selection.default")}


SHAPES: list[tuple[Any, tuple[str, str]]] = [
    ({"max_tokens": 8.0}, (INVALID, f"{P}.max_tokens")),  # integer fields refuse floats
    ({"top_k": 20.0}, (INVALID, f"{P}.top_k")),
    ({"top_k": 2**31}, (INVALID, f"{P}.top_k")),  # beyond i32
    ({"max_tokens": 2**32}, (INVALID, f"{P}.max_tokens")),  # beyond u32
    ({"seed": -1}, (INVALID, f"{P}.seed")),  # u64
    ({"seed": 2**64}, (INVALID, f"{P}.seed")),
    ({"temperature": "0.7"}, (INVALID, f"{P}.temperature")),
    ({"temperature": True}, (INVALID, f"{P}.temperature")),
    ({"ignore_eos": 1}, (INVALID, f"{P}.ignore_eos")),
    ({"stop": "</s>"}, (INVALID, f"{P}.stop")),
    ({"stop": [None]}, (INVALID, f"{P}.stop[0]")),
    ({"logit_bias": {"5": None}}, (INVALID, f"{P}.logit_bias[5]")),
    ({"colour": "red"}, ("unknown_manifest_field", f"{P}.colour")),
    ({"dry": {"base": 1, "extra": 1}}, ("unknown_manifest_field", f"{P}.dry.extra")),
    ({"xtc": {"p": 1}}, ("unknown_manifest_field", f"{P}.xtc.p")),
    ({"reasoning": {"enabled": "yes"}}, (INVALID, f"{P}.reasoning.enabled")),
    ({"reasoning": {"format": "deepseek_legacy"}}, (INVALID, f"{P}.reasoning.format")),
    ({"reasoning": {"budget": "huge"}}, (INVALID, f"{P}.reasoning.budget")),
    ({"reasoning": {"budget": -1}}, (INVALID, f"{P}.reasoning.budget")),
    ({"reasoning": {"budget": 1.0}}, (INVALID, f"{P}.reasoning.budget")),
    ({"reasoning": {"budget": 2**32}}, (INVALID, f"{P}.reasoning.budget")),
    ({"reasoning": {"effort": "low"}}, ("unknown_manifest_field", f"{P}.reasoning.effort")),
]


@pytest.mark.parametrize(("profile", "expected"), SHAPES)
def test_what_serde_refuses_at_parse_is_a_finding(profile: dict[str, Any],
                                                  expected: tuple[str, str]) -> None:
    assert problems(defaults(**profile)) == {expected}


@pytest.mark.parametrize("budget", [0, 4294967295, "auto", "low", "medium", "high"])
def test_the_untagged_budget_takes_a_token_count_or_a_level(budget: Any) -> None:
    assert problems(defaults(reasoning={"budget": budget})) == set()


def test_null_is_absent_for_options_and_an_error_for_required_collections() -> None:
    """mesh-llm-0.79.md §1.1: a null Option field is absent; profiles/selection/provenance are
    not Options."""
    assert problems(defaults(temperature=None, stop=None, dry=None, reasoning=None)) == set()
    obj = defaults()
    obj["selection"]["reasoning_enabled"] = None
    assert problems(obj) == set()
    assert problems({"selection": {"default": "chat"}, "profiles": None}) == {
        ("missing_value", f"{BASE}.profiles")}
    assert ("missing_value", f"{BASE}.selection") in problems({"selection": None,
                                                               "profiles": {}})
    obj = defaults()
    obj["profiles"]["chat"]["provenance"] = None
    assert problems(obj) == {("missing_value", f"{P}.provenance")}
    obj = defaults()
    del obj["profiles"]["chat"]["provenance"]["url"]
    assert problems(obj) == {("missing_value", f"{P}.provenance.url")}


@pytest.mark.parametrize("obj", [None, [], "x", 3, {"selection": [], "profiles": []},
                                 {"selection": {"default": 5}, "profiles": {"chat": []}}])
def test_any_json_shape_gives_findings_not_a_traceback(obj: Any) -> None:
    assert request_defaults_problems(obj)


def test_hostile_values_give_findings_without_hanging() -> None:
    obj = defaults(temperature=float("nan"), top_p=float("inf"), min_p=10**400,
                   logit_bias={"9" * 10_000: 1, "0" * 10_000 + "5": 1},
                   sampler_sequence="k" * 1_000_000 + "?")
    found = request_defaults_problems(obj)
    by_path = {path: code for code, path, _ in found}
    assert by_path[f"{P}.temperature"] == by_path[f"{P}.top_p"] == INVALID
    assert by_path[f"{P}.min_p"] == by_path[f"{P}.sampler_sequence"] == INVALID
    long_keys = [p for p in by_path if ".logit_bias[" in p]
    assert len(long_keys) == 1 and len(long_keys[0]) < 200  # 0...05 parses as 5; key cut short
    assert all(len(message) < 300 for _, _, message in found)


@pytest.mark.parametrize(("text", "value"), [
    ("5", 5), ("+5", 5), ("007", 7), ("-0", 0), ("-5", -5), ("2147483647", 2147483647),
    ("-2147483648", -2147483648), ("0" * 50 + "1", 1), ("2147483648", None), (" 5", None),
    ("5 ", None), ("", None), ("+", None), ("-", None), ("+-5", None), ("1_0", None),
    ("\u0665", None), ("9" * 10_000, None)])
def test_logit_bias_keys_parse_as_rust_i32(text: str, value: int | None) -> None:
    assert parses_as_rust_i32(text) == value


def test_trim_is_rusts_not_pythons() -> None:
    """char::is_whitespace leaves U+001C..U+001F (Python's isspace strips them)."""
    assert rust_trim("\u3000 x \x85") == "x"
    assert rust_trim("\x1cx") == "\x1cx"


# --- in a package -------------------------------------------------------------------------
@pytest.fixture
def v2(tmp_path: Path) -> SplitPackage:
    return build_v2(tmp_path)


def test_a_package_with_request_defaults_passes(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(generation={"request_defaults": defaults(
        temperature=0.7, min_p=0, reasoning={"enabled": "off", "budget": 0})}))
    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    assert "unreleased_manifest_extension" not in codes(report)


def test_a_bad_profile_in_a_package_names_its_json_path(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(generation={"request_defaults": defaults(top_p=2)}))
    report = certify_dir(v2.root)
    [found] = [f for f in report.findings if f.code == INVALID]
    assert found.path == "model-package.json"
    assert found.message.startswith(f"{P}.top_p: ") and found.severity == "error"
    assert report.status == "failed"
