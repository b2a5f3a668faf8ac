"""Verify an attestation file against a package as it is now (docs/attestation.md, steps 1-6).

Each failure is a finding with its code; the first envelope that passes every step is the
verdict (a file may carry several signers). Severity follows the trust mode: `warn` turns the
errors into warnings (the caller decides what a warning means), the others keep them errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from meshcert.attest import codes
from meshcert.attest.dsse import (
    PAYLOAD_TYPE,
    AttestationFile,
    Envelope,
    EnvelopeError,
    parse_lines,
    verifying_keys,
)
from meshcert.attest.keys import key_id
from meshcert.attest.package_state import PackageState
from meshcert.attest.statement import MANIFEST_NAME, Statement, StatementError, parse_statement
from meshcert.attest.trust import TrustPolicy
from meshcert.core.findings import Finding, finding
from meshcert.core.usage import OptionError

# How far an envelope got: the one that got furthest explains a refusal.
_STAGES = {codes.MALFORMED: 1, codes.SIGNATURE_INVALID: 2, codes.UNTRUSTED_SIGNER: 3,
           codes.NOT_PASSED: 4, codes.SUBJECT_MISSING: 5, codes.SUBJECT_MISMATCH: 5,
           codes.RESOURCE_MISMATCH: 6}


@dataclass
class Verification:
    """The verdict on one package's attestation."""

    attestation: str  # the file (or repo path) it was read from
    findings: list[Finding] = field(default_factory=list)
    signer: str | None = None  # ed25519:<hex> or a CI identity
    result: str | None = None  # PASSED / FAILED, once a signature verified
    subjects: int = 0
    statement: Statement | None = None

    @property
    def valid(self) -> bool:
        """Valid and trusted: the signature, the signer, PASSED and every digest hold."""
        return self.signer is not None and not any(
            f.code in _STAGES or f.code == codes.MISSING for f in self.findings)


def _hf_repo(uri: str | None) -> tuple[str | None, str | None]:
    if not uri or not uri.startswith("hf://"):
        return None, None
    rest = uri[len("hf://"):]
    repo, _, commit = rest.partition("@")
    return repo or None, commit or None


def _signer_of(envelope: Envelope, trusted: list[Ed25519PublicKey],
               known: list[Ed25519PublicKey]) -> tuple[str | None, str | None]:
    """(trusted signer, untrusted signer): the id of a key the policy knows that verifies a
    signature. An envelope's own `keyid` is only a claim (spec step 3): a key that only the
    envelope names is never tried, so a signature by a stranger verifies under no known key."""
    good = verifying_keys(envelope, trusted)
    if good:
        return key_id(good[0]), None
    other = verifying_keys(envelope, known)
    return None, key_id(other[0]) if other else None


def _claimed_keys(envelope: Envelope) -> str:
    claims = sorted({s.keyid for s in envelope.signatures if s.keyid})
    if not claims:
        return "no key id"
    shown = ", ".join("".join(ch if ch.isprintable() else "?" for ch in c[:80])
                      for c in claims[:3])
    return shown + (f" and {len(claims) - 3} more" if len(claims) > 3 else "")


def _other_package(statement: Statement, state: PackageState, name: str) -> Finding | None:
    """One finding when the attestation is of another package (its manifest subject is not
    this package's manifest), instead of one mismatch per artifact."""
    attested, now = statement.subjects.get(MANIFEST_NAME), state.digests.get(MANIFEST_NAME)
    if attested is None or now is None or attested == now:
        return None
    differ = sum(1 for p in state.declared
                 if statement.subjects.get(p) is not None and statement.subjects[p] !=
                 state.digests.get(p))
    package_id = statement.report.get("package_id")
    of = f" (package_id {package_id})" if isinstance(package_id, str) else ""
    if differ == 0:
        return finding(codes.SUBJECT_MISMATCH, f"{name}: every artifact matches, but this "
                       f"package's {MANIFEST_NAME} (sha256 {now[:16]}...) is not the one signed "
                       f"({attested[:16]}...{of}): the manifest changed after it was certified",
                       path=MANIFEST_NAME)
    return finding(codes.SUBJECT_MISMATCH, f"{name} is not this package's attestation: it "
                   f"attests a {MANIFEST_NAME} of sha256 {attested[:16]}...{of}, this package's "
                   f"is {now[:16]}...; {differ} of {len(state.declared)} declared artifacts "
                   "differ from its subjects", path=MANIFEST_NAME)


def _subjects(statement: Statement, state: PackageState, name: str) -> list[Finding]:
    other = _other_package(statement, state, name)
    if other is not None:
        return [other]
    found: list[Finding] = []
    for path in [MANIFEST_NAME, *state.declared]:
        attested = statement.subjects.get(path)
        now = state.digests.get(path)
        if attested is None:
            found.append(finding(codes.SUBJECT_MISSING, f"{name}: {path} is declared by the "
                                 "manifest but is not a subject of the attestation", path=path))
        elif now is None and path in state.git_blobs:  # plain git, matched by its blob id
            found.extend(_git_blob_subject(statement, state, name, path))
        elif now is None:
            why = state.absent.get(path, "no digest")
            found.append(finding(codes.SUBJECT_MISMATCH, f"{name}: subject {path} is attested "
                                 f"as sha256 {attested[:16]}..., but the package has {why}",
                                 path=path))
        elif now != attested:
            found.append(finding(codes.SUBJECT_MISMATCH, f"{name}: {path} has sha256 "
                                 f"{now[:16]}... now, the attestation says {attested[:16]}...",
                                 path=path))
    return found


def _git_blob_subject(statement: Statement, state: PackageState, name: str, path: str
                      ) -> list[Finding]:
    """A plain-git file the package state knows by the listing's git blob id only."""
    attested, now = statement.git_blobs.get(path), state.git_blobs[path]
    if attested == now:
        return []
    says = f"gitBlob {attested[:16]}..." if attested else "no gitBlob"
    return [finding(codes.SUBJECT_MISMATCH, f"{name}: {path} has git blob id {now[:16]}... now, "
                    f"the attestation says {says}", path=path)]


def _resource(statement: Statement, state: PackageState, name: str) -> list[Finding]:
    if state.repo is None:  # local: matched by subjects alone
        return []
    repo, commit = _hf_repo(statement.resource_uri)
    if repo is None or repo.lower() != state.repo.lower():
        return [finding(codes.RESOURCE_MISMATCH, f"{name}: resourceUri "
                        f"{statement.resource_uri!r} is not hf://{state.repo}")]
    if commit and state.commit and commit.lower() != state.commit.lower():
        return [finding(codes.OTHER_COMMIT, f"{name}: certified at commit {commit}, verified "
                        f"at commit {state.commit}: no artifact and not the manifest changed")]
    return []


def _one(envelope: Envelope, state: PackageState, policy: TrustPolicy, name: str
         ) -> Verification:
    where = f"{name} line {envelope.line}" if envelope.line else name
    out = Verification(attestation=name)
    if envelope.payload_type != PAYLOAD_TYPE:
        out.findings.append(finding(codes.MALFORMED, f"{where}: payloadType "
                                    f"{envelope.payload_type!r} is not {PAYLOAD_TYPE}"))
        return out
    try:
        statement = parse_statement(envelope.payload)
    except StatementError as exc:
        out.findings.append(finding(codes.MALFORMED, f"{where}: {exc}"))
        return out
    out.statement, out.subjects = statement, len(statement.subjects)
    repo = state.repo or _hf_repo(statement.resource_uri)[0]
    signer, other = _signer_of(envelope, policy.keys_for(repo), policy.all_keys())
    if signer is None:
        if other is not None:
            out.findings.append(finding(codes.UNTRUSTED_SIGNER, f"{where}: signed by {other}, "
                                        "which the trust policy does not trust for "
                                        f"{repo or 'local packages'}"))
        else:
            out.findings.append(finding(codes.SIGNATURE_INVALID, f"{where}: no signature "
                                        "verifies under any key the trust policy knows (the "
                                        f"envelope claims {_claimed_keys(envelope)})"))
        return out
    return _judge(out, statement, signer, state, where)


def _judge(out: Verification, statement: Statement, signer: str, state: PackageState,
           where: str) -> Verification:
    """Steps 4-6, once a trusted signer is known (shared with keyless bundles)."""
    out.signer, out.result = signer, statement.result
    if statement.result != "PASSED":
        errors = statement.report.get("errors")
        shown = f" (errors: {', '.join(map(str, errors))})" if isinstance(errors, list) \
            and errors else ""
        out.findings.append(finding(codes.NOT_PASSED, f"{where}: verificationResult is "
                                    f"{statement.result}{shown}"))
        return out
    subject_findings = _subjects(statement, state, where)
    out.findings.extend(subject_findings)
    out.findings.extend(f for f in _resource(statement, state, where)
                        if f.code != codes.OTHER_COMMIT or not subject_findings)
    return out


def verify_file(data: bytes | None, name: str, state: PackageState, policy: TrustPolicy
                ) -> Verification:
    """Verify the attestation file's bytes (None: there is none) against `state`."""
    if state.problems:
        return Verification(attestation=name, findings=list(state.problems))
    if data is None:
        return Verification(attestation=name, findings=[finding(
            codes.MISSING, f"no attestation: {name} does not exist")])
    try:
        parsed = parse_lines(data, name)
    except EnvelopeError as exc:
        return Verification(attestation=name, findings=[finding(codes.MALFORMED, str(exc))])
    return verify_parsed(parsed, name, state, policy)


def verify_parsed(parsed: AttestationFile, name: str, state: PackageState,
                  policy: TrustPolicy) -> Verification:
    if not parsed.envelopes and not parsed.bundles:
        return Verification(attestation=name, findings=[finding(
            codes.MISSING, f"{name} holds no attestation")])
    results = [_one(e, state, policy, name) for e in parsed.envelopes]
    if parsed.bundles:
        from meshcert.attest.sigstore_backend import verify_bundle

        for bundle in parsed.bundles:
            where = f"{name} line {bundle.line}"
            checked = verify_bundle(bundle.data, policy, state, where)
            if checked.statement is not None and checked.signer is not None:
                results.append(_judge(Verification(attestation=name,
                                                   subjects=len(checked.statement.subjects),
                                                   statement=checked.statement),
                                      checked.statement, checked.signer, state, where))
            else:
                results.append(Verification(attestation=name, findings=checked.findings))
    for result in results:
        if result.valid:
            return result

    def stage(v: Verification) -> int:
        return max((_STAGES.get(f.code, 0) for f in v.findings), default=0)

    return max(results, key=stage)


def with_mode(findings: list[Finding], mode: str) -> list[Finding]:
    """`warn`: attestation errors become warnings; otherwise as they are."""
    if mode != "warn":
        return findings
    return [f.model_copy(update={"severity": "warning"}) if f.severity == "error" else f
            for f in findings]


def read_local_attestation(path: str) -> bytes | None:
    """The file's bytes (at most one byte over the size limit), None when it does not exist."""
    from meshcert.attest.dsse import MAX_FILE_BYTES

    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OptionError(f"cannot read {path}: {exc.strerror or exc}") from None


def verify_ref(package: str, attestation: str | None, policy: TrustPolicy,
               attestation_repo: str | None = None) -> Verification:
    """`meshcert attest verify PKG [--attestation FILE | --attestation-repo DATASET]`: PKG a
    local directory or hf://ns/repo@rev (default attestation: attestations/meshcert.intoto.jsonl
    in it; with `attestation_repo`, `<ns>/<repo>/<commit>.intoto.jsonl` in that dataset, the
    commit being the one `rev` resolves to)."""
    import os

    from meshcert.attest.package_state import ATTESTATION_PATH, hub_state, local_state
    from meshcert.core.refs import RefError, parse_ref

    try:
        ref = parse_ref(package)
    except RefError as exc:
        raise OptionError(str(exc)) from None
    if ref.kind == "local":
        root = ref.local_path or package
        if not os.path.isdir(root):
            raise OptionError(f"{package!r} is not a package directory")
        if attestation is not None:
            return verify_file(read_local_attestation(attestation), attestation,
                               local_state(root), policy)
        return _verify_found(root, policy)
    if attestation_repo is not None:
        return verify_in_attestation_repo(ref.repo or "", ref.revision, attestation_repo,
                                          policy)
    given = read_local_attestation(attestation) if attestation is not None else None
    state = hub_state(ref.repo or "", ref.revision, read_attestation=attestation is None,
                      attestation=given)
    if attestation is None:
        name = f"hf://{ref.repo}@{state.commit or ref.revision}/{ATTESTATION_PATH}"
        return verify_file(state.attestation, name, state, policy)
    return verify_file(given, attestation, state, policy)


# Where `attest verify DIR` looks without --attestation, in order: the package's own
# attestation (a published package's layout), then beside the default report of `models
# certify --attest-key` (cert.json -> cert.intoto.jsonl, in the working directory).
DEFAULT_REPORT = "cert.json"


def local_candidates(root: str) -> list[str]:
    import os

    from meshcert.attest.package_state import ATTESTATION_PATH
    from meshcert.attest.sign import default_attestation_path

    return [os.path.join(root, *ATTESTATION_PATH.split("/")),
            os.path.abspath(default_attestation_path(DEFAULT_REPORT))]


def _verify_found(root: str, policy: TrustPolicy) -> Verification:
    """The first candidate that exists, verified; none: attestation_missing naming each place
    looked at and where certification puts one."""
    from meshcert.attest.package_state import local_state

    places = local_candidates(root)
    for name in places:
        data = read_local_attestation(name)
        if data is not None:
            return verify_file(data, name, local_state(root), policy)
    looked = " and ".join(places)
    return Verification(attestation=places[0], findings=[finding(
        codes.MISSING, f"no attestation found: looked at {looked}; `models certify "
        "--attest-key` writes <report stem>.intoto.jsonl beside its --report-out (or at "
        "--attestation-out): give that file with --attestation")])


def verify_in_attestation_repo(repo: str, revision: str | None, dataset: str,
                               policy: TrustPolicy) -> Verification:
    """The package hf://repo@revision against its attestation in the attestation repo
    `dataset` (meshcert.attest.attestation_repo), at the commit `revision` resolves to now."""
    from meshcert.attest.attestation_repo import attestation_path, read_attestation
    from meshcert.attest.package_state import PackageState, hub_state
    from meshcert.core.hub.api import HubApi
    from meshcert.core.hub.errors import HubError
    from meshcert.core.hub.settings import HubSettings

    try:
        commit = HubApi(HubSettings.from_env()).resolve(repo, revision, listing=False).commit
        data = read_attestation(dataset, repo, commit)
    except HubError as err:
        state = PackageState(ref=f"hf://{repo}@{revision}" if revision else f"hf://{repo}",
                             repo=repo, problems=[err.to_finding()])
        return verify_file(None, f"hf://datasets/{dataset}", state, policy)
    state = hub_state(repo, commit, read_attestation=False, attestation=data)
    name = f"hf://datasets/{dataset}/{attestation_path(repo, commit)}"
    return verify_file(data, name, state, policy)
