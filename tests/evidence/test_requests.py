"""The evidence commands' option rules, asked directly (no CLI): each returns what the command
will do or raises OptionError naming the option, as the usage error shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.core.usage import OptionError
from meshcert.evidence.requests import (
    DecisionsInput,
    GateRequest,
    IngestRequest,
    Judging,
    RunOptions,
    check_label,
    decisions_input,
    run_plan_of,
)
from meshcert.evidence.run import PlanError


@pytest.mark.parametrize("label", ["", "   ", "\t"])
def test_a_blank_label_is_refused_naming_the_option(label: str) -> None:
    with pytest.raises(OptionError) as caught:
        check_label(label)
    assert (caught.value.message, caught.value.option) == ("must not be blank", "--label")
    with pytest.raises(OptionError):
        IngestRequest((Path("a.log"),), label=label)


def test_no_label_or_a_real_one_is_kept() -> None:
    assert check_label(None) is None
    assert IngestRequest((Path("a.log"),), label=" q4 ").label == " q4 "


def test_decisions_come_from_the_option_or_its_deprecated_alias() -> None:
    assert decisions_input(None, None) == DecisionsInput(None)
    assert decisions_input(Path("d.toml"), None) == DecisionsInput(Path("d.toml"))
    assert decisions_input(None, Path("d.toml")) == DecisionsInput(Path("d.toml"),
                                                                   via_deprecated_alias=True)


def test_decisions_and_its_alias_together_are_refused() -> None:
    with pytest.raises(OptionError) as caught:
        decisions_input(Path("a.toml"), Path("b.toml"))
    assert caught.value.option == "--catalog"
    assert caught.value.message == "give --decisions only (--catalog is its deprecated alias)"


def test_gate_judges_by_the_defaults_unless_told() -> None:
    request = GateRequest((Path("a.log"),))
    assert request.judging == Judging(require_gates=False, phase_e=False, backend=None,
                                      decisions_file=None)


def test_run_options_become_the_interleaved_plan() -> None:
    plan = run_plan_of(RunOptions(["bench", "-p", "512"], env=["b:GGML_X=1", "a:GGML_X=0"],
                                  checks=["bench --check 'a b'"], repeats=2, stream="stdout"))
    assert [v.name for v in plan.variants] == ["b", "a"]
    assert plan.checks == (("bench", "--check", "a b"),)
    assert (plan.repeats, plan.stream) == (2, "stdout")
    assert [(r.variant.name, r.repeat) for r in plan.order() if r.role == "timed"] == [
        ("b", 1), ("a", 1), ("b", 2), ("a", 2)]


@pytest.mark.parametrize(("options", "says"), [
    (RunOptions(["bench"], stream="both"), "stream must be one of"),
    (RunOptions(["bench"], checks=["bench 'unclosed"]), "--check: "),
    (RunOptions(["bench"], env=["GGML_X=1"]), "--env .GGML_X=1.: expected VARIANT:"),
])
def test_bad_run_options_are_plan_errors(options: RunOptions, says: str) -> None:
    with pytest.raises(PlanError, match=says):
        run_plan_of(options)
