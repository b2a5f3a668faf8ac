"""What `package write` records as the source's identity, refused before a byte is written
when the package it would make could not pass its own certification or mesh-llm's rules.

- `--model-id` must be a model coordinate, `owner/name:QUANT` (mesh-llm-0.79.md §2.1: "must
  parse as a coordinate"; the repo as §6.1 rule 1 reads it, QUANT 1-128 of [A-Za-z0-9._-]).
  A free-form id is accepted by the format but names no model a node can fetch, and one
  holding Markdown (`|`, backticks) is written into the card escaped, so the card's own
  `readme` check then reads another id back.
- `--source-repo` must be `owner/name` the same way: it is the repo mesh-llm fetches.
- `--source-revision` and `--source-file` hold no control characters or blanks.
- `--source-file` must name the source GGUF given (its file name; for a Hub source, its path in
  the repository): the recorded primary file is what certification compares the source with,
  so another name writes the whole package and then fails `unknown_source_file`.

Pure: `check_model_id` before the source is opened, `check_source_file` once it is.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from meshcert.certify.formats.hf_publication import is_hf_coordinate
from meshcert.core.errors import Refused

_QUANT = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
EXAMPLE = "org/repo-GGUF:Q4_K_M"


def is_model_coordinate(text: str) -> bool:
    """`owner/name:QUANT`: the repo as mesh-llm's HF job reads it, a non-empty selector."""
    repo, colon, quant = text.partition(":")
    return bool(colon) and is_hf_coordinate(repo) and _QUANT.match(quant) is not None


def check_model_id(model_id: str | None) -> None:
    """Refused unless `model_id` (None: not given) is a model coordinate."""
    if model_id is not None and not is_model_coordinate(model_id):
        raise Refused(f"--model-id {model_id!r} is not a model coordinate owner/name:QUANT "
                      f"(e.g. {EXAMPLE}; each of owner and name 1-128 of A-Z a-z 0-9 . _ -, "
                      "QUANT 1-128 of the same)", code="usage")


def check_source_flags(source_repo: str | None, source_revision: str | None,
                       source_file: str | None) -> None:
    """Refused for a --source-repo that is not owner/name, or a blank or control-character
    --source-revision / --source-file."""
    if source_repo is not None and not is_hf_coordinate(source_repo):
        raise Refused(f"--source-repo {source_repo!r} is not a Hub repo owner/name (each part "
                      "1-128 of A-Z a-z 0-9 . _ -)", code="usage")
    for flag, value in (("--source-revision", source_revision), ("--source-file", source_file)):
        if value is not None and (not value.strip() or value != value.strip()
                                  or _CONTROL.search(value)):
            raise Refused(f"{flag} {value!r} is blank, has surrounding spaces or holds a "
                          "control character", code="usage")


def check_source_file(source_file: str | None, primary: str, *, hub: bool) -> None:
    """Refused unless `source_file` (None: not given) names the source's primary file
    `primary` (a local path: its file name; a Hub source: its path in the repository)."""
    if source_file is None:
        return
    name = PurePosixPath(primary.replace("\\", "/")).name
    recorded = PurePosixPath(source_file).name
    if (source_file != primary) if hub else (recorded != name):
        given = primary if hub else name
        raise Refused(f"--source-file {source_file!r} is not the source given ({given}): "
                      "the manifest would record another file than the one split, and "
                      f"certification would then refuse it; pass --source-file {given} (or a "
                      f"repo path ending in /{name}) or leave it out", code="usage")
