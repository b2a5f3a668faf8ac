"""Ask the two worker processes about a view at the same time: llama.cpp's GGUF parser
(`meshcert.certify.workers.llama_gguf`) and the chat-template audit
(`meshcert.certify.template_audits`).

`ask_parser_early(view, paths)` asks llama.cpp's parser as soon as the local loader knows which
GGUFs it will read, when the answer does not depend on their headers
(`llama_gguf.asks_before_headers`). `start(view)` needs only the headers, so the local loader
calls it as soon as they are read,
while the files are hashed (on its own thread: meshcert.certify.sources.local); once the
questions are asked it imports every check module (CPU work that overlaps the hashing and the
waits: the checks run next). `finish()` waits for the answers and returns what failed, for the
caller to contain. Their answers land on the view as facts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from meshcert.certify.view import PackageView

Attach = Callable[[PackageView], None]
PARSER_FAILED = "asking llama.cpp's GGUF parser failed"


class WorkerQuestions:
    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._failures: dict[str, Exception] = {}
        self._parser_asked = False
        self._started = False

    @property
    def started(self) -> bool:
        return self._started

    def ask_parser_early(self, view: PackageView, paths: list[str]) -> None:
        from meshcert.certify.workers.llama_gguf import asks_before_headers, attach_verdicts

        if self._parser_asked or not asks_before_headers(paths):
            return
        self._parser_asked = True
        self._ask_on_thread(PARSER_FAILED, lambda v: attach_verdicts(v, paths=paths),
                            "llama_cpp_gguf", view)

    def start(self, view: PackageView) -> None:
        if self._started:
            return
        self._started = True
        from meshcert.certify.template_audits import attach_template_audits
        from meshcert.certify.workers.llama_gguf import attach_verdicts

        if not self._parser_asked:
            self._parser_asked = True
            self._ask_on_thread(PARSER_FAILED, attach_verdicts, "llama_cpp_gguf", view)
        self._ask_on_thread("auditing the chat templates failed", attach_template_audits,
                            "chat_templates", view)
        from meshcert.certify.checks import all_checks

        all_checks()

    def _ask_on_thread(self, what: str, attach: Attach, check: str, view: PackageView) -> None:
        """(what failed, how to ask, the check the answer is for: its time is the check's)"""
        thread = threading.Thread(target=self._ask, args=(what, attach, check, view),
                                  daemon=True, name=f"worker-question-{len(self._threads)}")
        self._threads.append(thread)
        thread.start()

    def _ask(self, what: str, attach: Attach, check: str, view: PackageView) -> None:
        started = time.perf_counter()
        try:
            attach(view)
        except Exception as exc:  # containment: the caller reports it; a check may retry
            self._failures[what] = exc
        finally:
            view.work_ms[check] = (time.perf_counter() - started) * 1000

    def finish(self, view: PackageView) -> list[tuple[str, Exception]]:
        """Wait for both answers (asking now if `start` was never called)."""
        self.start(view)
        for thread in list(self._threads):
            thread.join()
        return sorted(self._failures.items(), key=lambda item: item[0])
