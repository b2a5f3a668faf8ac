"""Write layer packages from a GGUF model: plan from the headers, stream the bytes, certify.

The package writer of `meshcert package write` / `package plan`, beside `meshcert/certify/`
(which it imports: the v2 formats, the package id, certification itself) and imported by
nothing there; GGUF bytes are read and written by `meshcert/core/gguf/` (`reader`, `wire`).
Modules, each with one job:

- `roles`: which artifact a tensor goes to, by name (writer.md's routing table), pure;
- `source`: the source model (one GGUF, a split set, or Hub files): headers and byte readers;
- `hub_source`: Hub coordinates resolved to a commit, files read with HTTP ranges;
- `inspect_source`: the source audited by `models inspect`'s rules before anything is written;
- `generation_defaults`, `publisher`: the request defaults and publisher metadata, decided and
  validated before a byte is written;
- `plan`, `artifact`: the exact artifact list (paths, ids, tensors, offsets, byte sizes) for v2
  and v1, each artifact's header bytes and size;
- `carrier`: the v2 metadata carrier's bytes from the payload parts' directories;
- `publication_gate`: mesh-llm's HF publication gate applied to the plan (`--publish`);
- `stream`: tensor bytes from the source into the artifacts through reused buffers, hashed;
- `verify`: re-opened headers compared with the plan;
- `manifest`, `card`: model-package.json and README.md from the plan and the digests;
- `hooks`: the after-artifact command;
- `facts`: the digests handed to certification, so it does not hash anything again;
- `certify_step`: the closing certification, with those digests;
- `errors`: why a write stops (refused, aborted, interrupted);
- `write`: the whole sequence, refusals first; `plan_report`: what `package plan` shows.
"""
