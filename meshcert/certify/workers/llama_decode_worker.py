"""Greedy decoding with llama.cpp in a worker process (started by
`meshcert.certify.workers.llama_decode`).

Run as ``python llama_decode_worker.py``. It reads one JSON request on stdin::

    {"model": path, "prompts": [str], "tokens": int, "n_ctx": int, "n_threads": int,
     "seed": int, "out": dir}

and writes JSON lines on stdout: ``{"ready": true}`` once llama_cpp is imported (or
``{"unavailable": why}``), ``{"loaded": true}`` once the model is loaded, ``{"advance": 1}``
per generated token, ``{"run": i, "prompt_tokens": [...], "tokens": [...], "logits": file}``
per prompt (the logits of every generated position, float32, saved with numpy in `out`), and
``{"error": type, "message": text}`` when llama.cpp refuses the model with a Python exception.
Anything worse (a signal, an abort, a hang) is seen by the parent as the process's death.

It imports nothing from meshcert: it runs llama.cpp code on model data, which may crash, and a
crash must take only this process down.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def emit(item: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(item) + "\n")
    sys.stdout.flush()


def last_logits(llama_cpp: Any, np: Any, llm: Any) -> Any:
    """The logits of the last evaluated position, copied out of llama.cpp's buffer (the
    Llama object keeps no scores unless logits_all); a row that is not a real distribution
    (all equal, or not finite) is an error, never a silent pass."""
    pointer = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    if not pointer:
        raise ValueError("llama.cpp returned no logits")
    row = np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)).astype(np.float32, copy=True)
    if not np.all(np.isfinite(row)) or float(row.max()) == float(row.min()):
        raise ValueError("llama.cpp returned degenerate logits")
    return row


def decode(request: dict[str, Any]) -> None:
    try:
        import llama_cpp
        import numpy as np
    except ImportError as exc:
        emit({"unavailable": f"llama-cpp-python is not importable: {exc}"})
        return
    emit({"ready": True})
    llm = llama_cpp.Llama(
        model_path=request["model"], n_ctx=request["n_ctx"], n_threads=request["n_threads"],
        n_threads_batch=request["n_threads"], n_gpu_layers=0, seed=request["seed"],
        logits_all=False, verbose=False)
    emit({"loaded": True})
    try:
        for index, prompt in enumerate(request["prompts"]):
            prompt_tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
            if len(prompt_tokens) + request["tokens"] > request["n_ctx"]:
                raise ValueError(f"prompt {prompt[:40]!r} + {request['tokens']} tokens exceed "
                                 f"the context of {request['n_ctx']}")
            llm.reset()
            llm.eval(prompt_tokens)
            tokens: list[int] = []
            rows = []
            for _ in range(request["tokens"]):
                row = last_logits(llama_cpp, np, llm)
                token = int(np.argmax(row))
                rows.append(row)
                tokens.append(token)
                llm.eval([token])
                emit({"advance": 1})
            target = os.path.join(request["out"], f"run-{index}.npy")
            np.save(target, np.stack(rows))
            emit({"run": index, "prompt_tokens": [int(t) for t in prompt_tokens],
                  "tokens": tokens, "logits": target})
    finally:
        llm.close()


def main() -> None:
    # this file's folder is certify/workers: keep its modules from shadowing anything
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    request = json.loads(sys.stdin.read())
    try:
        decode(request)
    except (ValueError, RuntimeError, OSError) as exc:  # llama.cpp refused the model
        emit({"error": type(exc).__name__, "message": str(exc)[:500]})


if __name__ == "__main__":
    main()
