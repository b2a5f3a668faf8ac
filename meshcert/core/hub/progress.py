"""What huggingface_hub itself may write on stderr while meshcert talks to the Hub.

meshcert retries and reports outcomes itself, so the client's own warnings about retried HTTP
errors are silenced; its tqdm bars (one per upload, redrawn with cursor escapes) are progress
on a terminal and noise in a CI log or a pipe, so whoever knows where stderr goes (the CLI)
decides whether they are drawn. Both go through the library's public switches.
"""

from __future__ import annotations


def quiet_client_logs() -> None:
    """Only the client's errors are logged, not its warnings about retried requests."""
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()


def hide_client_bars() -> None:
    """The client draws no progress bars (uploads, downloads) from here on."""
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
