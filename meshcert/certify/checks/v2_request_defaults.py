"""`generation.request_defaults` as mesh-llm v0.78.1+ reads and validates it (mesh-llm-0.79.md
§1.5, §1.7): the serde shape (unknown fields refused in every object, integer fields refuse
float literals, closed enums, the untagged reasoning budget, a null only where the field is an
`Option`), then `validate_generation_request_defaults` and `validate_generation_profile` rule
for rule, with mesh-llm's codes and paths.

Pure and total: `request_defaults_problems(obj)` takes any JSON value and returns
(code, path, message) triples, never raises and stays linear in the input (a megabyte
`sampler_sequence`, a 10,000-digit `logit_bias` key). The writer validates a
`--generation-defaults` file with the same function (base path "" for a file's root).

Codes: the shape problems serde refuses at parse are `unknown_manifest_field` (an unknown
key), `missing_value` (a required field absent or null) and `invalid_generation_value` (a
wrong type, an out-of-range integer, an unknown enum value); the validator's own rules keep
mesh-llm's codes (`missing_value`, `invalid_identifier`, `invalid_generation_value`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from meshcert.certify.manifest_model import is_int

Problem = tuple[str, str, str]  # (code, JSON path, message)
BASE = "generation.request_defaults"

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
F64_MAX = 1.7976931348623157e308

REQUEST_DEFAULTS_FIELDS = frozenset({"selection", "profiles"})
SELECTION_FIELDS = ("default", "reasoning_enabled", "reasoning_disabled")
# GenerationProfile's fields and their serde types (mesh-llm-0.79.md §1.5)
PROFILE_TYPES: dict[str, str] = {
    "max_tokens": "u32", "stop": "strs", "temperature": "f64", "top_p": "f64", "top_k": "i32",
    "min_p": "f64", "typical_p": "f64", "top_nsigma": "f64", "presence_penalty": "f64",
    "frequency_penalty": "f64", "seed": "u64", "logit_bias": "f64map", "repeat_penalty": "f64",
    "repeat_last_n": "i32", "dynatemp_range": "f64", "dynatemp_exponent": "f64", "dry": "dry",
    "xtc": "xtc", "mirostat_mode": "i32", "mirostat_entropy": "f64",
    "mirostat_learning_rate": "f64", "samplers": "strs", "sampler_sequence": "str",
    "ignore_eos": "bool", "reasoning": "reasoning", "provenance": "provenance",
}
RANGES: tuple[tuple[str, float, float], ...] = (
    ("temperature", 0.0, 100.0), ("presence_penalty", -2.0, 2.0),
    ("frequency_penalty", -2.0, 2.0), ("top_nsigma", -1.0, F64_MAX),
    ("dynatemp_range", 0.0, F64_MAX), ("dynatemp_exponent", 0.0, F64_MAX))
UNIT_FIELDS = ("top_p", "min_p", "typical_p")
DRY_TYPES = {"multiplier": "f64", "base": "f64", "allowed_length": "i32",
             "penalty_last_n": "i32", "sequence_breakers": "strs"}
XTC_TYPES = {"probability": "f64", "threshold": "f64"}
PROVENANCE_FIELDS = ("source_repo", "revision", "file", "section", "url")
SAMPLERS = frozenset({"penalties", "dry", "top_n_sigma", "top_k", "typical_p", "typ_p", "top_p",
                      "min_p", "xtc", "temperature", "temp"})
SAMPLER_CODES = frozenset("edskypmxt")
REASONING_ENABLED = ("auto", "off", "on")
REASONING_FORMAT = ("auto", "none", "deepseek", "deepseek-legacy", "hidden")
REASONING_BUDGET_LEVELS = ("auto", "low", "medium", "high", "unrestricted")
PROFILE_NAME = re.compile(r"[A-Za-z0-9._-]+")
HEX40 = re.compile(r"[0-9A-Fa-f]{40}")  # upper case accepted (is_ascii_hexdigit)
URL_SEPARATORS = re.compile(r"[/?#&=]")
# char::is_whitespace (Unicode White_Space): what Rust's str::trim strips. Python's isspace
# also counts U+001C..U+001F, which Rust keeps.
RUST_WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                            "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SHOW = 60  # characters of a value or key shown in a message or path


def rust_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in RUST_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in RUST_WHITESPACE:
        end -= 1
    return text[start:end]


def rust_blank(text: str) -> bool:
    return all(c in RUST_WHITESPACE for c in text)


def parses_as_rust_i32(text: str) -> int | None:
    """`text.parse::<i32>()`: an optional `+`/`-`, then ASCII digits only (no spaces, no `_`),
    within i32. Linear and bounded: a long run of digits is never handed to int()."""
    sign, digits = 1, text
    if text[:1] in ("+", "-"):
        sign, digits = (-1 if text[0] == "-" else 1), text[1:]
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    significant = digits.lstrip("0") or "0"
    if len(significant) > 10:  # beyond i32 whatever the digits
        return None
    value = sign * int(significant)
    return value if I32_MIN <= value <= I32_MAX else None


def show(value: Any) -> str:
    """A value for a message, cut short (hostile input stays readable)."""
    text = repr(value)
    return text if len(text) <= _SHOW else f"{text[:_SHOW]}... ({len(text)} characters)"


def _key(name: str) -> str:
    return name if len(name) <= _SHOW else f"{name[:_SHOW]}...({len(name)} characters)"


class _Shape:
    """Reads one object the way serde would, collecting what it refuses."""

    def __init__(self, out: list[Problem]) -> None:
        self.out = out

    def add(self, code: str, path: str, message: str) -> None:
        self.out.append((code, path, message))

    def object(self, value: Any, path: str, known: Iterable[str]) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.add("invalid_generation_value", path, f"must be an object, found {show(value)}")
            return None
        for key in sorted(set(value) - set(known)):
            self.add("unknown_manifest_field", _join(path, _key(key)),
                     f"unknown field {show(key)}: the object refuses unknown fields")
        return value

    def required(self, obj: dict[str, Any], key: str, path: str) -> Any:
        """The value of a required (non-Option) field; None after a missing_value."""
        value = obj.get(key)
        if value is None:
            state = "is null" if key in obj else "is missing"
            self.add("missing_value", _join(path, key), f"required field {state}")
        return value

    def typed(self, value: Any, kind: str, path: str) -> Any:
        """`value` read as serde type `kind`; None (after a problem) when serde refuses it."""
        if kind in ("u32", "i32", "u64"):
            low, high = {"u32": (0, U32_MAX), "i32": (I32_MIN, I32_MAX),
                         "u64": (0, U64_MAX)}[kind]
            if not is_int(value):
                self.add("invalid_generation_value", path, f"must be an integer ({kind}), "
                         f"found {show(value)}")
                return None
            if not low <= value <= high:
                self.add("invalid_generation_value", path, f"{show(value)} is outside {kind} "
                         f"({low}..={high})")
                return None
            return value
        if kind == "f64":
            return self.f64(value, path)
        if kind == "str":
            if not isinstance(value, str):
                self.add("invalid_generation_value", path, f"must be a string, found "
                         f"{show(value)}")
                return None
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                self.add("invalid_generation_value", path, f"must be true or false, found "
                         f"{show(value)}")
                return None
            return value
        if kind == "strs":
            if not isinstance(value, list):
                self.add("invalid_generation_value", path, f"must be a list of strings, found "
                         f"{show(value)}")
                return None
            good = [(i, item) for i, item in enumerate(value) if isinstance(item, str)]
            for i, item in enumerate(value):
                if not isinstance(item, str):
                    self.add("invalid_generation_value", f"{path}[{i}]",
                             f"must be a string, found {show(item)}")
            return good
        raise ValueError(kind)  # pragma: no cover - a programming error

    def f64(self, value: Any, path: str) -> float | None:
        if not isinstance(value, int | float) or isinstance(value, bool):
            self.add("invalid_generation_value", path, f"must be a number, found {show(value)}")
            return None
        if isinstance(value, int):
            try:
                return float(value)  # correctly rounded, as serde_json reads the literal
            except OverflowError:  # serde_json: "number out of range"
                self.add("invalid_generation_value", path, "value must be finite (the integer "
                         "is beyond f64's range)")
                return None
        if not math.isfinite(value):
            # JSON has no NaN/Infinity; Python reads 1e400 as inf where serde_json refuses it
            self.add("invalid_generation_value", path, f"value must be finite, found "
                     f"{show(value)}")
            return None
        return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def request_defaults_problems(obj: Any, base: str = BASE) -> list[Problem]:
    """Everything mesh-llm refuses in a `GenerationRequestDefaults` value (`base`: its JSON
    path; "" for a `--generation-defaults` file's root): parse-time shape, then the rules of
    validate_generation_request_defaults. An empty list: mesh-llm accepts it."""
    out: list[Problem] = []
    shape = _Shape(out)
    root = shape.object(obj, base, REQUEST_DEFAULTS_FIELDS)
    if root is None:
        return out
    selection: dict[str, str] = {}
    raw_selection = shape.required(root, "selection", base)
    sel_path = _join(base, "selection")
    if raw_selection is not None:
        sel = shape.object(raw_selection, sel_path, SELECTION_FIELDS)
        if sel is not None:
            shape.required(sel, "default", sel_path)
            for key in SELECTION_FIELDS:
                if sel.get(key) is not None:
                    value = shape.typed(sel[key], "str", _join(sel_path, key))
                    if value is not None:
                        selection[key] = value
    profiles_path = _join(base, "profiles")
    raw_profiles = shape.required(root, "profiles", base)
    profiles: dict[str, Any] | None = None
    if raw_profiles is not None:
        if isinstance(raw_profiles, dict):
            profiles = raw_profiles
        else:
            shape.add("invalid_generation_value", profiles_path,
                      f"must be an object (profile name -> profile), found {show(raw_profiles)}")
    out.extend(validate_generation_request_defaults(selection, profiles, base))
    return out


def validate_generation_request_defaults(selection: dict[str, str],
                                         profiles: dict[str, Any] | None,
                                         base: str = BASE) -> list[Problem]:
    """mesh-llm's validate_generation_request_defaults over the parsed parts: the profiles
    (byte order, as its BTreeMap), then the selection's references."""
    out: list[Problem] = []
    profiles_path = _join(base, "profiles")
    if profiles is not None and not profiles:
        out.append(("missing_value", profiles_path,
                    "at least one generation profile is required"))
    for name in sorted(profiles or {}):
        where = f"{profiles_path}[{_key(name)}]"
        if not PROFILE_NAME.fullmatch(name):
            out.append(("invalid_identifier", where, f"identifier {show(name)} contains "
                        "unsupported characters"))
        out.extend(validate_generation_profile(name, (profiles or {})[name], base))
    for key in SELECTION_FIELDS:
        selected = selection.get(key)
        if selected is None:
            continue
        where = _join(_join(base, "selection"), key)
        if rust_blank(selected):
            out.append(("missing_value", where, "selected profile must not be empty"))
        elif profiles is not None and selected not in profiles:
            out.append(("invalid_generation_value", where,
                        f"references undeclared generation profile {show(selected)}"))
    return out


def validate_generation_profile(name: str, raw: Any, base: str = BASE) -> list[Problem]:
    """One profile: its serde shape, then mesh-llm's validate_generation_profile."""
    out: list[Problem] = []
    shape = _Shape(out)
    where = f"{_join(base, 'profiles')}[{_key(name)}]"
    profile = shape.object(raw, where, PROFILE_TYPES)
    if profile is None:
        return out
    values: dict[str, Any] = {}
    for key, kind in PROFILE_TYPES.items():
        if profile.get(key) is None:
            continue  # an Option: absent or null
        if kind in ("u32", "i32", "u64", "f64", "str", "bool", "strs"):
            value = shape.typed(profile[key], kind, f"{where}.{key}")
            if value is not None:
                values[key] = value
    provenance = shape.required(profile, "provenance", where)
    _rules(where, values, out)
    _logit_bias(shape, where, profile.get("logit_bias"))
    _samplers(where, values, out)
    if profile.get("dry") is not None:
        _dry(shape, f"{where}.dry", profile["dry"])
    if profile.get("xtc") is not None:
        _xtc(shape, f"{where}.xtc", profile["xtc"])
    if profile.get("reasoning") is not None:
        _reasoning(shape, f"{where}.reasoning", profile["reasoning"])
    if provenance is not None:
        _provenance(shape, f"{where}.provenance", provenance)
    return out


def _rules(where: str, v: dict[str, Any], out: list[Problem]) -> None:
    def bad(key: str, message: str, code: str = "invalid_generation_value") -> None:
        out.append((code, f"{where}.{key}", message))

    if v.get("max_tokens") == 0:
        bad("max_tokens", "max_tokens must be greater than zero")
    for i, item in v.get("stop", []):
        if rust_blank(item):
            bad(f"stop[{i}]", "value must not be empty", "missing_value")
    # non-finite values were refused while reading (f64 fields hold finite floats here)
    for key, low, high in RANGES:
        if key in v and not low <= v[key] <= high:
            bad(key, f"value must be within {_num(low)}..={_num(high)}")
    for key in UNIT_FIELDS:
        if key in v and not 0.0 <= v[key] <= 1.0:
            bad(key, "value must be within 0..=1")
    if v.get("temperature", 0.0) < 0.0:
        bad("temperature", "temperature must be non-negative")
    if "repeat_penalty" in v and v["repeat_penalty"] <= 0.0:
        bad("repeat_penalty", "repeat_penalty must be greater than zero")
    if v.get("top_k", 0) < 0:
        bad("top_k", "top_k must be greater than or equal to zero")
    if v.get("repeat_last_n", 0) < -1:
        bad("repeat_last_n", "repeat_last_n must be greater than or equal to -1")
    if v.get("seed", 0) > U32_MAX:
        bad("seed", "seed must fit in the native u32 field")
    if "mirostat_mode" in v and v["mirostat_mode"] not in (0, 1, 2):
        bad("mirostat_mode", "mirostat_mode must be 0, 1, or 2")
    for key in ("mirostat_entropy", "mirostat_learning_rate"):
        if key in v and v[key] <= 0.0:
            bad(key, "value must be greater than zero")


def _num(value: float) -> str:
    return "f64::MAX" if value == F64_MAX else f"{value:g}"


def _logit_bias(shape: _Shape, where: str, raw: Any) -> None:
    if raw is None:
        return
    path = f"{where}.logit_bias"
    if not isinstance(raw, dict):
        shape.add("invalid_generation_value", path, f"must be an object (token id -> bias), "
                  f"found {show(raw)}")
        return
    for token in sorted(raw):
        at = f"{path}[{_key(token)}]"
        bias = shape.f64(raw[token], at)
        if bias is None:
            continue
        parsed = parses_as_rust_i32(token)
        if parsed is None or parsed < 0 or not -100.0 <= bias <= 100.0:
            shape.add("invalid_generation_value", at, "logit bias keys must be signed token ids "
                      "and values must be within -100..=100")


def _samplers(where: str, v: dict[str, Any], out: list[Problem]) -> None:
    for i, sampler in v.get("samplers", []):
        at = f"{where}.samplers[{i}]"
        if rust_blank(sampler):
            out.append(("missing_value", at, "value must not be empty"))
        if sampler not in SAMPLERS:
            out.append(("invalid_generation_value", at, f"unsupported sampler name "
                        f"{show(sampler)}"))
    sequence = v.get("sampler_sequence")
    if sequence is None:
        return
    at = f"{where}.sampler_sequence"
    if rust_blank(sequence):
        out.append(("missing_value", at, "value must not be empty"))
    unsupported = next((c for c in sequence
                        if c not in RUST_WHITESPACE and c not in SAMPLER_CODES), None)
    if unsupported is not None:
        out.append(("invalid_generation_value", at, f"sampler sequence contains an unsupported "
                    f"code {show(unsupported)} (codes: e d s k y p m x t)"))


def _dry(shape: _Shape, where: str, raw: Any) -> None:
    dry = shape.object(raw, where, DRY_TYPES)
    if dry is None:
        return
    v = {key: value for key, kind in DRY_TYPES.items() if dry.get(key) is not None
         and (value := shape.typed(dry[key], kind, f"{where}.{key}")) is not None}
    if (v.get("multiplier", 0.0) < 0.0 or ("base" in v and v["base"] <= 0.0)
            or v.get("allowed_length", 0) < 0 or v.get("penalty_last_n", 0) < -1):
        shape.add("invalid_generation_value", where,
                  "DRY values are outside native sampler bounds")
    for i, breaker in v.get("sequence_breakers", []):
        if not breaker or len(breaker.encode("utf-8", "surrogatepass")) >= 16:
            shape.add("invalid_generation_value", f"{where}.sequence_breakers[{i}]",
                      "DRY sequence breakers must be non-empty and shorter than 16 bytes")


def _xtc(shape: _Shape, where: str, raw: Any) -> None:
    xtc = shape.object(raw, where, XTC_TYPES)
    if xtc is None:
        return
    for key in XTC_TYPES:
        if xtc.get(key) is None:
            continue
        value = shape.f64(xtc[key], f"{where}.{key}")
        if value is not None and not 0.0 <= value <= 1.0:
            shape.add("invalid_generation_value", f"{where}.{key}", "value must be within 0..=1")


def _reasoning(shape: _Shape, where: str, raw: Any) -> None:
    reasoning = shape.object(raw, where, ("enabled", "format", "budget"))
    if reasoning is None:
        return
    for key, allowed in (("enabled", REASONING_ENABLED), ("format", REASONING_FORMAT)):
        value = reasoning.get(key)
        if value is not None and (not isinstance(value, str) or value not in allowed):
            shape.add("invalid_generation_value", f"{where}.{key}", f"{show(value)} is not one "
                      f"of {', '.join(allowed)}")
    budget = reasoning.get("budget")
    if budget is None:
        return
    tokens = is_int(budget) and 0 <= budget <= U32_MAX
    if not tokens and not (isinstance(budget, str) and budget in REASONING_BUDGET_LEVELS):
        shape.add("invalid_generation_value", f"{where}.budget", f"{show(budget)} is neither a "
                  f"token count (u32) nor one of {', '.join(REASONING_BUDGET_LEVELS)}")


def _provenance(shape: _Shape, where: str, raw: Any) -> None:
    prov = shape.object(raw, where, PROVENANCE_FIELDS)
    if prov is None:
        return
    text: dict[str, str] = {}
    for key in PROVENANCE_FIELDS:
        value = shape.required(prov, key, where)
        if value is not None:
            typed = shape.typed(value, "str", f"{where}.{key}")
            if typed is not None:
                text[key] = typed
    for key in PROVENANCE_FIELDS:
        if key in text and rust_blank(text[key]):
            shape.add("missing_value", f"{where}.{key}", "value must not be empty")
    if "revision" not in text:
        return
    revision = rust_trim(text["revision"])
    if not HEX40.fullmatch(revision):
        shape.add("invalid_generation_value", f"{where}.revision", "provenance revision must be "
                  f"an immutable 40-character Git commit SHA, found {show(text['revision'])}")
    url = text.get("url")
    if url is None:
        return
    if not url.startswith(("https://", "http://")):
        shape.add("invalid_generation_value", f"{where}.url",
                  "provenance URL must use http or https")
    elif revision not in URL_SEPARATORS.split(url):
        shape.add("invalid_generation_value", f"{where}.url", "provenance URL must contain the "
                  "exact revision as a distinct path or query segment")
