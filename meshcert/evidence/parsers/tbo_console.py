"""test-backend-ops console output: perf mode rows and test (correctness) mode results.

Perf:   `  NAME(params):      1704 runs -  1158.33 us/run - 117.44 MFLOP/run - 101.39 GFLOPS`
        (or `<x> kB/run - <y> GB/s`), `  NAME(params): not supported`.
Test:   `  NAME(params): OK`, `  NAME(params): [NAME] NMSE = 0.001234 > 0.000000100 FAIL`,
        `  N/M tests passed`, `  Backend <name>: OK|FAIL`, `K/K backends passed`, `OK|FAIL`.
Sections: `Testing N devices`, `Backend 1/3: Metal`, `  Device description: Apple M3 Max`.

Only the `  NAME(params): ` prefix is flushed early, so stderr lines (dispatch logs,
`ggml_test:` lines) can sit between a row's name and its result: a row whose result has not
arrived stays pending until a line with `N runs - X us/run ...` (perf) or ending in OK/FAIL
(test) completes it. `ggml_test:` text anywhere goes to the ggml_test parser. In a perf-mode
log the `Backend X: OK` / `K/K backends passed` lines carry no parity meaning and are only
counted (note `perf_mode_status_lines`); they become parity rows when the log is a test run.
Test-mode `not supported [...]` cases are skipped (note `test_not_supported`). Kernel names
(`kernel_*`) that stderr lines mention while a split row runs are kept in extra["kernels"].

Speed: one pass over the lines does only cheap prefix/substring tests and sets aside whole
perf rows, split-row numbers and `ggml_test` sample lines; each of those groups is then parsed
by one multi-line regex `findall` over the joined lines (`tbo_rows`; C speed, ANSI colour
codes tolerated by the pattern) and becomes one column batch. A group with a line that does
not fit falls back to the per-line parser, which reports the odd lines as problems.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from meshcert.evidence.parsers import ggml_test, paste, tbo_rows
from meshcert.evidence.parsers.base import (
    GGML_TEST,
    INCOMPLETE,
    MALFORMED,
    TBO_CONSOLE,
    TBO_TEST,
    Const,
    ParsedFile,
    Row,
    strip_ansi,
    to_float,
)
from meshcert.evidence.parsers.params import parse_params
from meshcert.evidence.parsers.tbo_rows import NUMS_ANY, NUMS_AT, PERF_ROW, TIME_ONLY, perf_extra

_NAME_LINE = re.compile(r"[ \t]+([A-Z][A-Za-z0-9_.\-]*)\(([^)]*)\):(?:\s(.*))?$")
# today `Backend 1/3: Metal`; builds of 2023-2024 `Backend 2/2 (CUDA0)` + `  Backend name: CUDA0`
_SECTION = re.compile(r"Backend (\d+)/(\d+)(?:: (.*?)| \((.*?)\))\s*$")
_BACKEND_NAME = "  Backend name: "
# a failure printed before its case name (the compare callback prints first):
# `[MUL_MAT_ID] ERR = 1.01 > 0.0005   MUL_MAT_ID(type_a=...): FAIL`
_ERROR_FIRST = re.compile(r"\s*(\[[^\]]+\] .*?)\s+([A-Z][A-Za-z0-9_.\-]*)\(([^)]*)\):(?:\s(.*))?$")
_ERROR_ONLY = re.compile(r"\s*\[[^\]]+\] (?:(?:NMSE|ERR|MAA) = \S+ > \S+|inf (?:sign )?mismatch:"
                         r"|nonfinite gradient)")
_LISTED = re.compile(r"[ \t]+([A-Z][A-Za-z0-9_.\-]*)\((.*)\)\s*$")      # under `Failing tests:`
_CUT_NAME = re.compile(r"[ \t]*[A-Z][A-Za-z0-9_.\-]*\([^)]*$")
_TESTING = re.compile(r"Testing (\d+) devices")
_TESTS_PASSED = re.compile(r"\s+(\d+)/(\d+) tests passed")
_BACKEND_STATUS = re.compile(r"\s+Backend (.+?): (OK|FAIL)\s*$")
_BACKENDS_PASSED = re.compile(r"(\d+)/(\d+) backends passed")
_ERRVAL = re.compile(r"\[([^\]]*)\] (NMSE|ERR|MAA) = (\S+) > (\S+)")
_KERNEL = re.compile(r"kernel_\w+")
_FAIL_STARTS = ("[", "FAIL", "compare failed", "sentinel mismatch", "failed to allocate")
_SECTION_START = frozenset("BT0123456789OF[")
_SAMPLE_PREFIXES = ("ggml_test: perf_sample ", "ggml_test: perf_warmup ")
_RESULT_ENDINGS = ("OK", "FAIL", "OK ", "FAIL ")
_INDENTED_START = frozenset("DB0123456789")     # Device description, Backend X, N/M tests


@dataclass(slots=True)
class _Pending:
    """A row whose `NAME(params): ` prefix arrived but whose result has not (yet)."""

    index: int                  # 0-based line index of the name line
    name: str
    params: str
    backend: str | None
    device: str | None
    text: str


@dataclass(slots=True)
class _Bulk:
    """Lines set aside for one multi-line regex pass: text lines and their 0-based index."""

    lines: list[str] = field(default_factory=list)
    index: list[int] = field(default_factory=list)


def parse(text: str, source: str) -> ParsedFile:
    return _ConsoleParser(source).run(text)


class _ConsoleParser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.out = ParsedFile(TBO_CONSOLE)
        self.lines: list[str] = []
        self.summary: list[Row] = []        # parity_backend / parity_total, kept for test runs
        self.tests: tuple[int, int, int] | None = None   # (passed, total, line) not yet used
        self.awaiting_total: int | None = None           # index in summary awaiting OK/FAIL
        self.test_mode = False
        self.backend: str | None = None
        self.device: str | None = None
        self.pending: _Pending | None = None
        # section changes: 0-based line index -> (backend, device) from that line on
        self.section_at: list[int] = [-1]
        self.section_is: list[tuple[str | None, str | None]] = [(None, None)]
        self.splits: list[_Pending] = []    # pending rows completed by the lines in split_bulk
        self.failing_list = False           # inside a `Failing tests:` list
        self.orphan_error: tuple[int, str] | None = None   # an error line awaiting its case
        self.verdicts: dict[tuple[str | None, str, str], bool] = {}   # parity rows so far

    # -- the one pass over the lines ------------------------------------------------------
    def run(self, text: str) -> ParsedFile:
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        text, ctest = paste.strip_ctest(text)
        if ctest:
            self.out.note("ctest_prefix_lines", ctest)
        self.lines = lines = text.split("\n")
        rows = _Bulk()          # whole perf rows
        split = _Bulk()         # numbers of split rows (self.splits holds their names)
        samples = _Bulk()       # ggml_test perf_sample / perf_warmup lines
        rows_line, rows_index = rows.lines.append, rows.index.append
        samples_line, samples_index = samples.lines.append, samples.index.append
        ignored = 0
        for index, line in enumerate(lines):
            head = line[:2]
            if head == "  ":
                if "us/run" in line:
                    if line[2:3] > " ":                 # "  NAME(...)": a whole row
                        if self.pending is not None:
                            self._flush_pending("a new row started before its result")
                        rows_line(line)
                        rows_index(index)
                    else:
                        self._numbers(line, index, split)
                elif not self._indented(line, index):
                    if "ggml_test:" in line:
                        self._ggml(line, index)
                    elif line.strip():
                        ignored += 1
                continue
            if head == "gg":
                if line.startswith(_SAMPLE_PREFIXES):
                    samples_line(line)
                    samples_index(index)
                    continue
                if line.startswith("ggml_test:"):
                    self._ggml(line, index)
                    continue
            elif not line:
                continue
            if "us/run" in line:
                self._numbers(line, index, split)
            elif "ggml_test:" in line:
                self._ggml(line, index)
            elif (line[0] in _SECTION_START or "\x1b" in line
                  or line.endswith(_RESULT_ENDINGS) or "backends passed" in line):
                if not self._other_line(line, index):
                    ignored += 1
            elif line.strip():
                ignored += 1
        self.out.ignored += ignored
        self._flush_pending("the log ended (truncated run?)")
        self._bulk_rows(rows)
        self._bulk_splits(split)
        self._bulk_samples(samples)
        return self._finish()

    def _numbers(self, line: str, index: int, split: _Bulk) -> None:
        """A `us/run` line that is not a whole `  NAME(...)` row: a split row's numbers
        (kept for the bulk pass) or something odd (parsed now)."""
        if self.pending is not None:
            self.splits.append(self.pending)
            self.pending = None
            split.lines.append(line)
            split.index.append(index)
        else:
            self._numbers_line(strip_ansi(line), index)

    def _indented(self, line: str, index: int) -> bool:
        """An indented line without `us/run`: a row name (perf split / test result / not
        supported) or a section/summary line. False: chatter."""
        if "\x1b" in line:
            line = strip_ansi(line)
        third = line[2:3]
        if "(" in line and "A" <= third <= "Z":
            m = _NAME_LINE.match(line)
            if m is not None:
                self._name_line(m, index, line)
                return True
            if self.failing_list:
                listed = _LISTED.match(line)
                if listed is not None:
                    self._listed_failure(listed.group(1), listed.group(2), index, line)
                    return True
            if _CUT_NAME.match(line):
                self._cut_name(line, index)
                return True
        if third in _INDENTED_START:
            return self._indented_line(line, index)
        return False

    def _other_line(self, line: str, index: int) -> bool:
        """Unindented lines: sections, summaries, a split test row's result. False: chatter."""
        if "\x1b" in line:
            line = strip_ansi(line)
            if not line.strip():
                return True
        if line[:1] in _SECTION_START and self._section_line(line, index):
            return True
        if line.startswith("[") and self._error_first(line, index):
            return True
        if self.pending is not None and self._completes_test(line, index):
            return True
        if "backends passed" in line:  # a summary that did not parse: a verdict, not chatter
            self.out.problem(self.source, index + 1, line, "summary does not parse as "
                             "`K/N backends passed`")
            return True
        return False

    # -- sections (backend / device for every row) -----------------------------------------
    def _set_section(self, index: int, backend: str | None, device: str | None) -> None:
        self.backend, self.device = backend, device
        self.section_at.append(index)
        self.section_is.append((backend, device))

    def _sections_of(self, indexes: list[int]) -> tuple[list[str | None], list[str | None]]:
        """(backend, device) in force at each 0-based line index. Many indexes in line order
        (as the bulk passes collect them): each section fills its run of them at once."""
        at, current = self.section_at, self.section_is
        if len(indexes) < 64 or indexes != sorted(indexes):
            picked = [current[bisect_right(at, i) - 1] for i in indexes]
            return [p[0] for p in picked], [p[1] for p in picked]
        backends: list[str | None] = []
        devices: list[str | None] = []
        start = 0
        for k, (backend, device) in enumerate(current):
            end = bisect_left(indexes, at[k + 1], start) if k + 1 < len(at) else len(indexes)
            backends += [backend] * (end - start)
            devices += [device] * (end - start)
            start = end
        return backends, devices

    # -- perf rows, in bulk ----------------------------------------------------------------
    def _bulk_rows(self, bulk: _Bulk) -> None:
        """Whole perf rows: one regex findall over all of them, else line by line."""
        if not bulk.lines:
            return
        cols = tbo_rows.rows(bulk.lines)
        if cols is not None and "(" in "\n".join(cols["params"]) and any(
                op + "(" in prm for op, prm in zip(cols["op"], cols["params"], strict=True)):
            cols = None                       # a name repeated in its params: flag those rows
        if cols is None:                      # some line is odd: parse them one by one
            for line, index in zip(bulk.lines, bulk.index, strict=True):
                line = strip_ansi(line)
                m = PERF_ROW.match(line)
                if m is None:
                    self._numbers_line(line, index)
                    continue
                g = m.groups()
                backend, device = self._sections_of([index])
                self._emit_perf(_Pending(index, g[0], g[1], backend[0], device[0], ""),
                                int(g[2]), float(g[3]), perf_extra(g, 4), index)
            return
        n = len(bulk.lines)
        parsed = [parse_params(p) for p in cols["params"]]
        backend, device = self._sections_of(bulk.index)
        self.out.add_batch(n, {
            "source_line": [i + 1 for i in bulk.index], "format": Const(TBO_CONSOLE, n),
            "kind": Const("perf", n), "backend": backend, "device": device, "op": cols["op"],
            "params": [p[0] for p in parsed], "param_dict": [p[1] for p in parsed],
            "us_per_run": cols["us"], "runs": cols["runs"], "supported": Const(True, n),
            "metric": Const("us_per_run", n), "value": cols["us"], "extra": cols["extra"],
        })

    def _bulk_splits(self, bulk: _Bulk) -> None:
        """Numbers of split rows, paired with the names they complete."""
        if not bulk.lines:
            return
        cols = tbo_rows.numbers(bulk.lines)
        if cols is not None and "(" in "\n".join(p.params for p in self.splits) and any(
                p.name + "(" in p.params for p in self.splits):
            cols = None
        if cols is None:
            for pending, line, index in zip(self.splits, bulk.lines, bulk.index, strict=True):
                line = strip_ansi(line)
                m = NUMS_AT.match(line) or NUMS_ANY.search(line)
                if m is None:
                    self.pending = pending
                    self._numbers_line(line, index)
                    if self.pending is pending:
                        self._flush_pending("its numbers line does not parse")
                    continue
                g = m.groups()
                self._emit_perf(pending, int(g[0]), float(g[1]), perf_extra(g, 2), index)
            return
        n = len(bulk.lines)
        parsed = [parse_params(p.params) for p in self.splits]
        for pending, index, extra in zip(self.splits, bulk.index, cols["extra"], strict=True):
            self._split_extra(pending, index, extra)
        self.out.add_batch(n, {
            "source_line": [p.index + 1 for p in self.splits], "format": Const(TBO_CONSOLE, n),
            "kind": Const("perf", n), "backend": [p.backend for p in self.splits],
            "device": [p.device for p in self.splits], "op": [p.name for p in self.splits],
            "params": [p[0] for p in parsed], "param_dict": [p[1] for p in parsed],
            "us_per_run": cols["us"], "runs": cols["runs"], "supported": Const(True, n),
            "metric": Const("us_per_run", n), "value": cols["us"], "extra": cols["extra"],
        })

    def _bulk_samples(self, bulk: _Bulk) -> None:
        """ggml_test perf_sample / perf_warmup lines: one findall, else one by one through the
        ggml_test parser."""
        if not bulk.lines:
            return
        backend, device = self._sections_of(bulk.index)
        linenos = [i + 1 for i in bulk.index]
        found = ggml_test.SAMPLE_LINES.findall("\n" + "\n".join(bulk.lines))
        if len(found) == len(bulk.lines):
            ggml_test.add_sample_batch(self.out, found, linenos, backend, device)
            return
        for line, lineno, b, d in zip(bulk.lines, linenos, backend, device, strict=True):
            ggml_test.parse_line(line, lineno, b, d, self.source, self.out)

    # -- perf, one line at a time (odd layouts, problems) ----------------------------------
    def _numbers_line(self, line: str, index: int) -> None:
        """A line with `us/run` that is not a whole row: a split row's numbers, or junk."""
        lineno = index + 1
        if self.pending is None and line[:1].isupper():
            whole = PERF_ROW.match(line)        # a row pasted without its indent
            if whole is not None:
                g = whole.groups()
                backend, device = self._sections_of([index])
                self._emit_perf(_Pending(index, g[0], g[1], backend[0], device[0], ""),
                                int(g[2]), float(g[3]), perf_extra(g, 4), index)
                return
        m = NUMS_AT.match(line) or NUMS_ANY.search(line)
        pending = self.pending
        if m is not None and pending is not None:
            self.pending = None
            g = m.groups()
            self._emit_perf(pending, int(g[0]), float(g[1]), perf_extra(g, 2), index)
            return
        if m is not None:
            self.out.problem(self.source, lineno, line, "timing without a row name (the "
                             "`NAME(params): ` part is missing)")
            return
        loose = TIME_ONLY.search(line)
        if loose is not None and pending is not None:
            self.pending = None
            self._emit_perf(pending, int(loose.group(1)), float(loose.group(2)), {}, index)
            self.out.problem(self.source, lineno, line, "row timing kept, but its "
                             "throughput part is not `x kB/run - y GB/s` or "
                             "`x FLOP/run - y FLOPS`")
            return
        name = _NAME_LINE.match(line) if loose is not None else None
        if loose is not None and name is not None:
            backend, device = self._sections_of([index])
            self._emit_perf(_Pending(index, name.group(1), name.group(2), backend[0],
                                     device[0], ""), int(loose.group(1)),
                            float(loose.group(2)), {}, index)
            self.out.problem(self.source, lineno, line, "row timing kept, but its throughput "
                             "part is not `x kB/run - y GB/s` or `x FLOP/run - y FLOPS`")
            return
        self.out.problem(self.source, lineno, line, "looks like a perf row but does not parse "
                         "as `NAME(params): N runs - X us/run - ...`")

    def _emit_perf(self, p: _Pending, runs: int, us: float, extra: dict[str, Any],
                   index: int) -> None:
        if "(" in p.params and self._name_in_params(p):
            return
        canon, pdict = parse_params(p.params)
        self._split_extra(p, index, extra)
        self.out.rows.append(Row(p.index + 1, TBO_CONSOLE, "perf", p.backend, p.device, None,
                                 p.name, canon, pdict, us, runs, None, True, None, None, None,
                                 "us_per_run", us, None, extra))

    def _split_extra(self, p: _Pending, index: int, extra: dict[str, Any]) -> None:
        """A split row: the line of its result and the kernels named in between."""
        if index == p.index:
            return
        extra["result_line"] = index + 1
        between = "\n".join(self.lines[p.index:index])
        if "kernel_" in between:
            kernels = list(dict.fromkeys(_KERNEL.findall(between)))
            if kernels:
                extra["kernels"] = kernels

    # -- row names (perf + test) ----------------------------------------------------------
    def _name_line(self, m: re.Match[str], index: int, line: str) -> None:
        if self.pending is not None:
            self._flush_pending("a new row started before its result")
        name, params, rest = m.group(1), m.group(2), (m.group(3) or "").strip()
        pending = _Pending(index, name, params, self.backend, self.device, "")
        if not rest:
            self.pending = pending
        elif rest == "OK" or rest.endswith(" OK"):
            self._emit_parity(pending, True, None, index)
        elif rest.endswith("FAIL"):
            self._emit_parity(pending, False, rest[:-4].strip(), index)
        elif rest.startswith("not supported"):
            if "[" in rest:       # test mode names the backend: a skipped parity case
                self.test_mode = True
                self.out.note("test_not_supported")
            else:
                canon, pdict = parse_params(params)
                self.out.rows.append(Row(index + 1, TBO_CONSOLE, "perf", self.backend,
                                         self.device, None, name, canon, pdict,
                                         supported=False))
        elif rest.startswith("skipping large tensors"):
            self.out.note("test_skipped_large")
        elif rest in ("SUPPORTED", "NOT SUPPORTED"):
            self.out.note("support_mode_rows")
        elif "ggml_test:" in rest:
            self.pending = pending
            self._ggml(rest, index)
        elif "runs -" in rest:
            self.out.problem(self.source, index + 1, line, "looks like a perf row but does not "
                             "parse as `NAME(params): N runs - X us/run - ...`")
        elif rest.startswith(_FAIL_STARTS):
            pending.text = rest            # failure text whose FAIL comes on a later line
            self.pending = pending
        else:
            self.pending = pending         # stderr chatter that arrived right after the name

    def _flush_pending(self, why: str) -> None:
        p = self.pending
        if p is None:
            return
        self.pending = None
        self.out.problem(self.source, p.index + 1, f"  {p.name}({p.params}): {p.text}",
                         f"row {p.name} has no result: {why}", INCOMPLETE)

    # -- test mode ------------------------------------------------------------------------
    def _completes_test(self, line: str, index: int) -> bool:
        """A line ending in OK/FAIL that finishes a pending (split) test-mode row."""
        text = line.strip()
        pending = self.pending
        if pending is None:
            return False
        if text == "OK":
            self.pending = None
            self._emit_parity(pending, True, None, index)
            return True
        if text.endswith("FAIL") and text.startswith(_FAIL_STARTS):
            self.pending = None
            error = " ".join(t for t in (pending.text, text[:-4].strip()) if t)
            self._emit_parity(pending, False, error, index)
            return True
        return False

    def _emit_parity(self, p: _Pending, passed: bool, error: str | None, index: int) -> None:
        self.test_mode = True
        orphan = self.orphan_error
        if orphan is not None:
            self.orphan_error = None
            if not passed and not error and index - orphan[0] <= 2:
                error = orphan[1]
            else:
                self._orphan_problem(orphan)
        if "(" in p.params and self._name_in_params(p):
            return
        canon, pdict = parse_params(p.params)
        self.verdicts.setdefault((p.backend, p.name, canon), passed)
        extra: dict[str, Any] = {}
        nmse: float | None = None
        if error:
            for found in _ERRVAL.finditer(error):
                if found.group(2) == "MAA":
                    extra.setdefault("maa", to_float(found.group(3)))
                    extra.setdefault("maa_threshold", to_float(found.group(4)))
                elif nmse is None:
                    nmse = to_float(found.group(3))
                    extra["threshold"] = to_float(found.group(4))
                    extra["error_metric"] = found.group(2)
        self._split_extra(p, index, extra)
        self.out.rows.append(Row(p.index + 1, TBO_TEST, "parity", p.backend, p.device, None,
                                 p.name, canon, pdict, supported=True, passed=passed,
                                 nmse=nmse, error=error or None, extra=extra))

    def _use_tests(self, status_line: bool, name: str | None, passed: bool | None,
                   index: int) -> None:
        """A parity_backend row from the pending `N/M tests passed` (+ status line)."""
        tests = self.tests
        self.tests = None
        extra: dict[str, Any] = {}
        if tests is not None:
            extra = {"tests_passed": tests[0], "tests_total": tests[1]}
            if passed is None:
                passed = tests[0] == tests[1]
        if not status_line:
            extra["status_line"] = False
        line = index + 1 if tests is None or status_line else tests[2]
        self.summary.append(Row(line, TBO_TEST, "parity_backend", name or self.backend,
                                self.device, passed=passed, extra=extra))

    def _indented_line(self, line: str, index: int) -> bool:
        """Indented summary/section lines; False when the line is something else."""
        self.failing_list = False
        if line.startswith(_BACKEND_NAME):      # the old header's second line names it again
            name = line[len(_BACKEND_NAME):].strip() or None
            if name != self.backend:
                self._set_section(index, name, self.device)
            return True
        if line.startswith("  Device description: "):
            self._set_section(index, self.backend, line.split(":", 1)[1].strip() or None)
            return True
        m = _TESTS_PASSED.match(line)
        if m is not None:
            self._flush_pending("the backend's test summary followed")
            if self.tests is not None:
                self._use_tests(False, None, None, index)
            self.test_mode = True
            self.tests = (int(m.group(1)), int(m.group(2)), index + 1)
            return True
        m = _BACKEND_STATUS.match(line)
        if m is not None:
            self._flush_pending("the backend's status followed")
            self._use_tests(True, m.group(1).strip(), m.group(2) == "OK", index)
            return True
        if "tests passed" in line:  # a summary that did not parse: a verdict, not chatter
            self.out.problem(self.source, index + 1, line, "summary does not parse as "
                             "`N/M tests passed`")
            return True
        return False

    def _section_line(self, line: str, index: int) -> bool:
        m = _SECTION.match(line)
        if m is not None:
            self._flush_pending("a new backend section started")
            if self.tests is not None:
                self._use_tests(False, None, None, index)
            self.failing_list = False
            self._set_section(index, m.group(3) or m.group(4) or None, None)
            return True
        if line.startswith("Failing tests:"):
            self._flush_pending("the list of failing tests followed")
            self.failing_list = True
            self.test_mode = True
            return True
        if line.startswith("Testing ") and _TESTING.match(line):
            self.out.note("devices", int(line.split()[1]))
            return True
        m = _BACKENDS_PASSED.match(line)
        if m is not None:
            self._flush_pending("the overall summary followed")
            if self.tests is not None:
                self._use_tests(False, None, None, index)
            k, n = int(m.group(1)), int(m.group(2))
            self.awaiting_total = len(self.summary)
            self.summary.append(Row(index + 1, TBO_TEST, "parity_total", passed=k == n,
                                    extra={"backends_passed": k, "backends_total": n}))
            return True
        text = line.strip()
        if text in ("OK", "FAIL") and self.awaiting_total is not None and self.pending is None:
            i = self.awaiting_total
            self.awaiting_total = None
            row = self.summary[i]
            self.summary[i] = row._replace(passed=text == "OK",
                                           extra={**row.extra, "status_line": index + 1})
            return True
        return False

    # -- pasted / reordered failures --------------------------------------------------------
    def _error_first(self, line: str, index: int) -> bool:
        """`[OP] ERR = x > y   OP(params): FAIL` (the error printed before the case name), or
        an error line alone whose case follows."""
        text = strip_ansi(line)
        if _ERROR_ONLY.match(text) is None:      # `[INFO] ...` chatter is not a failure
            return False
        m = _ERROR_FIRST.match(text)
        if m is not None:
            err, name, params, rest = m.group(1), m.group(2), m.group(3), m.group(4) or ""
            synthetic = f"  {name}({params}): {err} {rest.strip()}".rstrip()
            found = _NAME_LINE.match(synthetic)
            if found is not None:
                self._name_line(found, index, synthetic)
                return True
        if self.pending is not None and not text.rstrip().endswith("FAIL"):
            self.pending.text = " ".join(t for t in (self.pending.text, text.strip()) if t)
            return True
        if self.pending is None:
            if self.orphan_error is not None:
                self._orphan_problem(self.orphan_error)
            self.orphan_error = (index, text.strip())
            return True
        return False

    def _orphan_problem(self, orphan: tuple[int, str]) -> None:
        self.out.problem(self.source, orphan[0] + 1, orphan[1], "failure text without a case "
                         "name next to it: which case failed is unknown", MALFORMED)

    def _listed_failure(self, name: str, params: str, index: int, line: str) -> None:
        """One case of the `Failing tests:` list that test mode prints per backend."""
        canon, pdict = parse_params(params)
        seen = self.verdicts.get((self.backend, name, canon))
        if seen is False:
            self.out.note("failing_list_confirmed")
            return
        if seen is True:
            self.out.problem(self.source, index + 1, line, f"{name} is listed as failing but "
                             "its own line said OK")
            return
        self.verdicts[(self.backend, name, canon)] = False
        self.out.rows.append(Row(index + 1, TBO_TEST, "parity", self.backend, self.device, None,
                                 name, canon, pdict, supported=True, passed=False,
                                 error="listed under `Failing tests:`",
                                 extra={"failing_list": True}))

    def _cut_name(self, line: str, index: int) -> None:
        """A row name without its `):`: wrapped by a paste (join it with the next lines) or
        cut off (a problem)."""
        merged, used = paste.join_at(self.lines, index)
        if merged is None:
            self.out.problem(self.source, index + 1, line, "row name is cut off (no closing "
                             "`):`): its result cannot be attributed", INCOMPLETE)
            return
        for k in range(1, used + 1):
            self.lines[index + k] = ""          # consumed (the main loop skips empty lines)
        self.out.note("wrapped_rows_joined")
        merged = strip_ansi(merged)
        whole = PERF_ROW.match(merged)
        if whole is not None:
            g = whole.groups()
            if self.pending is not None:
                self._flush_pending("a new row started before its result")
            self._emit_perf(_Pending(index, g[0], g[1], self.backend, self.device, ""),
                            int(g[2]), float(g[3]), perf_extra(g, 4), index)
            return
        if "us/run" in merged:
            self._numbers_line(merged, index)
            return
        found = _NAME_LINE.match(merged)
        if found is not None:
            self._name_line(found, index, merged)
        else:
            self.out.problem(self.source, index + 1, merged, "a wrapped row that does not parse "
                             "once joined")

    def _name_in_params(self, p: _Pending) -> bool:
        """A case name repeated inside its own params (`ADD(ADD(type=f32,...)`): two pasted
        rows run together; which row the result belongs to is unknown."""
        if p.name + "(" not in p.params:
            return False
        self.out.problem(self.source, p.index + 1, f"  {p.name}({p.params})", f"the case name "
                         f"{p.name} is repeated inside its params (rows run together?): the "
                         "result is not attributed", MALFORMED)
        return True

    # -- ggml_test hand-off ---------------------------------------------------------------
    def _ggml(self, text: str, index: int) -> None:
        at = text.find(ggml_test.PREFIX)
        ggml_test.parse_line(text[at:], index + 1, self.backend, self.device, self.source,
                             self.out)

    # -- the end --------------------------------------------------------------------------
    def _finish(self) -> ParsedFile:
        out = self.out
        if self.orphan_error is not None:
            self._orphan_problem(self.orphan_error)
            self.orphan_error = None
        if self.tests is not None:
            self._use_tests(False, None, None, self.tests[2] - 1)
        if self.summary:
            if self.test_mode:
                out.rows.extend(self.summary)
            else:
                out.note("perf_mode_status_lines", len(self.summary))
        out.sort_problems()
        formats = out.column_values("format")
        if TBO_CONSOLE in formats:
            out.format = TBO_CONSOLE
        elif TBO_TEST in formats or self.test_mode:
            out.format = TBO_TEST
        elif GGML_TEST in formats:
            out.format = GGML_TEST
        return out
