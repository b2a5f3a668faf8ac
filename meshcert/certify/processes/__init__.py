"""Child processes, started and ended: the machinery every worker uses, and nothing else.

- `spare`: a process started ahead of need, handed over when asked for, discarded at exit
  (the chat-template render worker and llama.cpp's GGUF parser use one);
- `death`: how a child died (signal, exit status, wall clock), said so a reader can act on it.

It imports nothing of the certifier, so the chat-template sandbox and the llama.cpp workers
(meshcert.certify.workers) can both sit on it.
"""
