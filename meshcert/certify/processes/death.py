"""How a worker process died, said so that a reader can act on it.

A worker that runs llama.cpp code on model data can die in ways no Python exception reports:
killed by a signal (SIGSEGV in ggml's AMX matmul on a VM that advertises AMX but faults on it,
SIGABRT from a GGML_ASSERT), a non-zero exit, or a hang past its wall clock. `WorkerDeath`
records which worker, on which model file, how, and the last lines it wrote to stderr; the
checks turn it into a `llama_cpp_crashed` finding (the gate is incomplete, never passed).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

STDERR_TAIL_LINES = 8
STDERR_TAIL_CHARS = 1500


def signal_name(returncode: int) -> str | None:
    """'SIGSEGV' for a child killed by signal 11 (returncode -11); None for a normal exit."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def stderr_tail(text: str) -> str:
    """The last few non-blank lines of a worker's stderr, bounded."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-STDERR_TAIL_LINES:])[-STDERR_TAIL_CHARS:]


def cpu_advertises(flag: str, cpuinfo: str = "/proc/cpuinfo") -> bool:
    try:
        text = Path(cpuinfo).read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return any(flag in line.split() for line in text.splitlines() if line.startswith("flags"))


@dataclass(frozen=True)
class WorkerDeath:
    """One worker that did not finish its job."""

    worker: str  # what it was doing, e.g. "llama.cpp decode (source model)"
    model: str | None  # the model file it was working on
    returncode: int | None  # None: it outlived its wall clock and was killed
    stderr: str = ""  # the tail of its stderr (stderr_tail)
    timeout_s: float | None = None

    @property
    def signal(self) -> str | None:
        return signal_name(self.returncode) if self.returncode is not None else None

    @property
    def how(self) -> str:
        if self.returncode is None:
            return f"outlived its {self.timeout_s:.0f} s wall clock and was killed" \
                if self.timeout_s is not None else "hung and was killed"
        if self.returncode < 0:
            return f"was killed by {self.signal}"
        return f"exited with status {self.returncode}"

    def hint(self) -> str | None:
        """What the evidence points at, when it points somewhere."""
        native_fault = self.signal in ("SIGSEGV", "SIGILL", "SIGBUS")
        if native_fault and ("amx" in self.stderr.lower() or cpu_advertises("amx_tile")):
            return ("this CPU advertises AMX, and a native llama.cpp build runs ggml's AMX "
                    "kernels; a hypervisor that faults on AMX tiles kills it at the first "
                    "decode: rebuild llama-cpp-python portable (see the remediation)")
        if native_fault and cpu_advertises("avx512f"):
            return ("this CPU advertises AVX-512; if llama-cpp-python was built natively on "
                    "another machine, rebuild it here portable (see the remediation)")
        return None

    def describe(self) -> str:
        where = f" on {self.model}" if self.model else ""
        text = f"{self.worker}{where} {self.how}"
        hint = self.hint()
        if hint:
            text += f"; {hint}"
        if self.stderr:
            text += f"; its last stderr lines: {' | '.join(self.stderr.splitlines())}"
        return text
