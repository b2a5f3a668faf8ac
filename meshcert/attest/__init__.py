"""Signed certifications (docs/attestation.md): an in-toto Statement v1 with a SLSA
Verification Summary v1 predicate, bound to the certified artifacts' digests, in a DSSE
envelope signed with Ed25519 (or, with the `meshcert[sigstore]` extra, keylessly), and the
trust policy that decides whose attestations count.

Nothing here prints or exits: problems are findings (`meshcert.attest.codes`) or the errors
the modules define, which the CLI turns into usage errors."""
