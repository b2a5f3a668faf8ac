"""Format adapters: each package schema (v1 manifest; v2 manifest + metadata carrier) turned
into the one format-neutral description the checks read (artifacts with roles and layer
ordinals, tensors with their owning artifact and extents, source identity, generation).

- `meshcert.certify.manifest_model`: `ArtifactEntry` and the v1 adapter;
- `meshcert.certify.formats.v2_layout`: v2 catalog entries -> `ArtifactEntry` (roles from paths);
- `meshcert.certify.formats.v2_carrier`: the carrier's locator arrays -> the tensor catalog;
- `meshcert.certify.formats.package_id`: the canonical v2 package id.
"""
