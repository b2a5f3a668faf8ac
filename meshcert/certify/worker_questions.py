"""Ask the two worker processes about a view at the same time: llama.cpp's GGUF parser
(`meshcert.certify.workers.llama_gguf`) and the chat-template audit
(`meshcert.certify.template_audits`).

`start(view)` needs only the headers, so the local loader calls it as soon as they are read,
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


class WorkerQuestions:
    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._failures: dict[str, Exception] = {}

    @property
    def started(self) -> bool:
        return bool(self._threads)

    def start(self, view: PackageView) -> None:
        if self._threads:
            return
        from meshcert.certify.template_audits import attach_template_audits
        from meshcert.certify.workers.llama_gguf import attach_verdicts

        # (what failed, how to ask, the check the answer is for: its time is the check's)
        questions: tuple[tuple[str, Attach, str], ...] = (
            ("asking llama.cpp's GGUF parser failed", attach_verdicts, "llama_cpp_gguf"),
            ("auditing the chat templates failed", attach_template_audits, "chat_templates"))
        for n, (what, attach, check) in enumerate(questions):
            thread = threading.Thread(target=self._ask, args=(what, attach, check, view),
                                      daemon=True, name=f"worker-question-{n}")
            self._threads.append(thread)
            thread.start()
        from meshcert.certify.checks import all_checks

        all_checks()

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
        for thread in self._threads:
            thread.join()
        return sorted(self._failures.items(), key=lambda item: item[0])
