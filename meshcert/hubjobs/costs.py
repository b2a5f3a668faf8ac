"""How much disk, time and money a job needs, from its bytes and stated, conservative rates.

The rates are meshcert's own assumptions, printed with every plan so a reader can redo the
sum; they are chosen low (a mount fetches bytes lazily from the Hub's storage, and a job's
vCPUs are shared) so a job is not killed by its own timeout, and the maximum cost is what the
timeout costs: the Hub bills while a job starts and runs, and stops billing when it ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from meshcert.hubjobs.hardware import Flavor

WRITE_BYTES_PER_S = 25e6  # read from the mount + split + hash + upload over LFS, end to end
CERTIFY_BYTES_PER_S = 50e6  # read from the mount + SHA-256
FIXED_S = 15 * 60  # image start, pip install meshcert, certification of the result
ROUND_S = 5 * 60


@dataclass(frozen=True)
class Budget:
    timeout_s: int
    jobs: int
    flavor: Flavor

    @property
    def max_cost_usd(self) -> float:
        return round(self.jobs * self.flavor.cost_usd(self.timeout_s), 6)


def timeout_for(n_bytes: int, bytes_per_s: float, fixed_s: int = FIXED_S) -> int:
    """Seconds for `n_bytes` at `bytes_per_s` plus the fixed start-up, rounded up to 5 min."""
    seconds = fixed_s + n_bytes / bytes_per_s
    return int(math.ceil(seconds / ROUND_S) * ROUND_S)


def streaming_write_disk(largest_artifact: int, in_flight: int = 4,
                         scratch: int = 1 << 30) -> int:
    """Disk a `package write --publish --delete-after-upload` needs: the artifacts being
    written or uploaded at once (2 writers + 2 uploads), plus scratch."""
    return in_flight * largest_artifact + scratch
