"""Talking to the Hugging Face Hub: the one door every part of meshcert goes through.

- `api`: `HubApi`, the only holder of a huggingface_hub client: every API call of every part
  (certify, catalog, publish, HF Jobs, evidence) is gated, counted, retried within a bounded
  budget, mapped to a `HubError` and redacted there (resolve once, refs, listing fallback);
- `access`: before work that writes or spends, a token, a Hub that answers, the right to write;
- `settings`: endpoint (HF_ENDPOINT, read at call time), timeouts, retry bounds, workers;
- `errors`: every Hub failure becomes a `HubError` carrying a finding code; tokens redacted;
- `token`: the token huggingface_hub would send, and a redactor hiding it;
- `retry`: bounded retries with backoff that honours Retry-After;
- `deadline`: a wall-clock limit for a client call that takes no timeout;
- `gate`: at most N requests in flight, and a 429's Retry-After pauses them all;
- `progress`: whether the client logs its retries and draws its bars;
- `listing`: Hub file listings -> `RemoteFile` records and `FileFact`s (pure);
- `revision`: pinned or moving revision (pure);
- `files`: file content over HTTP (ranges, capped reads, streaming) with auth only on the Hub;
- `range_source`: a `ByteSource` over ranged reads, for GGUF header reads;
- `verify`: streamed SHA-256 of whole artifacts, in parallel, nothing kept.
"""
