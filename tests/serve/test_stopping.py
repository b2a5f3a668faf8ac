"""SIGTERM in a certification worker (meshcert.serve.stopping), each case in a process of its
own: the signal is real, and the worker's exit status is what the pool sees."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PRELUDE = """
import os, signal
from meshcert.serve import stopping

class Slice:
    def __init__(self, index): self.index = index

stopping.install()
"""


def run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_an_idle_worker_ends_at_once_and_cleanly() -> None:
    done = run("""
        os.kill(os.getpid(), signal.SIGTERM)
        print("still here")
    """)
    assert (done.returncode, done.stdout) == (0, "")


def test_a_busy_worker_unwinds_its_certification_then_ends_143() -> None:
    done = run("""
        with stopping.busy():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                print("not reached")
            finally:
                print("unwound: the jobs are cancelled here")
    """)
    assert (done.returncode, done.stdout) == (143, "unwound: the jobs are cancelled here\n")
    assert "Traceback" not in done.stderr


def test_the_signal_waits_for_the_last_submitted_jobs_id() -> None:
    done = run("""
        with stopping.busy(), stopping.submitting(2) as on_state:
            os.kill(os.getpid(), signal.SIGTERM)
            print("held while submitting")
            on_state(Slice(0), None)
            print("first job known")
            on_state(Slice(1), None)  # the last id is known: the signal acts now
            print("not reached")
    """)
    assert done.returncode == 143
    assert done.stdout == "held while submitting\nfirst job known\n"


def test_a_second_sigterm_does_not_interrupt_the_cancel_requests() -> None:
    done = run("""
        with stopping.busy():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            finally:
                os.kill(os.getpid(), signal.SIGTERM)  # the pool terminates its workers too
                print("every cancel request sent")
    """)
    assert (done.returncode, done.stdout) == (143, "every cancel request sent\n")
