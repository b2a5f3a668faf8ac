"""The chat-template auditor on its own: one hostile template per rule, real templates clean,
the render really sandboxed, and random templates never crash it or outlive its time limit."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meshcert.certify.chat_template import (
    CODE_EXECUTION,
    HIDDEN_INSTRUCTION,
    RENDER_ERROR,
    RenderLimits,
    audit_template,
)
from meshcert.certify.chat_template.audit import judge_render
from meshcert.certify.chat_template.conversations import CONVERSATIONS
from meshcert.certify.chat_template.render import render_in_sandbox
from tests.certify.chat_template.corpus import HOSTILE, LOOP


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_template_gets_its_code(name: str) -> None:
    template, code = HOSTILE[name]
    issues = audit_template(template)
    assert code in {i.code for i in issues}, issues
    if code == HIDDEN_INSTRUCTION:  # the trigger branch is the only problem
        assert {i.code for i in issues} == {HIDDEN_INSTRUCTION}, issues


def test_a_template_that_never_finishes_is_a_render_error() -> None:
    # bounded by the input, so no static rule applies: only the time limit stops it
    template = LOOP + ("{% for i in range(messages|length * 30000) %}"
                       "{% for j in range(messages|length * 30000) %}{% endfor %}{% endfor %}")
    issues = audit_template(template, RenderLimits(timeout_seconds=2))
    assert [(i.code, i.message) for i in issues] == [
        (RENDER_ERROR, "did not finish rendering within 2 s")]


def test_a_one_call_memory_bomb_is_contained_by_the_worker() -> None:
    # jinja2 constant-folds the filter while compiling: the worker's memory cap stops it
    issues = audit_template(LOOP + "{{ 'x'|center(3000000000) }}")
    assert [i.code for i in issues] == [RENDER_ERROR]
    assert "MemoryError" in issues[0].message or "memory" in issues[0].message


def test_the_render_is_sandboxed_and_executes_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = ("{% for c in ().__class__.__base__.__subclasses__() %}"
               "{% if c.__name__ == '_wrap_close' %}"
               f"{{{{ c.__init__.__globals__['popen']('touch {marker}').read() }}}}"
               "{% endif %}{% endfor %}" + LOOP)
    issues = audit_template(payload)
    assert CODE_EXECUTION in {i.code for i in issues}
    # and rendered anyway (the auditor skips rendering flagged templates): the sandbox refuses
    outcome = render_in_sandbox(payload)
    assert outcome.failure is None
    assert [r["status"] for r in outcome.results] == ["blocked"] * len(CONVERSATIONS)
    assert all("__class__" in r["error"] for r in outcome.results)
    assert {i.code for i in judge_render(outcome, CONVERSATIONS)} == {CODE_EXECUTION}
    assert not marker.exists()


# Shapes real templates use, which must stay clean: namespace() state, loop controls,
# raise_exception on unsupported roles, strftime_now, tojson, generation blocks, content
# checks that only strip reasoning, shape tests on content.
REAL_SHAPES = {
    "namespace_state": "{% set ns = namespace(system=false, idx=0) %}{% for m in messages %}"
                       "{% if m.role == 'system' %}{% set ns.system = true %}{% endif %}"
                       "{{ m.content }}{% endfor %}{{ ns.system }}",
    "loop_controls": "{% for m in messages %}{% if m.role == 'tool' %}{% continue %}{% endif %}"
                     "{{ m.content }}{% endfor %}",
    "raise_on_bad_role": "{% for m in messages %}{% if m.role not in ['system', 'user', "
                         "'assistant', 'tool'] %}{{ raise_exception('bad role') }}{% endif %}"
                         "{{ m.content }}{% endfor %}",
    "strftime_and_tojson": "Today is {{ strftime_now('%d %b %Y') }}.{% if tools %}"
                           "{{ tools|tojson(indent=2) }}{% endif %}" + LOOP,
    "generation_block": "{% for m in messages %}{% if m.role == 'assistant' %}"
                        "{% generation %}{{ m.content }}{% endgeneration %}{% else %}"
                        "{{ m.content }}{% endif %}{% endfor %}",
    "reasoning_strip": "{% for m in messages %}{% set content = m.content %}"
                       "{% if '</think>' in content %}{% set content = "
                       "content.split('</think>')[-1] %}{% endif %}{{ content }}{% endfor %}",
    "content_shape_tests": "{% for m in messages %}{% if m.content is string %}"
                           "{{ m.content }}{% elif m.content is none %}(empty){% endif %}"
                           "{% endfor %}",
    # Firefunction v2 concatenates `functions` and `datetime`, which llama.cpp passes for it
    "caller_supplied_variables": "{{ 'Functions: ' + functions + '. Today is ' + datetime }}"
                                 + LOOP,
    "reversed_scan": "{% for m in messages[::-1] %}{% set i = (messages|length - 1) - "
                     "loop.index0 %}{% endfor %}" + LOOP,
}


@pytest.mark.parametrize("name", sorted(REAL_SHAPES))
def test_real_template_shapes_audit_clean(name: str) -> None:
    assert audit_template(REAL_SHAPES[name]) == []


@pytest.mark.parametrize("name", ["CHATML_CHAT_TEMPLATE", "LLAMA3_INSTRUCT_CHAT_TEMPLATE",
                                  "MISTRAL_INSTRUCT_CHAT_TEMPLATE",
                                  "MIXTRAL_INSTRUCT_CHAT_TEMPLATE"])
def test_llama_cpp_pythons_own_templates_audit_clean(name: str) -> None:
    formats = pytest.importorskip("llama_cpp.llama_chat_format")
    assert audit_template(getattr(formats, name)) == []


FRAGMENTS = ["{{ ", " }}", "{% ", " %}", "{# ", " #}", "for m in messages", "endfor", "if ",
             "endif", "m.content", "m['role']", "~", "|", "trim", "tojson", "(", ")", "[", "]",
             "'x'", "1", "__class__", "namespace(a=1)", "raise_exception('no')", "loop.index",
             "set ns = ", "macro f()", "endmacro", "f()", "range(3)", "\u202e", "\n", " "]


@settings(max_examples=40, deadline=timedelta(seconds=30),
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200),
                 st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)))
def test_random_templates_never_crash_the_auditor(template: str) -> None:
    issues = audit_template(template, RenderLimits(timeout_seconds=3))
    assert all(i.code in (CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION) for i in issues)
    assert all(i.message for i in issues)


def test_the_codes_are_the_catalogued_contract() -> None:
    from meshcert.core.codes import CODES

    assert (CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION) == (
        "chat_template_code_execution", "chat_template_render_error",
        "chat_template_hidden_instruction")
    assert [CODES[c].severity for c in (CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION)] == [
        "error", "error", "warning"]


def test_a_tree_too_deep_to_walk_is_a_finding_not_a_crash(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    # a fault the parser leaves to the walker only near the interpreter's recursion limit
    def too_deep(source: str, tree: object) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("meshcert.certify.chat_template.audit.dangerous_constructs", too_deep)
    assert [(i.code, i.message) for i in audit_template(LOOP)] == [
        (RENDER_ERROR, "is nested too deeply to audit")]


# --- rendered with the context a node's renderer passes (issue 34, item 9) ------------------
# Shapes of Hub templates that read `tools`, `documents` and the special tokens; written by hand
# after the layouts named in the issue (an `additional_chat_templates/tool_use.jinja` lists the
# tools without a guard; transformers passes tools=None, documents=None without them).
NODE_CONTEXT_SHAPES = {
    "tools_tojson_unguarded": "{{ bos_token }}Tools: {{ tools | tojson }}\n" + LOOP
                              + "{% if add_generation_prompt %}assistant:{% endif %}",
    "tool_use_loops_over_tools": "{% for tool in tools %}- {{ tool.function.name }}: "
                                 "{{ tool.function.description }}\n{% endfor %}" + LOOP
                                 + "{{ eos_token }}",
    "documents_guarded": "{% if documents is not none %}{{ documents | tojson }}{% endif %}"
                         + LOOP,
    "tools_is_none_test": "{% if tools is none %}(no tools){% else %}{{ tools | length }}"
                          "{% endif %}" + LOOP,
}


@pytest.mark.parametrize("name", sorted(NODE_CONTEXT_SHAPES))
def test_templates_reading_tools_render_as_a_node_renders_them(name: str) -> None:
    """Before: `{{ tools | tojson }}` failed with "Object of type Undefined is not JSON
    serializable", because `tools` was not passed at all."""
    assert audit_template(NODE_CONTEXT_SHAPES[name]) == []


def test_the_first_context_is_the_one_transformers_passes_without_tools() -> None:
    outcome = render_in_sandbox("[{{ tools | tojson }}|{{ documents | tojson }}]" + LOOP)
    assert all(r["status"] == "ok" for r in outcome.results)
    plain = [r["output"] for r in outcome.results if r["name"] != "tool call"]
    assert plain and all(o.startswith("[null|null]") for o in plain)


def test_a_template_that_fails_with_every_real_context_stays_an_error() -> None:
    issues = audit_template("{{ tools.schema.name }}" + LOOP)
    assert [i.code for i in issues] == [RENDER_ERROR]
    message = issues[0].message
    assert "'None' has no attribute 'schema'" in message
    assert "and with a sample tool list" in message and "'list object'" in message


def test_a_template_without_tools_is_rendered_once_per_conversation() -> None:
    from meshcert.certify.chat_template.conversations import is_about_tools

    assert not is_about_tools(LOOP) and is_about_tools("{{ tools }}")
    assert [len(c.contexts(is_about_tools(LOOP))) for c in CONVERSATIONS] == [1, 1, 1]


def test_a_tool_list_of_a_megabyte_is_a_bounded_finding() -> None:
    """A tools list of a megabyte, listed by the template: the output limit stops it with a
    clear finding, no traceback, nothing unbounded."""
    from meshcert.certify.chat_template.conversations import WEATHER_TOOL, Conversation

    huge = [WEATHER_TOOL | {"function": {**WEATHER_TOOL["function"],
                                         "description": "x" * (1 << 20)}}]
    conversation = Conversation("megabyte tools", [{"role": "user", "content": "hi"}],
                                tools=huge)
    outcome = render_in_sandbox("{{ tools | tojson }}" + LOOP, conversations=(conversation,))
    issues = judge_render(outcome, (conversation,))
    assert [(i.code, i.message) for i in issues] == [
        (RENDER_ERROR, "renders too much: output grew past 262144 characters "
                       "(conversation megabyte tools)")]
