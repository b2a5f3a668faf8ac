"""The GGUFs of a package view: its carriers, fragments and source facts (what the checks read
through a PackageView; the reader itself is meshcert.core.gguf)."""
