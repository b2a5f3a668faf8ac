"""Talking to the Hugging Face Hub without downloading packages.

- `settings`: endpoint (HF_ENDPOINT, read at call time), timeouts, retry bounds, workers;
- `errors`: every Hub failure becomes a `HubError` carrying a finding code; tokens redacted;
- `retry`: bounded retries with backoff that honours Retry-After;
- `api`: the huggingface_hub client calls (resolve once, refs, listing fallback);
- `listing`: Hub file listings -> `RemoteFile` records and `FileFact`s (pure);
- `revision`: pinned or moving revision (pure);
- `files`: file content over HTTP (ranges, capped reads, streaming) with auth only on the Hub;
- `range_source`: a `ByteSource` over ranged reads, for GGUF header reads;
- `verify`: streamed SHA-256 of whole artifacts, in parallel, nothing kept.
"""
