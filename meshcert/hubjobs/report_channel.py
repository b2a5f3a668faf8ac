"""A report carried through a job's logs.

A job prints its cert.json as gzip + base64 in numbered lines with a tag, then an end line
with the SHA-256 of the JSON; the launcher reads the job's logs back and reassembles it. Lines
are short (logs are line-oriented and may be re-wrapped or interleaved with other output), and
a missing, duplicated-but-different or mangled chunk is an error naming what is wrong, never a
report that says less than the job wrote.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
import zlib
from collections.abc import Iterable

from meshcert.core.errors import MeshcertError

PREFIX = "MESHCERT-REPORT"
CHUNK = 3000  # base64 characters per line
_LINE = re.compile(rf"{PREFIX} (?P<tag>\S+) (?P<i>\d+)/(?P<n>\d+) (?P<data>[A-Za-z0-9+/=]+)$")
_END = re.compile(rf"{PREFIX}-END (?P<tag>\S+) (?P<n>\d+) (?P<sha>[0-9a-f]{{64}})$")


class ChannelError(MeshcertError, ValueError):
    pass


def encode(report_json: bytes, tag: str) -> list[str]:
    data = base64.b64encode(gzip.compress(report_json, mtime=0)).decode()
    chunks = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [""]
    lines = [f"{PREFIX} {tag} {i}/{len(chunks)} {c}" for i, c in enumerate(chunks)]
    lines.append(f"{PREFIX}-END {tag} {len(chunks)} {hashlib.sha256(report_json).hexdigest()}")
    return lines


def is_channel_line(line: str) -> bool:
    """Whether a log line carries a piece of a report (a chunk or the end line), which a
    person following the logs has no use for: the launcher decodes it instead."""
    return PREFIX in line


def decode(lines: Iterable[str], tag: str) -> bytes:
    """The report JSON a job with `tag` printed; ChannelError when it is not all there."""
    chunks: dict[int, str] = {}
    count: int | None = None
    digest: str | None = None
    for raw in lines:
        line = raw.strip()
        at = line.find(PREFIX)
        if at < 0:
            continue
        line = line[at:]  # a log prefix (timestamp) before the marker is dropped
        if (end := _END.match(line)) and end["tag"] == tag:
            count, digest = int(end["n"]), end["sha"]
        elif (item := _LINE.match(line)) and item["tag"] == tag:
            index = int(item["i"])
            if chunks.get(index, item["data"]) != item["data"]:
                raise ChannelError(f"report chunk {index} of {tag} appears twice, differently")
            chunks[index] = item["data"]
    if count is None or digest is None:
        raise ChannelError(f"the logs hold no complete report for {tag} (no end line: the "
                           "job stopped before printing it)")
    missing = [i for i in range(count) if i not in chunks]
    if missing:
        raise ChannelError(f"report chunks {missing[:5]} of {tag} are missing from the logs")
    try:
        report = gzip.decompress(base64.b64decode("".join(chunks[i] for i in range(count))))
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise ChannelError(f"the report of {tag} does not decode: {exc}") from exc
    if hashlib.sha256(report).hexdigest() != digest:
        raise ChannelError(f"the report of {tag} does not match its SHA-256")
    return report
