"""The worker boundary: every child process a certification starts, and everything that runs
llama.cpp code.

llama.cpp is C++ run on untrusted model data, and it can die in ways Python cannot catch (a
SIGSEGV in ggml's AMX matmul on a VM that advertises AMX but faults on it, a GGML_ASSERT abort,
a hang). So nothing outside this package imports `llama_cpp` or loads a ggml library
(`tests/certify/workers/test_boundary.py` holds that): the certifier talks to llama.cpp only
through worker processes, and a worker's death comes back as a `WorkerDeath` that the checks
report as `llama_cpp_crashed` (the gate incomplete, the report written as always).

- `llama_library`: where llama-cpp-python's llama.cpp is, found without importing it;
- `llama_gguf` + `llama_gguf_worker`: llama.cpp's GGUF parser as a second opinion on files;
- `llama_reopen`: re-open a composed stage GGUF with that parser (`--materialize`);
- `llama_decode` + `llama_decode_worker`: greedy decoding (`--parity`);
- `prestart`: the workers started ahead of need (the chat-template render worker,
  meshcert/certify/chat_template/worker.py, is started the same way).

They sit on meshcert.certify.processes (spare processes, how a child died). What uses them sits
above: split parity (meshcert.certify.split_parity: compose, decode both models, compare) and
the questions asked of two workers at once (meshcert.certify.worker_questions).
"""

from meshcert.certify.workers.prestart import prestart_workers

__all__ = ["prestart_workers"]
