"""The worker processes a certification asks for, started ahead of need.

`prestart_workers()` boots the chat-template render worker and llama.cpp's GGUF-parser worker
in the background (meshcert.certify.processes.spare), so their interpreter start runs on the other
core while this process imports the engine, reads the manifest and hashes the files. Importing this
module is cheap (no jinja2, no pydantic, no libggml), so a caller can do it first thing:
`certify_package` calls it too, and a second call is a no-op.
"""

from __future__ import annotations


def prestart_workers() -> None:
    from meshcert.certify.chat_template.render import SPARE_WORKER
    from meshcert.certify.workers.llama_gguf import spare_worker

    SPARE_WORKER.start()
    spare_worker().start()
