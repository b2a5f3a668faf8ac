"""GGUF header model, reader and the tensor-name knowledge the checks use."""
