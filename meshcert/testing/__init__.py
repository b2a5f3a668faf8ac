"""Synthetic (tiny or multi-GB) source models written with the gguf library, and
`write_package`, which splits one with the writer into the v1 package the demo, tests and
benches certify."""

from meshcert.testing.models import (
    ModelSpec,
    TensorSpec,
    glm_dsa_spec,
    llama_spec,
    mmproj_spec,
    moe_mtp_spec,
)
from meshcert.testing.writer import PackageInfo, write_package, write_source_gguf

__all__ = [
    "ModelSpec", "TensorSpec", "glm_dsa_spec", "llama_spec", "mmproj_spec", "moe_mtp_spec",
    "PackageInfo", "write_package", "write_source_gguf",
]
