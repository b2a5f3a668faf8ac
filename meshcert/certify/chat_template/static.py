"""Static audit of a chat template: jinja2's own parser, then a walk of the syntax tree.

Nothing here executes the template. What counts as dangerous (`chat_template_code_execution`):

- **dunder access**: an attribute, name, subscript key or string constant such as ``__class__``,
  ``__globals__``, ``__builtins__`` (``^__\\w+__$``) -- every known Jinja SSTI chain walks these;
- **``attr``/``getattr``**: the ``|attr`` filter (the CVE-2025-27516 sandbox bypass went through
  it) and ``attribute=`` arguments (``map``, ``selectattr``, ...) whose name is built at run time;
- **run-time-built subscript keys**: ``x[...]`` whose key is concatenated (``~``, ``+`` with a
  string), ``%``-formatted or made by ``format``/``join``/``replace``, which hides a dunder from
  a reader;
- **gadget globals**: ``self``, ``config``, ``request`` (no chat template has a use for them) and
  ``lipsum`` (random text; its ``__globals__`` is a classic chain) on any use. ``cycler``,
  ``joiner`` and ``namespace`` are Jinja's own helpers and real templates call them
  (``namespace`` is in most modern templates: Qwen, Llama 3, Gemma, ...), so only a use *other
  than a direct call* counts: ``namespace.__init__``, ``cycler|attr(...)``, passing the global
  around. Attributes of the object a call returned (``ns.found``) are ordinary template state;
- **``import``/``from``/``include``/``extends``**: a chat template is one self-contained string;
- **process/code execution names**: ``os``, ``popen``, ``system``, ``subprocess``, ``eval``,
  ``exec``, ``__import__``, ... as a global name, or as an attribute reached from a gadget or a
  non-variable root (a name the template assigns itself, like ``ns.system``, is its own data);
- **unbounded loops**: ``range`` with a constant bound over 10,000 (or nested constant ranges
  multiplying past 1,000,000), and a macro that calls itself unconditionally. Loops over the
  input (messages, tools) are bounded by the input; the render time limit covers the rest;
- **invisible and bidi code points** anywhere in the text (see `codepoints`).

A *hidden instruction* (`chat_template_hidden_instruction`, a warning) is literal text emitted
only inside a branch whose test looks at what a message *says*: ``'x' in message.content``,
``message['content'] == '...'``, ``content.startswith('...')`` (also through a variable set from
the content). Shape tests (``is string``, ``is none``, ``is defined``, truthiness, ``length``)
are not content-keyed. Literal text counts when it has a letter or digit, is not emitted
anywhere outside such branches (structural markup such as ``<|im_start|>`` is), and is not the
test's own keyword echoed back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from jinja2 import nodes
from jinja2.exceptions import TemplateSyntaxError

from meshcert.certify.chat_template.codepoints import hidden_codepoints
from meshcert.certify.chat_template.issues import (
    CODE_EXECUTION,
    HIDDEN_INSTRUCTION,
    RENDER_ERROR,
    TemplateIssue,
)
from meshcert.certify.chat_template.sandbox import make_environment

__all__ = ["CODE_EXECUTION", "HIDDEN_INSTRUCTION", "RENDER_ERROR", "TemplateIssue",
           "dangerous_constructs", "hidden_instructions", "parse"]

DUNDER = re.compile(r"^__\w+__$")
ALWAYS_GADGETS = frozenset({"self", "config", "request", "lipsum"})
CALLABLE_GADGETS = frozenset({"cycler", "joiner", "namespace"})
EXEC_NAMES = frozenset({
    "os", "popen", "system", "subprocess", "eval", "exec", "__import__", "getattr", "setattr",
    "delattr", "globals", "locals", "vars", "builtins", "importlib", "sys", "compile", "open",
    "breakpoint",
})
EXEC_ATTRS = frozenset({
    "os", "popen", "system", "subprocess", "eval", "exec", "builtins", "importlib", "sys",
    "modules", "import_module", "spawn", "fork", "execv", "execve", "f_globals", "f_locals",
    "f_back", "gi_frame", "cr_frame", "tb_frame", "func_globals", "mro",
})
ATTRIBUTE_FILTERS = frozenset({"map", "selectattr", "rejectattr", "sort", "groupby", "sum",
                               "unique", "min", "max"})
BUILD_FILTERS = frozenset({"format", "join", "replace", "reverse", "string"})
BUILD_METHODS = frozenset({"format", "join", "replace", "format_map"})
MATCH_METHODS = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex",
                           "count", "split", "__contains__"})
MATCH_TESTS = frozenset({"in", "eq", "equalto", "==", "ne", "!=", "sameas"})
MAX_CONST_RANGE = 10_000
MAX_NESTED_RANGE = 1_000_000


def parse(source: str) -> nodes.Template | TemplateIssue:
    """The template's syntax tree, or a render-error issue naming the syntax error."""
    try:
        return make_environment().parse(source)
    except TemplateSyntaxError as exc:
        return TemplateIssue(RENDER_ERROR, f"does not parse: {exc.message}", exc.lineno)
    except RecursionError:
        return TemplateIssue(RENDER_ERROR, "is nested too deeply to parse")
    except Exception as exc:  # noqa: BLE001 - the parser can fail in other ways on junk
        return TemplateIssue(RENDER_ERROR, f"does not parse: {type(exc).__name__}: {exc}")


def dangerous_constructs(source: str, tree: nodes.Template) -> list[TemplateIssue]:
    """Every construct listed in the module docstring, one issue per occurrence."""
    issues = [TemplateIssue(CODE_EXECUTION, f"contains {cp.describe()}, which hides what the "
                            "template does from a reader", cp.line)
              for cp in hidden_codepoints(source)]
    walker = _DangerWalker(_assigned_names(tree))
    walker.visit(tree)
    issues += walker.issues
    issues += _self_recursive_macros(tree)
    return issues


def _assigned_names(tree: nodes.Template) -> frozenset[str]:
    """Names the template binds itself (set, for targets, macro parameters, with, import)."""
    names = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    names |= {m.name for m in tree.find_all(nodes.Macro)}
    return frozenset(names)


def _chain_root(node: nodes.Expr) -> nodes.Expr:
    while isinstance(node, (nodes.Getattr, nodes.Getitem, nodes.Call, nodes.Filter)):
        inner = node.node
        if inner is None:
            break
        node = inner
    return node


def _is_str_const(node: nodes.Node | None) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, str)


def _built_string(node: nodes.Node | None) -> bool:
    """Is `node` a string assembled at run time (concatenated, formatted, joined, replaced)?"""
    if isinstance(node, nodes.Concat):
        return True
    if isinstance(node, nodes.Add):
        return any(_is_str_const(side) or _built_string(side) for side in (node.left, node.right))
    if isinstance(node, nodes.Mod):
        return _is_str_const(node.left)
    if isinstance(node, nodes.Filter):
        return node.name in BUILD_FILTERS
    if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
        return node.node.attr in BUILD_METHODS
    if isinstance(node, nodes.CondExpr):
        return _built_string(node.expr1) or _built_string(node.expr2)
    return False


CONST_CAP = 10 ** 18  # constant arithmetic is clamped here: a bound, not an exact value


def _const_int(node: nodes.Node | None) -> int | None:
    """The value of a constant integer expression (literals and + - * ** //, clamped to
    +-CONST_CAP), else None."""
    value = _const_int_raw(node)
    return None if value is None else max(-CONST_CAP, min(CONST_CAP, value))


def _const_int_raw(node: nodes.Node | None) -> int | None:
    if isinstance(node, nodes.Const) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, nodes.BinExpr):
        left, right = _const_int(node.left), _const_int(node.right)
        if left is None or right is None:
            return None
        if isinstance(node, nodes.Pow):
            if abs(left) <= 1 or right < 0:
                return int(left ** right) if right >= 0 else 0
            return CONST_CAP if right > 64 or abs(left) > 1 << 16 else int(left ** right)
        ops = {nodes.Add: lambda: left + right, nodes.Sub: lambda: left - right,
               nodes.Mul: lambda: left * right,
               nodes.FloorDiv: lambda: left // right if right else None}
        for kind, compute in ops.items():
            if isinstance(node, kind):
                return compute()
    return None


def _range_bound(node: nodes.Node) -> int | None:
    """The constant length of ``range(...)`` when `node` is such a call, else None."""
    if not (isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name)
            and node.node.name == "range" and node.args):
        return None
    values = [_const_int(arg) for arg in node.args]
    if any(v is None for v in values):
        return None
    ints = [v for v in values if v is not None]
    start, stop = (0, ints[0]) if len(ints) == 1 else (ints[0], ints[1])
    step = ints[2] if len(ints) > 2 and ints[2] else 1
    return max(0, (stop - start) // step) if step > 0 else max(0, (start - stop) // -step)


class _DangerWalker:
    def __init__(self, assigned: frozenset[str]) -> None:
        self.assigned = assigned
        self.issues: list[TemplateIssue] = []
        self._called: set[int] = set()  # ids of gadget Names that are the callee of a Call
        self._range_product = 1

    def flag(self, node: nodes.Node, what: str) -> None:
        self.issues.append(TemplateIssue(CODE_EXECUTION, what, getattr(node, "lineno", None)))

    def visit(self, node: nodes.Node) -> None:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is not None:
            method(node)
        if isinstance(node, nodes.For):
            self._visit_for(node)
            return
        for child in node.iter_child_nodes():
            self.visit(child)

    def _visit_for(self, node: nodes.For) -> None:
        bound = _range_bound(node.iter)
        outer = self._range_product
        if bound is not None:
            if bound > MAX_CONST_RANGE:
                self.flag(node, f"loops over range() of {bound} items (more than "
                          f"{MAX_CONST_RANGE}), a loop no conversation needs")
            elif outer * bound > MAX_NESTED_RANGE >= outer:
                self.flag(node, f"nests constant range() loops to {outer * bound} iterations "
                          f"(more than {MAX_NESTED_RANGE})")
            self._range_product = outer * max(bound, 1)
        for child in node.iter_child_nodes():
            self.visit(child)
        self._range_product = outer

    def visit_Getattr(self, node: nodes.Getattr) -> None:
        if node.attr.startswith("__"):
            self.flag(node, f"reads the attribute {node.attr!r} (a Python internal: the first "
                      "step of sandbox-escape chains)")
        elif node.attr in EXEC_ATTRS and not self._own_data(node):
            self.flag(node, f"reaches {node.attr!r}, a process or code execution name")

    def _own_data(self, node: nodes.Getattr) -> bool:
        root = _chain_root(node)
        return isinstance(root, nodes.Name) and root.name not in ALWAYS_GADGETS | \
            CALLABLE_GADGETS | EXEC_NAMES

    def visit_Getitem(self, node: nodes.Getitem) -> None:
        if _built_string(node.arg):
            self.flag(node, "subscripts with a key built at run time (concatenated, formatted, "
                      "joined or replaced), which hides the name it reads")

    def visit_Const(self, node: nodes.Const) -> None:
        if isinstance(node.value, str) and DUNDER.match(node.value):
            self.flag(node, f"names the Python internal {node.value!r} in a string")

    def visit_Name(self, node: nodes.Name) -> None:
        name = node.name
        if node.ctx != "load" or name in self.assigned:
            return
        if name.startswith("__"):
            self.flag(node, f"uses the Python internal name {name!r}")
        elif name in ALWAYS_GADGETS:
            self.flag(node, f"uses the global {name!r}, a known sandbox-escape gadget with no "
                      "use in a chat template")
        elif name in CALLABLE_GADGETS and id(node) not in self._called:
            self.flag(node, f"uses the Jinja global {name!r} other than by calling it "
                      f"({name}(...)), the way sandbox-escape chains reach Python internals")
        elif name in EXEC_NAMES:
            self.flag(node, f"uses {name!r}, a process or code execution name")

    def visit_Call(self, node: nodes.Call) -> None:
        if isinstance(node.node, nodes.Name) and node.node.name in CALLABLE_GADGETS:
            self._called.add(id(node.node))

    def visit_Filter(self, node: nodes.Filter) -> None:
        if node.name in ("attr", "getattr"):
            self.flag(node, f"uses the |{node.name} filter, which reads arbitrary attributes "
                      "(the route of the CVE-2025-27516 sandbox bypass)")
        if node.name in ATTRIBUTE_FILTERS:
            for kw in node.kwargs:
                if kw.key == "attribute" and not _is_str_const(kw.value):
                    self.flag(node, f"passes |{node.name} an attribute name computed at run "
                              "time")

    def visit_Import(self, node: nodes.Import) -> None:
        self.flag(node, "imports another template ({% import %}); a chat template must be "
                  "self-contained")

    def visit_FromImport(self, node: nodes.FromImport) -> None:
        self.flag(node, "imports from another template ({% from ... import %})")

    def visit_Include(self, node: nodes.Include) -> None:
        self.flag(node, "includes another template ({% include %}); a chat template must be "
                  "self-contained")

    def visit_Extends(self, node: nodes.Extends) -> None:
        self.flag(node, "extends another template ({% extends %})")


def _self_recursive_macros(tree: nodes.Template) -> Iterator[TemplateIssue]:
    """Macros that call themselves outside any if/for/conditional: recursion with no base."""
    for macro in tree.find_all(nodes.Macro):
        for call in _unconditional_calls(macro.body):
            if isinstance(call.node, nodes.Name) and call.node.name == macro.name:
                yield TemplateIssue(CODE_EXECUTION, f"macro {macro.name!r} calls itself "
                                    "unconditionally: the recursion never ends", call.lineno)
                break


def _unconditional_calls(body: list[nodes.Node]) -> Iterator[nodes.Call]:
    stack: list[nodes.Node] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (nodes.If, nodes.CondExpr, nodes.For, nodes.Macro, nodes.And,
                             nodes.Or)):
            continue
        if isinstance(node, nodes.Call):
            yield node
        stack.extend(node.iter_child_nodes())


# --- hidden instructions -------------------------------------------------------------------

def hidden_instructions(tree: nodes.Template) -> list[TemplateIssue]:
    """Literal text emitted only under content-keyed branches (see the module docstring)."""
    tainted = _content_names(tree)
    keyed: list[tuple[nodes.If, list[nodes.Node], set[str]]] = []
    for branch in tree.find_all(nodes.If):
        match = _content_keywords(branch.test, tainted)
        if match is not None:
            keywords, negated = match
            # the part that runs when the content matches: the else part of a negated test
            keyed.append((branch, list(branch.else_ if negated else branch.body), keywords))
    if not keyed:
        return []
    inside: set[int] = set()
    for _, parts, _ in keyed:
        for part in parts:
            inside.add(id(part))
            inside.update(id(n) for n in part.find_all(nodes.Node))
    structural = {text.strip() for node, text in _emitted_literals(tree)
                  if id(node) not in inside}
    issues: list[TemplateIssue] = []
    for branch, parts, keywords in keyed:
        for part in parts:
            for node, text in _emitted_literals(part):
                clean = text.strip()
                if (any(c.isalnum() for c in clean) and clean not in structural
                        and clean not in keywords):
                    shown = clean if len(clean) <= 80 else clean[:77] + "..."
                    issues.append(TemplateIssue(
                        HIDDEN_INSTRUCTION, f"emits {shown!r} only when a message's content "
                        f"matches {sorted(keywords)} (the test on line {branch.lineno}): text "
                        "the user never wrote, injected on a trigger", node.lineno))
    return issues


def _is_content_ref(node: nodes.Node, tainted: frozenset[str]) -> bool:
    """Does `node` read a message's content (directly or through a variable set from it)?"""
    for sub in (node, *node.find_all(nodes.Node)):
        if isinstance(sub, nodes.Getattr) and sub.attr == "content":
            return True
        if isinstance(sub, nodes.Getitem) and isinstance(sub.arg, nodes.Const) \
                and sub.arg.value == "content":
            return True
        if isinstance(sub, nodes.Name) and sub.ctx == "load" and sub.name in tainted:
            return True
    return False


def _content_names(tree: nodes.Template) -> frozenset[str]:
    """Names assigned (``{% set x = ... %}``) from an expression that reads a content."""
    names: set[str] = set()
    for _ in range(3):  # a short fixed point: set a = m.content; set b = a|trim
        frozen = frozenset(names)
        for assign in tree.find_all(nodes.Assign):
            if isinstance(assign.target, nodes.Name) and _is_content_ref(assign.node, frozen):
                names.add(assign.target.name)
    return frozenset(names)


def _content_keywords(test: nodes.Node, tainted: frozenset[str]
                      ) -> tuple[set[str], bool] | None:
    """(the string constants a test matches message content against, whether the match is
    negated), or None when the test does not look at what a message says."""
    found: set[str] | None = None
    negated = isinstance(test, nodes.Not)
    for node in (test, *test.find_all(nodes.Node)):
        operands: list[nodes.Node] = []
        if isinstance(node, nodes.Compare) and all(
                op.op in ("in", "notin", "eq", "ne") for op in node.ops):
            operands = [node.expr, *(op.expr for op in node.ops)]
            negated = negated or any(op.op in ("notin", "ne") for op in node.ops)
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) \
                and node.node.attr in MATCH_METHODS:
            operands = [node.node.node, *node.args]
        elif isinstance(node, nodes.Test) and node.name in MATCH_TESTS:
            operands = [node.node, *node.args]
        if len(operands) < 2 or not any(_is_content_ref(o, tainted) for o in operands):
            continue
        consts = {c.value for o in operands
                  for c in ([o] if not isinstance(o, (nodes.List, nodes.Tuple)) else o.items)
                  if isinstance(c, nodes.Const) and isinstance(c.value, str)}
        if not consts:
            continue
        found = (found or set()) | consts
    return None if found is None else (found, negated)


def _emitted_literals(root: nodes.Node) -> Iterator[tuple[nodes.Node, str]]:
    """(node, text) of literal text a subtree writes: template data and string constants
    directly inside ``{{ ... }}`` (including concatenations of them)."""
    outputs = [root] if isinstance(root, nodes.Output) else []
    for output in [*outputs, *root.find_all(nodes.Output)]:
        for item in output.nodes:
            if isinstance(item, nodes.TemplateData):
                yield item, item.data
            else:
                yield from _literal_parts(item)


def _literal_parts(node: nodes.Node) -> Iterator[tuple[nodes.Node, str]]:
    if _is_str_const(node):
        assert isinstance(node, nodes.Const)
        yield node, node.value
    elif isinstance(node, (nodes.Add, nodes.Concat, nodes.CondExpr)):
        for child in node.iter_child_nodes():
            yield from _literal_parts(child)
