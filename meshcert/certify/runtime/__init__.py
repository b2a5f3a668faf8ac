"""Runtime gates: smoke-test an OpenAI-compatible endpoint (`--api-base`).

One job per module:
- `client.py`: the httpx client (auth header, timeouts, overall deadline, bounded bodies) and
  the classification of transport failures;
- `sse.py`: an incremental Server-Sent Events parser (bytes in, events out);
- `stream.py`: the streaming chat completion rules and timings (TTFT, inter-token latency);
- `rules.py`: mesh-llm's pass rules for the JSON bodies;
- `redact.py`: keeps the API key out of everything the gates report;
- `stats.py`: percentiles;
- `requests.py`: `RuntimeRequest`, what the gates are asked to do;
- `gates.py`: the gate functions and `run_runtime_gates`.
"""
