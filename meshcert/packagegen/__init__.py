"""Write real (tiny) layer packages with the gguf library: the demo, tests and benches use it."""

from meshcert.packagegen.models import (
    ModelSpec,
    TensorSpec,
    glm_dsa_spec,
    llama_spec,
    mmproj_spec,
    moe_mtp_spec,
)
from meshcert.packagegen.writer import PackageInfo, write_package, write_source_gguf

__all__ = [
    "ModelSpec", "TensorSpec", "glm_dsa_spec", "llama_spec", "mmproj_spec", "moe_mtp_spec",
    "PackageInfo", "write_package", "write_source_gguf",
]
