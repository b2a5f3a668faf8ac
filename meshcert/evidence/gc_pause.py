"""The cyclic garbage collector paused while evidence is parsed or the table is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Parsing (and building the table from what it parsed) allocates hundreds of thousands
    of small tuples and dicts and frees none of them; the cyclic collector would rescan them
    over and over (a third of the run time). Reference counting still frees everything; the
    collector is back on afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
