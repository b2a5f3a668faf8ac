"""--parity turns the tokens its llama.cpp workers generate into one "prompt i/N done" line per
prompt (meshcert.certify.split_parity.prompt_counter), while every token still advances the
bar. The whole run on a real model is in test_progress_phases.py."""

from __future__ import annotations

from meshcert.certify.split_parity import prompt_counter
from tests.core.test_progress import Recorder


def test_each_prompt_done_is_one_line_and_every_token_still_advances() -> None:
    recorder = Recorder()
    advance = prompt_counter(recorder, "source", prompts=3, tokens=4)
    for _ in range(4 * 3):
        advance(1)
    assert recorder.advanced == 12
    assert recorder.phases == [f"parity: source model, prompt {i}/3 done" for i in (1, 2, 3)]


def test_a_batch_of_tokens_that_spans_prompts_names_each_one() -> None:
    recorder = Recorder()
    advance = prompt_counter(recorder, "package", prompts=2, tokens=3)
    advance(5)
    advance(5)  # more than asked for: never "prompt 3/2"
    assert recorder.phases == ["parity: package model, prompt 1/2 done",
                               "parity: package model, prompt 2/2 done"]
