"""The core every part of meshcert sits on: the GGUF header reader, the Hub client and its
byte sources, hashing, atomic writes, the finding codes and findings, package refs, progress,
the version. Nothing here imports the certifier, the writer, publishing, HF Jobs, evidence,
reports or the CLI."""
