"""`--generation-defaults FILE`: one `GenerationRequestDefaults` object (mesh-llm-0.79.md §1.5,
§2.5), read bounded and strictly, then validated by the certifier's own rules (unknown keys,
types, bounds, profile names, provenance) before anything is written; any problem refuses.

mesh-llm's writer then REPLACES `generation` with `{request_defaults}`, dropping the native-MTP
declaration it inferred from the source. meshcert keeps it: `generation` is
`{request_defaults, speculative_decoding}` (see meshcert.writer.manifest), because mesh-llm's
runtime warns "native MTP will not be enabled" for a package with `.nextn.` tensors and no
`speculative_decoding` (docs/writing.md).
"""

from __future__ import annotations

from typing import Any

from meshcert.certify.formats.publisher_json import JsonProblem, parse_publisher_json
from meshcert.core.errors import Refused

MAX_GENERATION_DEFAULTS_BYTES = 1 << 20  # the reviewed profiles are a few KiB
REFUSED = "generation_defaults"


def read_generation_defaults(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_GENERATION_DEFAULTS_BYTES + 1)
    except OSError as exc:
        raise Refused(f"--generation-defaults {path}: {exc.strerror or exc}", code="usage"
                      ) from None
    return parse_generation_defaults(data, path)


def parse_generation_defaults(data: bytes, where: str) -> dict[str, Any]:
    """The validated object; Refused naming every problem (at most a few) otherwise."""
    if len(data) > MAX_GENERATION_DEFAULTS_BYTES:
        raise Refused(f"{where} is over the {MAX_GENERATION_DEFAULTS_BYTES} byte "
                      "limit for generation defaults", code=REFUSED)
    parsed = parse_publisher_json(data)
    if isinstance(parsed, JsonProblem):
        raise Refused(f"--generation-defaults {where} {parsed.message}", code=REFUSED)
    problems = request_defaults_problems(parsed)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more"
                                           if len(problems) > 5 else "")
        raise Refused(f"--generation-defaults {where} is not valid "
                      f"GenerationRequestDefaults: {shown}", code=REFUSED)
    return parsed


def request_defaults_problems(value: dict[str, Any]) -> list[str]:
    """The certifier's shape and rule checks of a `generation.request_defaults` object
    (meshcert.certify.checks.v2_request_defaults, paths from the file's root), as
    `<json path>: <code>: <message>` lines (empty: valid)."""
    from meshcert.certify.checks.v2_request_defaults import request_defaults_problems as problems

    return [f"{path or '(root)'}: {code}: {message}"
            for code, path, message in problems(value, base="")]
