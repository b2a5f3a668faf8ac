"""Publishing a certified layer package on the Hugging Face Hub (`meshcert package publish`).

- `plan`: what to upload, in which commits (sized under the Hub's limits), and what is already
  there;
- `publication_gate`: mesh-llm's HF publication gate on the local manifest, before anything is
  hashed, certified or uploaded;
- `catalog`: the catalog entry (`entries/<owner>/<repo>.json`) with the package pinned;
- `hub_writer`: the small interface over huggingface_hub (uploads over plain LFS, never Xet);
- `requests`: what a publish is asked (PublishRequest) and what it reports (PublishResult);
- `service`: the use case, request in, result out, the model card (`meshcert.writer.card`)
  committed last. It never prints and never exits;
- `attestation`: the signed attestation committed on top of a passed publish (`--attest-key`);
- `streaming`, `write_and_publish`: `package write --publish`, each artifact uploaded as soon as
  it is written and verified.
"""
