"""The one Jinja environment chat templates meet: jinja2's ImmutableSandboxedEnvironment.

Configured like the serving stacks that render GGUF chat templates (Hugging Face transformers'
chat-template renderer, which llama.cpp's minja follows): ``trim_blocks``/``lstrip_blocks``, the
``loopcontrols`` extension (``{% break %}``), a ``{% generation %}`` block that only marks text,
and the globals/filters real templates call (``raise_exception``, ``strftime_now``, ``tojson``).
On top of jinja2's sandbox it bounds the two operators that can allocate without limit in one C
call (``*`` on strings/lists and ``**``), so a one-line template cannot ask for gigabytes, and
refuses an unsafe attribute as soon as it is looked up (not only when the result is used).

This module imports only jinja2 and the standard library: the render worker
(``meshcert/certify/chat_template/worker.py``) runs it by file path in an isolated interpreter, and
the static auditor parses with the very same environment (parsing never executes a template).
"""

from __future__ import annotations

import datetime
import json
import operator
from collections.abc import Callable
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.exceptions import SecurityError, TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

from meshcert.core.errors import MeshcertError

MAX_SEQUENCE = 1 << 20  # longest string/list `*` may build (1 Mi items)
MAX_POWER_BITS = 4096  # largest integer `**` may build
FIXED_NOW = datetime.datetime(2024, 7, 26, 12, 0, 0)  # strftime_now: reproducible renders


class TemplateRefusal(TemplateError, MeshcertError):
    """The template called raise_exception: it refuses this conversation on purpose."""


class ResourceLimitError(SecurityError, MeshcertError):
    """An operation would build a value past the sandbox's size bounds."""


class GenerationBlock(Extension):
    """``{% generation %}...{% endgeneration %}`` (transformers marks assistant text with it):
    renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox whose ``*`` and ``**`` refuse to build huge values."""

    intercepted_binops = frozenset({"*", "**"})

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        """Refuse at once: jinja2 returns an Undefined that fails only when used, so a
        template could probe ``x['__class__']`` and print nothing; here the probe is seen."""
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} "
                            "object is unsafe.")

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int) \
                        and len(seq) * count > MAX_SEQUENCE:
                    raise ResourceLimitError(f"'*' would build a sequence of "
                                             f"{len(seq) * count} items")
            return operator.mul(left, right)
        if isinstance(left, int) and isinstance(right, int) and right > 0 \
                and abs(left) > 1 and right * max(abs(left), 2).bit_length() > MAX_POWER_BITS:
            raise ResourceLimitError(f"'**' would build an integer of about "
                                f"{right * abs(left).bit_length()} bits")
        return operator.pow(left, right)


def _raise_exception(message: Any) -> None:
    raise TemplateRefusal(str(message))


def _strftime_now(fmt: Any) -> str:
    return FIXED_NOW.strftime(str(fmt))


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


class ChanceRecord:
    """Whether a render drew on chance (jinja2's `random` filter): comparing two renders
    misses a random choice whenever both draws agree (1 in 6 for six items), so every draw
    is recorded and a render that made one is not reproducible, whatever the two outputs."""

    def __init__(self) -> None:
        self.draws = 0

    def random(self, _context: Any, value: Any) -> Any:
        import random

        self.draws += 1
        try:
            return random.choice(value)
        except IndexError:  # jinja2's filter gives Undefined for an empty sequence
            return ""


CHANCE = ChanceRecord()


@pass_context  # as jinja2's own random filter: the compiler never folds it into a constant
def _random_filter(context: Any, value: Any) -> Any:
    return CHANCE.random(context, value)


def make_environment() -> BoundedSandbox:
    """The sandboxed environment used to parse and (in the worker only) render templates."""
    env = BoundedSandbox(trim_blocks=True, lstrip_blocks=True,
                         extensions=[GenerationBlock, loopcontrols])
    globals_: dict[str, Callable[..., Any]] = {"raise_exception": _raise_exception,
                                                "strftime_now": _strftime_now}
    env.globals.update(globals_)
    env.filters["tojson"] = _tojson
    env.filters["random"] = _random_filter
    return env
