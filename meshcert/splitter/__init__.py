"""Write layer packages from a GGUF model: plan from the headers, stream the bytes, certify.

The package writer of `meshcert package write` / `package plan`, beside `meshcert/certify/` (which
it
imports: the GGUF header reader, the v2 formats, the package id, certification itself) and
imported by nothing there. Modules, each with one job:

- `wire`: GGUF bytes (KV entries, tensor infos, preamble, alignment), pure;
- `roles`: which artifact a tensor goes to, by name (writer.md's routing table), pure;
- `source`: the source model (one GGUF, a split set, or Hub files): headers and byte readers;
- `hub_source`: Hub coordinates resolved to a commit, files read with HTTP ranges;
- `plan`: the exact artifact list (paths, ids, tensors, offsets, byte sizes) for v2 and v1;
- `carrier`: the v2 metadata carrier's bytes from the payload parts' directories;
- `stream`: tensor bytes from the source into the artifacts through reused buffers, hashed;
- `verify`: re-opened headers compared with the plan;
- `manifest`, `card`: model-package.json and README.md from the plan and the digests;
- `hooks`: the after-artifact command;
- `facts`: the digests handed to certification, so it does not hash anything again;
- `write`: the whole sequence, refusals first; `plan_report`: what `package plan` shows.
"""
