"""What huggingface_hub itself may write on stderr while meshcert talks to the Hub.

meshcert retries and reports outcomes itself, so the client's own warnings about retried HTTP
errors are silenced; its tqdm bars (one per upload, redrawn with cursor escapes) are progress
on a terminal and noise in a CI log or a pipe, so whoever knows where stderr goes (the CLI)
decides whether they are drawn. Both go through the library's public switches. meshcert's own
retries are said (a line each) only where the CLI asks for it: `announce_retries`.
"""

from __future__ import annotations

from collections.abc import Callable

Notice = Callable[[str], None]
_notices: list[Notice] = []  # where each retry is announced (the CLI: a line on stderr)


def announce_retries(notice: Notice | None) -> None:
    """From now on, say each retry of a Hub request through `notice` (None: say nothing, the
    default): the attempt that failed, why, and the wait before the next
    (meshcert.core.hub.retry). Importing this module loads no HTTP client."""
    _notices[:] = [notice] if notice is not None else []


def retry_notices() -> list[Notice]:
    return list(_notices)


def quiet_client_logs() -> None:
    """Only the client's errors are logged, not its warnings about retried requests."""
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()


def hide_client_bars() -> None:
    """The client draws no progress bars (uploads, downloads) from here on."""
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
