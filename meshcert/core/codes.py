"""The code table: every finding code meshcert can emit, its default severity and remediation.

Codes are a public contract (tests and downstream scripts assert them). Where mesh-llm's package
tool already names a problem, the same code is used. Checks refer to codes; reports render the
remediation from here. Add a row here before emitting a new code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Raised:
    """A code emitted at another severity than its default: where, and what to do then."""

    severity: Severity
    where: str
    remediation: str


@dataclass(frozen=True)
class CodeEntry:
    """A code's default severity and remediation. `raised`: the remediation when a check emits
    the code at another severity (a code shared by a format that ignores a problem and one that
    refuses it: the refusal must say what to do, not that nothing is)."""

    code: str
    severity: Severity
    group: str
    remediation: str
    raised: tuple[Raised, ...] = ()

    def remediation_for(self, severity: Severity) -> str:
        """The remediation that fits a finding of this code at `severity`."""
        return next((r.remediation for r in self.raised if r.severity == severity),
                    self.remediation)


def _rows(group: str, severity: Severity, rows: dict[str, str]) -> dict[str, CodeEntry]:
    return {code: CodeEntry(code, severity, group, text) for code, text in rows.items()}


def _raise(code: str, severity: Severity, where: str, remediation: str) -> None:
    """Give `code` its own remediation for the findings checks emit at `severity` (`where`)."""
    row = CODES[code]
    CODES[code] = CodeEntry(row.code, row.severity, row.group, row.remediation,
                            (*row.raised, Raised(severity, where, remediation)))


E: Severity = "error"
W: Severity = "warning"
I: Severity = "info"  # noqa: E741

CODES: dict[str, CodeEntry] = {}

# --- Ref and input -------------------------------------------------------------------------
CODES |= _rows("ref", E, {
    "direct_gguf_input": "Certify the layer package (a directory with model-package.json or an "
    "hf:// ref), not a single .gguf file.",
    "invalid_package_ref": "Use hf://namespace/repo[@revision], hf://namespace/repo:revision or a "
    "local directory holding model-package.json.",
    "unpinned_revision": "Pin the immutable 40-hex commit SHA: hf://ns/repo@<sha> (or pass "
    "--allow-unpinned for a pre-publication check).",
    "hub_repo_not_found": "Check the repository id and that your token can see it.",
    "hub_revision_not_found": "Check the revision: it must exist in the repository.",
    "hub_gated": "Accept the repository's conditions on the Hub and set HF_TOKEN.",
    "hub_disabled": "The repository is disabled on the Hub; it cannot be certified.",
    "hub_unauthorized": "Set HF_TOKEN to a token with read access to the repository.",
    "hub_unreachable": "The Hub could not be reached or kept failing; retry later or check "
    "HF_ENDPOINT. Certification is incomplete, not passed.",
})

# --- Manifest ------------------------------------------------------------------------------
CODES |= _rows("manifest", E, {
    "missing_manifest": "Add model-package.json at the package root.",
    "invalid_manifest_json": "Write the manifest as strict UTF-8 JSON (no NaN/Infinity, no "
    "comments, nesting under 64 levels).",
    "manifest_too_large": "Keep model-package.json under 16 MiB; peers refuse larger manifests.",
    "duplicate_manifest_key": "Remove the repeated key: JSON readers disagree on which value wins.",
    "unsupported_schema_version": "Set schema_version to 1; consumers never load unknown versions.",
    "invalid_format": "Set format to \"layer-package\".",
    "empty_model_id": "Set model_id to the model coordinate, e.g. ns/repo:QUANT.",
    "invalid_activation_width": "Set activation_width to the model's embedding length (> 0).",
    "empty_source_model_path": "Set source_model.path to the source artifact's file name.",
    "invalid_source_model_sha256": "Set source_model.sha256 (and files[].sha256) to 64 hex "
    "characters.",
    "empty_source_identity_field": "Remove the blank source_model field or give it a value.",
    "missing_skippy_abi_version": "Set skippy_abi_version (major.minor[.patch]).",
    "incompatible_skippy_abi_version": "Build the package for the runtime's ABI: same major, "
    "minor not above the runtime's.",
    "empty_projector_kind": "Set the projector kind (\"mmproj\").",
    "unsupported_projector_kind": "Only projector kind \"mmproj\" is supported.",
    "too_few_layers": "A split needs at least 2 layers.",
    "missing_manifest_field": "Add the required field to model-package.json.",
    "invalid_manifest_field": "Give the field the type and range the schema requires.",
    "missing_shared_artifact": "The shared section must hold metadata, embeddings and output.",
})
CODES |= _rows("manifest", W, {
    "model_id_not_coordinate": "Use a model coordinate such as ns/repo:QUANT, not a file or "
    "directory name.",
    "missing_activation_width": "Add activation_width (routing and topology planning use it).",
    "missing_created_at": "Set created_at_unix_secs for provenance.",
})
CODES |= _rows("manifest", I, {
    "unknown_manifest_field": "Nothing to do: schema 1 is additive; this field is ignored by "
    "consumers that do not know it.",
    "skippy_abi_not_checked": "Pass --runtime-abi X.Y.Z to check the ABI against a runtime.",
})
# v2 objects refuse unknown keys (serde deny_unknown_fields): there the same code is an error
_raise("unknown_manifest_field", E, "in a v2 manifest",
       "A v2 manifest refuses unknown fields: mesh-llm cannot parse this one. Remove the "
       "field (re-write the package with a writer that does not emit it), or, when a newer "
       "mesh-llm release defines it, upgrade meshcert and the nodes' mesh-llm to a release "
       "that knows it.")

# --- Layers --------------------------------------------------------------------------------
CODES |= _rows("layers", E, {
    "layer_index_out_of_range": "Layer indexes run from 0 to layer_count-1.",
    "missing_layer": "Add the missing layer entry (one per index).",
    "duplicate_layer": "Keep exactly one entry per layer index.",
})

# --- Artifacts -----------------------------------------------------------------------------
CODES |= _rows("artifacts", E, {
    "unsafe_artifact_path": "Use a relative path of normal components (no '..', '.', empty "
    "components, absolute or drive paths, backslashes).",
    "empty_artifact": "artifact_bytes must be the exact file size and greater than 0.",
    "invalid_tensor_bytes": "tensor_bytes must be 0 exactly when tensor_count is 0.",
    "invalid_artifact_sha256": "sha256 must be 64 hex characters.",
    "artifact_not_file": "Artifacts must be regular files inside the package (no directories, "
    "devices, FIFOs or links leaving the package).",
    "missing_artifact": "Upload or restore the file the manifest names.",
    "artifact_size_mismatch": "Do not trust this file: its size is not the one the manifest "
    "declares (corruption, a partial copy or tampering). Re-download it (or re-write the "
    "package from the source) and compare its size and SHA-256 with the manifest.",
    "artifact_sha256_mismatch": "Do not trust these bytes: the file's SHA-256 is not the one "
    "the manifest declares (corruption or tampering). Re-download it from where the package "
    "was published (or re-write the package from the source) and compare again; never edit "
    "the manifest to match the file.",
    "artifact_sha256_unreadable": "The file could not be read to hash it; check permissions and "
    "that it does not change during certification.",
    "duplicate_artifact_path": "Each artifact entry must name its own file.",
})
CODES |= _rows("artifacts", W, {
    "undeclared_artifact": "Name the .gguf in the manifest or remove it from the package.",
    "artifact_hard_link": "A hard-linked artifact shares storage with a file outside the "
    "package; copy it instead.",
    "verify_cache_rejected": "The --verify-cache file (or some of its entries) was not "
    "written by this user's meshcert for these files (not JSON, an older format, or an entry "
    "whose MAC fails: edited, copied between files, or another key): those files were hashed "
    "again. If nobody should have changed the cache, find out who did; delete the file to "
    "start a clean one.",
})

# --- Hub metadata --------------------------------------------------------------------------
CODES |= _rows("hub", E, {
    "hub_artifact_missing": "Upload the file the manifest names to the published revision.",
    "hub_size_mismatch": "Do not trust the published file: its size on the Hub differs from "
    "the manifest's. Re-write the package from the source, compare it with the manifest, "
    "then re-publish it.",
    "hub_sha256_mismatch": "Do not trust the published bytes: the Hub's LFS SHA-256 differs "
    "from the manifest's. Re-write the package from the source, compare its digests with the "
    "manifest, then re-publish it; never edit the manifest to match the Hub.",
})
CODES |= _rows("hub", W, {
    "hub_artifact_not_lfs": "Store GGUF fragments with Git LFS/Xet so the Hub attests their "
    "sha256.",
})

# --- GGUF structure ------------------------------------------------------------------------
CODES |= _rows("gguf", E, {
    "gguf_bad_magic": "The file is not a GGUF file; regenerate the fragment.",
    "gguf_unsupported_version": "Write GGUF version 2 or 3.",
    "gguf_truncated": "The GGUF header or tensor data is cut short; re-upload the fragment.",
    "gguf_invalid_header": "The GGUF header is malformed (unknown value or tensor type, too many "
    "dimensions, bad alignment, or over the size limits); regenerate the fragment.",
    "gguf_duplicate_key": "A metadata key appears twice in the header; regenerate the fragment.",
    "gguf_duplicate_tensor": "A tensor name appears twice in the fragment.",
    "gguf_tensor_out_of_bounds": "A tensor's data lies beyond the end of the file.",
    "gguf_tensor_overlap": "Two tensors' data ranges overlap.",
    "gguf_misaligned_tensor": "Tensor offsets must be multiples of general.alignment.",
    "tensor_count_mismatch": "Do not trust this fragment: it holds another number of tensors "
    "than the manifest's tensor_count. Re-write the package from the source and compare.",
    "tensor_bytes_mismatch": "Do not trust this fragment: its tensor data is not the size the "
    "manifest's tensor_bytes declares. Re-write the package from the source and compare.",
    "tensor_in_wrong_layer": "Each layers/ file holds only blk.<its index>.* tensors; shared "
    "files hold no layer tensors.",
    "tensor_duplicated_across_artifacts": "Every owned tensor (layer, embedding, final norm, "
    "output) belongs to exactly one artifact; only metadata-role tensors such as "
    "rope_freqs.weight may be copied into several.",
    "metadata_has_tensors": "shared/metadata.gguf must carry no owned tensor (layer, embedding, "
    "final norm, output); metadata-role tensors such as rope_freqs.weight may be copied in.",
    "architecture_mismatch": "All fragments must agree on general.architecture.",
    "layer_count_mismatch": "layer_count must equal {arch}.block_count.",
    "missing_required_tensor": "Add the tensor the architecture requires to its fragment.",
    "metadata_tensor_copies_differ": "Metadata-role tensors (neither blk.N.*, embeddings, output "
    "nor final norm, e.g. rope_freqs.weight) are copied into every fragment and must be "
    "byte-identical (type, shape and data) in each; re-write the fragments from the source.",
    "slice_metadata_mismatch": "Do not trust this fragment as placed: its skippy.slice.* keys "
    "must describe the role the manifest gives the file (stage_index 0 metadata, 1 "
    "embeddings, 2 output, 1000+i for layer i; layer_start/layer_end; include_embeddings/"
    "include_output); re-write the package.",
})
CODES |= _rows("gguf", W, {
    "stale_split_metadata": "Strip split.no, split.count and split.tensors.count from the "
    "fragment (newer writers do): llama.cpp looks for sibling shards when a stage is composed "
    "from a file that still claims to be one shard of several.",
    "activation_width_mismatch": "activation_width should equal {arch}.embedding_length.",
    "unexpected_tensor_for_architecture": "The gguf library does not list this tensor name for "
    "the architecture; check the converter.",
})

# --- llama.cpp gguf_init rules, second opinion, inspect (docs/gguf-rules.md) -----------------
CODES |= _rows("gguf", E, {
    "gguf_tensor_data_not_dense": "llama.cpp requires each tensor's data offset to be the sum of "
    "the previous tensors' sizes, each padded to general.alignment, in tensor-info order (no "
    "gaps, no reordering); rewrite the fragment with a GGUF writer.",
    "gguf_trailing_bytes": "A fragment must end at its last tensor's padded end; strip the bytes "
    "after it (no loader reads them, so they can hide anything).",
    "gguf_empty_key": "llama.cpp refuses a metadata entry with an empty key; remove it.",
    "gguf_invalid_utf8": "GGUF keys, strings and tensor names must be valid UTF-8; fix the "
    "converter that wrote the named text.",
    "gguf_invalid_bool": "A GGUF bool is one byte, 0 or 1; llama.cpp reads any other byte as "
    "true, other readers may not: write 0 or 1.",
    "gguf_big_endian": "Mesh nodes are little-endian and llama.cpp refuses a byte-swapped GGUF; "
    "convert the file to little-endian (gguf-py's gguf_convert_endian).",
    "llama_cpp_gguf_rejected": "llama.cpp's own GGUF parser (gguf_init_from_file) refuses this "
    "file, so no node can load it; the message quotes llama.cpp's reason.",
})
# (llama_cpp_gguf_not_checked, an info finding that let the check pass without llama.cpp, is
# retired: the check is skipped, "not available: ...", and coverage.llama_cpp says it)

# --- Source parity -------------------------------------------------------------------------
CODES |= _rows("source", E, {
    "source_sha256_mismatch": "Do not trust this source file: its SHA-256 is not "
    "source_model.sha256. Re-download the source GGUF from source_model.repo at "
    "source_model.revision and compare again; if it still differs, the package was written "
    "from another file.",
    "source_tensor_missing_from_package": "Every source tensor must be in exactly one artifact.",
    "package_tensor_not_in_source": "The package holds a tensor the source model does not.",
    "source_tensor_data_mismatch": "Do not trust this tensor: its type, shape or bytes differ "
    "from the source's. Re-write the package from the source and compare.",
    "source_not_package_source": "The GGUF given with --source is another model's file (its "
    "architecture, block count or tensors are not the package's): pass the file the package "
    "was written from; its tensors are compared only then.",
})
CODES |= _rows("source", W, {
    "source_identity_unverified": "Do not trust the claimed provenance: source_model.repo, "
    ".revision and the source file's SHA-256 are what the package says, and no one checked "
    "them here (offline, the Hub unreachable, no token for a private or gated repo, or a "
    "file the Hub lists no SHA-256 for). Certify again with the Hub reachable (and HF_TOKEN "
    "for a private repo), or compare the source file's SHA-256 with the Hub's yourself.",
})
_raise("source_identity_unverified", I, "when the recorded revision is a moving name",
       "Do not trust the claimed provenance: a branch or tag name (e.g. `main`) names no "
       "fixed content, so no check can pin what the package was made from. Write the package "
       "again with --source-revision set to the source's 40-hex commit.")

# --- Generation ----------------------------------------------------------------------------
CODES |= _rows("generation", E, {
    "empty_generation_policy_field": "Give the policy field a value or remove it.",
    "unknown_generation_policy_value": "Use auto, dense, direct-sparse, compact-flash, "
    "sparse-chunked or fallback (indexshare: required; experimental: evidence-gated).",
    "unknown_experimental_policy": "Only selected_row_flash, moe_weighted_down and "
    "moe_merged_shared_gate_up are known experimental switches.",
    "model_family_generation_object": "Remove model-family objects (e.g. generation.glm_dsa); "
    "use generation.policy.profile.",
    "backend_specific_generation_field": "Remove backend/kernel fields from the manifest; "
    "benchmark knobs belong in evidence reports.",
    "invalid_generation_threshold_zero": "Thresholds must be positive; remove it to use the "
    "runtime default.",
    "invalid_generation_threshold": "Thresholds are positive integers in their unit.",
    "glm_dsa_contract_violation": "Only emit glm-dsa-v1 for GLM-DSA artifacts with the tensors, "
    "metadata and values the profile requires.",
    "policy_not_supported_by_evidence": "Keep the switch evidence-gated until the evidence report "
    "gives it a promote verdict.",
})
CODES |= _rows("generation", W, {
    "unknown_generation_profile": "The profile is not known to this certifier; it is reported, "
    "never reinterpreted.",
})

# --- Speculative decoding (mesh-llm preflight names) ----------------------------------------
CODES |= _rows("speculative", E, {
    "empty_speculative_default": "Set speculative_decoding.default to a declared strategy id.",
    "missing_speculative_default_strategy": "The default must name a declared strategy.",
    "empty_speculative_proposer_name": "Proposer names must be non-empty.",
    "unsupported_speculative_proposer_type": "Proposer types: native-mtp, ngram-cache, "
    "ngram-suffix.",
    "empty_speculative_strategy_name": "Strategy ids must be non-empty.",
    "empty_speculative_strategy_type": "Give the strategy a type.",
    "unsupported_speculative_strategy_type": "Strategy types: native-mtp, ngram-cache, "
    "ngram-suffix, composite.",
    "missing_speculative_proposer": "The strategy references a proposer that is not declared.",
    "native_mtp_strategy_proposer_type_mismatch": "A native-mtp strategy must reference a "
    "native-mtp proposer.",
    "missing_ngram_strategy_proposer": "An n-gram strategy must reference a declared proposer "
    "or carry its own fields.",
    "ngram_strategy_proposer_type_mismatch": "The n-gram strategy's proposer has another type.",
    "missing_composite_extension_policy": "A composite strategy needs an extension_policy.",
    "missing_composite_primary": "A composite strategy needs a primary proposer.",
    "missing_composite_extender": "A composite strategy needs an extender proposer.",
    "invalid_composite_primary_type": "The composite primary must be a native-mtp proposer.",
    "invalid_composite_extender_type": "The composite extender must be an n-gram proposer.",
    "unsupported_native_mtp_prediction_depth": "native-mtp prediction_depth must be 1.",
    "missing_native_mtp_layers": "native-mtp needs non-empty layer_indices.",
    "native_mtp_layer_out_of_range": "native-mtp layer indices must be < layer_count.",
    "native_mtp_layer_missing_tensors": "The named layer has no blk.N.nextn.* tensors.",
    "invalid_ngram_proposer_window": "Need 1 <= ngram_min <= ngram_max (cache: <= 4; suffix: "
    "3..64).",
    "invalid_ngram_proposer_max_tokens": "max_proposal_tokens must be > 0.",
    "unsupported_ngram_cache_max_window": "ngram-cache supports ngram_max <= 4.",
    "invalid_ngram_cache_history_scope": "ngram-cache history_scope must be \"request\".",
    "invalid_ngram_suffix_history_scope": "ngram-suffix history_scope must be \"request\".",
    "unsupported_ngram_suffix_window": "ngram-suffix needs 3 <= ngram_min <= ngram_max <= 64.",
    "invalid_extension_policy_tokens": "extension_policy needs max_tokens > 0 and, when "
    "given, 0 < initial_tokens <= max_tokens and tail_backoff_proposals > 0.",
    "empty_window_policy_default": "window_policy.default must be non-empty.",
    "invalid_window_policy_zero": "Window sizes must be non-zero.",
    "invalid_window_policy_pipeline_depth": "pipeline_depth must be within 1..64.",
    "invalid_window_policy_bounds": "Need min_window <= max_window.",
    "invalid_window_policy_initial": "Need min_window <= initial_window <= max_window.",
})
CODES |= _rows("speculative", W, {
    "speculative_spec_disagreement": "The spec lists this type but mesh-llm's package tool "
    "rejects it; avoid it until the two agree.",
    "legacy_speculative_strategy_id": "Rename the legacy id native-mtp-n1 to mtp.",
    "operator_only_speculative_strategy": "\"disabled\" is an operator choice, not a package "
    "strategy.",
})

# --- Model card ----------------------------------------------------------------------------
CODES |= _rows("readme", W, {
    "readme_missing": "Add a README.md model card to the package.",
    "readme_missing_field": "Add the named item to the model card.",
    "readme_contradicts_manifest": "The model card states a fact (model or package id, layer "
    "count, generation defaults) otherwise than model-package.json, which is what nodes load: "
    "write the card again from the manifest (`meshcert package write` and `package publish` "
    "do), or correct the stated value.",
    "readme_not_utf8": "The model card is not UTF-8 text, so neither the Hub nor meshcert can "
    "read its facts: save README.md as UTF-8 (or write it again with `meshcert package "
    "write`/`package publish`).",
})

# --- Package v2 (package-v2.md; mesh-llm's own v2 code names) -------------------------------
CODES |= _rows("package_v2", E, {
    "package_identity_mismatch": "Do not trust this manifest: it is not the one its package_id "
    "was computed from (edited after writing). Re-write the package from the source (the "
    "writer computes package_id) and compare; only a manifest you edited yourself, on "
    "purpose, is re-identified from its canonical form.",
    "v1_field_in_v2_manifest": "Remove the v1 key: v2 lists artifacts in artifact_catalog, the "
    "ABI in native_abi_version, and has no generation.policy/thresholds.",
    "inline_tensor_catalog": "Re-write the package with a current writer: the tensor catalog lives "
    "in the metadata carrier's locator keys, not inline in the manifest.",
    "unreleased_manifest_extension": "No longer emitted: publisher_metadata, publisher_defaults "
    "and generation.request_defaults are released (mesh-llm v0.77-v0.79) and validated as "
    "mesh-llm does. Kept for compatibility; an unknown key is unknown_manifest_field.",
    "missing_value": "Set the required value (non-blank).",
    "invalid_digest": "Write the digest as exactly 64 lower-case hex characters (package_id: "
    "'sha256:' + 64).",
    "invalid_identifier": "Use artifact ids and request_defaults profile names made of "
    "[A-Za-z0-9._-] only.",
    "invalid_path": "Use a normalized relative path: no backslash, no '//', no trailing '/', not "
    "absolute, only normal components.",
    "unknown_source_file": "List primary_file in source_model.files (and every source shard).",
    "unknown_artifact": "Name an artifact id that artifact_catalog.entries declares.",
    "invalid_metadata_artifact": "metadata_artifact_id must name a non-sidecar .gguf artifact "
    "(the metadata carrier).",
    "source_identity_mismatch": "Do not trust the claimed provenance: the package names a "
    "source that is not what the Hub (or its own record) holds. Find where the package came "
    "from before using it; re-write it from the source at its real 40-hex commit and compare. "
    "The rules: source_model.repo@revision must hold the primary file with the recorded "
    "SHA-256; source_model.sha256 must equal the primary file's sha256; a "
    "publisher_metadata entry's source_repo/source_revision must equal source_model.repo/"
    ".revision (a 40-hex commit); a typed publisher default must name a publisher_metadata "
    "artifact of an allowed role (compute_dtype: model_config; kv_cache_dtype: model_config "
    "or hf_quant_config).",
    "duplicate_artifact": "Give every artifact a unique id.",
    "duplicate_sidecar": "Give every sidecar a unique (kind, name), every publisher_metadata "
    "entry a unique (role, source_path).",
    "duplicate_tensor": "Each tensor id/name may appear once in the carrier's directory.",
    "layer_out_of_bounds": "Layer ordinals and generation layer indices must be < layer_count.",
    "invalid_dimension": "Tensor dimensions must be non-empty and non-zero.",
    "invalid_alignment": "tensor_alignment must be a power of two.",
    "misaligned_offset": "tensor_offset must be a multiple of its tensor_alignment.",
    "invalid_stored_length": "tensor_size must be > 0 and equal the bytes of the tensor's type "
    "and shape.",
    "storage_out_of_bounds": "tensor_offset + tensor_size must lie within the artifact's "
    "byte_size.",
    "overlapping_storage": "Two tensors of one artifact may not share bytes.",
    "carrier_has_payload": "The metadata carrier holds no tensor data: its length must equal its "
    "GGUF data offset.",
    "invalid_metadata_carrier": "Re-write the carrier: skippy.package.metadata_only = true, "
    "locator_schema = 1, part_count = number of payload artifacts, and the four per-tensor "
    "locator arrays, one item per tensor.",
    "carrier_directory_mismatch": "Do not trust this payload artifact: its own GGUF directory "
    "must agree with the carrier's locators (name, type, shape, offset, size) and hold no "
    "foreign tensor. Re-write the package from the source and compare.",
    "unknown_strategy": "generation.speculative_decoding.default must name a declared strategy.",
    "unknown_proposer": "Name a declared proposer.",
    "invalid_generation_value": "Follow the v2 generation grammar and value rules "
    "(package-v2.md; request_defaults profiles: mesh-llm-0.79.md §1.5-1.7).",
    "source_metadata_mismatch": "Do not trust this carrier: it does not hold the source's "
    "metadata (without split.* keys). Re-write the package from this source and compare.",
})
CODES |= _rows("package_v2", W, {
    "native_abi_differs": "A v2 native_abi_version is the producer's ABI, provenance only "
    "(mesh-llm #1959): the runtime checks its own ABI at load. Load the package once on the "
    "mesh-llm release you serve it with (`mesh-llm models certify <ref> --api-base URL`); if "
    "that runtime refuses it, re-write the package with that runtime's writer.",
    "mesh_certify_would_fail": "The package is valid, but mesh-llm's certifier refuses it (known "
    "mesh-llm gap); certify with meshcert or re-write with shared/common.gguf and sorted "
    "sidecars until mesh-llm is fixed.",
    "mtp_without_speculative_decoding": "The package ships NextN (MTP) tensors but declares no "
    "generation.speculative_decoding, so nodes will not enable native MTP (mesh-llm's "
    "--generation-defaults drops the inferred declaration): republish with the native-mtp "
    "declaration beside request_defaults if MTP is wanted.",
})

# --- Slices (--layers / --stage / --stages) and `report merge` ------------------------------
CODES |= _rows("slices", E, {
    "stage_count_exceeds_layer_count": "Ask for at most one stage per transformer layer: "
    "--stages N needs N <= layer_count (mesh-llm's preflight refuses more; no plan is shown).",
    "invalid_scope": "Give --layers A..B with 0 <= A < B <= layer_count, or --stage I/N with "
    "N no more than layer_count.",
    "slice_package_mismatch": "Merge only slices of one package: the same manifest sha256, "
    "package_id and resolved hf:// commit. Re-certify the odd slice against that package.",
    "slice_verdict_mismatch": "The slices disagree on the manifest-wide checks; re-certify "
    "them with the same meshcert version and options.",
    "slice_digest_mismatch": "Do not trust these bytes: two slices hashed the same artifact "
    "to different digests, so one node holds different bytes. Re-download that artifact on "
    "the node whose digest differs from the manifest, then re-certify its slice.",
    "slice_failed": "A slice failed: fix the findings of that slice's report, then re-certify it.",
    "slice_not_merged": "Give every slice a meshcert cert.json with a scope or a whole-package "
    "report; this file cannot be merged.",
    "coverage_missing": "Certify the missing layers (--layers A..B or the missing --stage I/N) "
    "and merge again; the merged result stays incomplete until every artifact is verified. An "
    "artifact no slice hashed: merge --hash-once slices of one N-stage plan, or re-certify a "
    "slice that loads it without --hash-once.",
})

# --- Load as a node would (--materialize, --parity) ------------------------------------------
CODES |= _rows("load", E, {
    "stage_materialization_failed": "A certification stage could not be composed from its parts "
    "or llama.cpp's GGUF parser rejects the composed file; re-write the package so every "
    "selected part holds the tensors its header (v1) or the carrier's locators (v2) say.",
    "split_parity_mismatch": "The model reassembled from the package computes something else "
    "than the source: a tensor's bytes differ or tensors were swapped. Re-split the package "
    "from the source GGUF and certify it again with --parity.",
})

# --- Safe to load: chat templates, tokenizer, hparams (docs/architecture.md) ---------------
CODES |= _rows("chat_template", E, {
    "chat_template_code_execution": "Remove the construct from the chat template: no dunder "
    "attributes, |attr, run-time-built subscript keys, gadget globals (self, config, request, "
    "lipsum; cycler/joiner/namespace other than called), import/include/extends, execution "
    "names, unbounded loops or invisible/bidi code points. Ship the model's original template.",
    "chat_template_render_error": "Fix the chat template so that it parses and renders every "
    "plain conversation in jinja2's sandbox, reproducibly, within the limits and with every "
    "message's text.",
})
CODES |= _rows("chat_template", W, {
    "chat_template_hidden_instruction": "Review the branch: the template emits text only when "
    "a message contains a trigger, text the user never wrote (a possible behavioural "
    "backdoor). Ship the model's original template.",
})
CODES |= _rows("tokenizer", E, {
    "tokenizer_copies_differ": "Write the same tokenizer.* values into every fragment (copy "
    "them from metadata.gguf) or leave them out of the fragments.",
    "tokenizer_array_invalid": "Regenerate the tokenizer arrays: tokens strings, scores f32, "
    "token_type i32, each as long as tokens; merges strings.",
    "special_token_out_of_range": "Every tokenizer.ggml.*_token_id must index the vocabulary "
    "(0 <= id < number of tokens).",
    "vocab_embedding_rows_mismatch": "The vocabulary size must equal the rows of token_embd "
    "and of output (ne[1]); reconvert the model.",
    "hparam_shape_mismatch": "The {arch}.* hyperparameters must match the tensor shapes they "
    "describe; reconvert the model.",
})

# --- Catalog certification (`meshcert catalog certify`: entries/<owner>/<repo>.json) ---------
CODES |= _rows("catalog", E, {
    "catalog_entry_invalid": "Fix the catalog entry so it reads as the catalog's schema: a "
    "JSON object with schema_version 1, source_repo and variants (an object keyed by variant, "
    "or the old list), each package reference {type: \"layer-package\", repo: \"ns/name\"} "
    "with integer layer_count/total_bytes and string revision/source_revision when present.",
    "catalog_package_missing": "The catalog offers a package the Hub does not serve (repository "
    "or pinned revision not found, private or disabled): fix the reference or remove it from "
    "the entry.",
    "catalog_package_gated": "The package repository is gated, so mesh-llm nodes cannot "
    "download it without accepting its conditions: ungate it or remove it from the catalog.",
    "catalog_package_unreadable": "The package has no readable model-package.json at this "
    "commit, so nothing can load it: publish the manifest (it is uploaded last) or remove the "
    "reference.",
    "catalog_layer_count_mismatch": "Set the reference's layer_count to the package manifest's "
    "layer_count (or fix the package).",
    "catalog_total_bytes_mismatch": "Set the reference's total_bytes to the sum of the "
    "package's declared artifact sizes (or fix the package).",
    "catalog_source_revision_mismatch": "The package was written from another source revision "
    "than the entry records: re-write the package from the recorded revision, or record the "
    "revision the package's source_model names.",
    "catalog_source_mismatch": "The package was written from another source (repository or "
    "file) than the entry's variant names: point the variant at the right package.",
    "catalog_package_duplicate": "List each package once: two references to one repository "
    "mean one variant serves another's package.",
})
CODES |= _rows("catalog", W, {
    "catalog_entry_unpinned": "Pin the package: add \"revision\": \"<40-hex commit>\" to the "
    "reference (`meshcert catalog certify --write-pins DIR` writes exactly that change), so a "
    "lookup names the bytes that were certified.",
    "catalog_mesh_llm_would_refuse": "meshcert accepts the package but mesh-llm's own "
    "certifier refuses it (a known mesh-llm gap, e.g. shared/common-partNN.gguf or its "
    "producer-ABI string compare): keep it out of mesh-llm's recommended list, or re-write it "
    "in a layout mesh-llm accepts, until mesh-llm is fixed.",
    "catalog_mixed_mesh_llm_versions": "The catalog's packages need different mesh-llm releases "
    "(e.g. publisher metadata needs >= 0.77.0): nodes older than the newest need cannot load "
    "them all. Upgrade the nodes, or keep such packages out until they are; `models certify "
    "--min-mesh-llm X.Y.Z` names the packages an X.Y.Z node refuses.",
})

# --- Attestations (meshcert.attest; docs/attestation.md) -----------------------------------
CODES |= _rows("attestation", E, {
    "attestation_missing": "A published package's attestation is "
    "attestations/meshcert.intoto.jsonl in the commit that added it: verify the ref `package "
    "publish --attest-key` printed (the catalog pins the same commit), not the commit before "
    "it. A local package's attestation is beside the report `models certify --attest-key` "
    "wrote (<report stem>.intoto.jsonl): give it with --attestation. If the package was never "
    "signed, nothing vouches for it yet.",
    "attestation_malformed": "The attestation file must hold one DSSE envelope per line "
    "(payloadType application/vnd.in-toto+json) whose payload is an in-toto Statement v1 with "
    "the SLSA VSA v1 predicate; sign the package again with `--attest-key`.",
    "attestation_signature_invalid": "No signature verifies under any key the trust policy "
    "knows: the statement or signature was changed after signing, or the signer's public key "
    "is not given. Sign again, or pass the signer's key with --trusted-key / a trust file.",
    "attestation_untrusted_signer": "The signature verifies, but the trust policy does not "
    "trust that signer for this repo: add the key (or CI identity) with a matching repos "
    "pattern to trust.toml if you trust it.",
    "attestation_not_passed": "The attestation records a FAILED certification: fix the "
    "package, certify it again and sign the new, passed result.",
    "attestation_subject_mismatch": "Do not trust these bytes: an artifact (or the manifest) "
    "is not what was certified and signed (its SHA-256 differs from the attested digest), or "
    "the attestation is another package's. Re-download the package from its publisher (or "
    "restore the certified bytes) and verify again; certify and sign only bytes you have "
    "re-obtained from the source.",
    "attestation_subject_missing": "The manifest declares an artifact (or the manifest itself) "
    "the attestation does not cover: certify the whole package (not a slice) and sign again.",
    "attestation_resource_mismatch": "Do not trust this attestation for this package: it "
    "names another repository than the one verified. Use the attestation its publisher made "
    "for this repository.",
})
CODES |= _rows("attestation", I, {
    "attestation_other_commit": "The attestation was made for another commit of the same repo; "
    "every artifact and the manifest are unchanged, so it still holds. Nothing to do.",
    "attestation_verified": "The package was accepted from its valid, trusted signed "
    "attestation (--trust-attested) without reading its headers; certify it without "
    "--trust-attested to re-check them.",
})

# --- Publisher files and mesh-llm support (mesh-llm-0.79.md §2.3-2.4, §3.4, §4) ------------
CODES |= _rows("publisher_files", E, {
    "publisher_file_too_large": "Publisher files (metadata/*.json, metadata/chat_template.jinja) "
    "are small copies of the source's Hugging Face files: ship the source's own file (at most "
    "16 MiB).",
    "publisher_file_not_utf8": "Ship the source's publisher file byte for byte: it must be "
    "UTF-8 text.",
    "publisher_file_invalid_json": "Ship the source's publisher file byte for byte: it must be "
    "strict JSON (no NaN/Infinity, no comments, no trailing data).",
    "publisher_file_too_deep": "Ship the source's publisher file: JSON nested deeper than 64 "
    "levels is refused.",
    "publisher_file_not_object": "A publisher JSON file must hold a JSON object at the top, as "
    "the source's config.json, generation_config.json, tokenizer_config.json and "
    "hf_quant_config.json do.",
    "publisher_config_geometry_mismatch": "config.json describes another model than the "
    "carrier's GGUF metadata (layers, hidden size, heads, KV heads or context): ship the "
    "config.json of the source the GGUF was converted from (mesh-llm's writer refuses this "
    "pair).",
    "publisher_default_mismatch": "Make publisher_defaults say what its file says: json_path "
    "must resolve in the bound publisher file and its value must map to the declared dtype by "
    "the writer's mapping; re-write the package to re-derive the defaults.",
})
CODES |= _rows("publisher_files", W, {
    "publisher_defaults_not_rederived": "publisher_defaults differ from what mesh-llm's writer "
    "derives from these publisher files (or the writer would refuse them): re-write the "
    "package with the writer, or fix the declaration by hand and re-identify the package.",
    "architecture_not_split_certified": "Nodes serve this architecture split only with `mesh-llm "
    "serve --split --allow-uncertified-split`; serve it on one node, or get it onto mesh-llm's "
    "split-serving roster (split-certified.json). Refresh meshcert's copy with "
    "scripts/refresh_split_roster.py if mesh-llm has certified it since.",
})
CODES |= _rows("publisher_files", I, {
    "publisher_config_nextn_block": "Nothing to do: the GGUF's block_count counts the NextN "
    "(MTP) block(s) that Hugging Face's num_hidden_layers leaves out. mesh-llm's writer refuses "
    "this pair, so such a package was not written by it with config.json.",
})
CODES |= _rows("mesh_llm", E, {
    "mesh_llm_version_too_old": "The manifest uses fields that the mesh-llm release given with "
    "--min-mesh-llm refuses at parse time: re-write the package without them (no "
    "publisher metadata for < 0.77.0, no --generation-defaults for < 0.78.1), or upgrade the "
    "nodes and raise --min-mesh-llm.",
})
CODES |= _rows("mesh_llm", W, {
    "mesh_llm_publish_would_refuse": "mesh-llm's HF publication job (layer-job project) refuses "
    "this package though the format accepts it: pin source_model.revision to the 40-character "
    "lower-case commit and set source_model.repo (owner/name), give every artifact a non-zero "
    "size and a unique path other than model-package.json and README.md, keep the manifest "
    "under 8 MiB; then re-write the package. `package publish` refuses it before uploading.",
})
CODES |= _rows("mesh_llm", I, {
    "mesh_llm_minimum_version": "Nothing to do: the oldest mesh-llm release that loads this "
    "manifest. Pass --min-mesh-llm X.Y.Z to make it an error when your nodes are older.",
})

# --- Runtime gates -------------------------------------------------------------------------
CODES |= _rows("runtime", W, {
    "runtime_model_mismatch": "Do not take these runtime gates as this package's: the endpoint "
    "answered as another model. Serve the package itself (its model_id, or the id given with "
    "--served-model) and run the gates again.",
})

# --- Engine --------------------------------------------------------------------------------
CODES |= _rows("engine", E, {
    "internal_error": "A check crashed; the result is incomplete. Report this as a meshcert bug.",
    "check_not_run": "A check could not run because its inputs were unavailable.",
    "hf_job_failed": "A Hugging Face job that certified a slice ended without a readable "
    "report (ERROR, CANCELED, or its logs hold no complete report): the slice is not verified "
    "and the result is incomplete. Read the job's logs (`meshcert package job --logs ID`), then "
    "run again; a job killed by its timeout needs a larger --flavor or fewer bytes per slice "
    "(more --stages).",
    "llama_cpp_crashed": "llama.cpp died (a signal, a non-zero exit or its wall clock) while "
    "running on this model, so the gate could not be decided: the result is incomplete, not "
    "passed. A SIGSEGV or SIGILL at the first decode on a CPU that advertises AMX or AVX-512 "
    "means a native build the machine cannot run: rebuild llama-cpp-python portable with "
    "CMAKE_ARGS=\"-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF "
    "-DGGML_AMX_BF16=OFF\" pip install --no-cache-dir --force-reinstall --no-deps --no-binary "
    "llama-cpp-python llama-cpp-python==0.3.36 (in a checkout: python3 "
    "scripts/setup_llama_cpp_python.py), then certify again.",
})


def entry(code: str) -> CodeEntry:
    """Return the code table's row for `code`; unknown codes are a programming error."""
    try:
        return CODES[code]
    except KeyError:
        raise KeyError(f"finding code {code!r} is not in the code table") from None


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _severities(row: CodeEntry) -> str:
    raised = ", ".join(f"{r.severity} {r.where}" for r in row.raised)
    return f"{row.severity} ({raised})" if raised else row.severity


def _remediations(row: CodeEntry) -> str:
    text = _cell(row.remediation)
    for r in row.raised:
        text += f"<br>**As {r.severity} ({r.where}):** {_cell(r.remediation)}"
    return text


def codes_markdown() -> str:
    """docs/finding-codes.md: every code, grouped, with its severity and remediation
    (`python3 scripts/generate.py codes`; a test fails when it drifts)."""
    lines = ["# Finding codes", "",
             "Generated from `meshcert/core/codes.py` (`python3 scripts/generate.py codes`). "
             "Codes are a contract: scripts and tests assert them; "
             "`cert.json`'s schema lists them as the values `findings[].code` may take.", ""]
    groups: dict[str, list[CodeEntry]] = {}
    for row in CODES.values():
        groups.setdefault(row.group, []).append(row)
    for group, rows in groups.items():
        lines += [f"## {group}", "", "| code | severity | remediation |", "| --- | --- | --- |"]
        lines += [f"| `{r.code}` | {_severities(r)} | {_remediations(r)} |"
                  for r in sorted(rows, key=lambda r: r.code)]
        lines.append("")
    return "\n".join(lines)
