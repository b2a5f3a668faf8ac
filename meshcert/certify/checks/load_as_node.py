"""Findings from loading the package as a node would (--materialize, --parity).

The I/O happened beforehand (meshcert.certify.materialize, meshcert.certify.split_parity) and
left its results on
the view; these checks only turn them into findings. A stage or parity run that could not even be
tried (package not local, source missing, over the size limit) is `check_not_run`, and one whose
llama.cpp worker died (a signal, a non-zero exit, its wall clock) is `llama_cpp_crashed`: either
way the result is incomplete, never passed.

That includes llama-cpp-python missing: the user explicitly asked for this work, so its tool's
absence is incomplete (exit 3). The same absence for a check nobody asked for (`llama_cpp_gguf`,
which runs whenever llama.cpp is there) is `skipped`, "not available: ...": the one rule is in
meshcert.certify.coverage.
"""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import asked_for, register
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding


@register("stage_materialization", order=370,
          codes=["stage_materialization_failed", "check_not_run", "llama_cpp_crashed"],
          runs_when=[asked_for("--materialize", lambda view: view.options.materialize)])
def check_stage_materialization(view: PackageView) -> Iterator[Finding]:
    if view.stage_builds is None:
        yield finding("check_not_run", "stages not materialized: the build left no result")
        return
    for build in (view.stage_builds or {}).values():
        if build.death is not None:
            yield finding("llama_cpp_crashed", f"stage {build.stage_id} undecided: "
                          f"{build.death.describe()}", path=build.death.model)
        elif build.error is not None:
            yield finding("stage_materialization_failed",
                          f"stage {build.stage_id} does not materialize: {build.error}",
                          path=build.path)
        elif build.not_run is not None:
            yield finding("check_not_run",
                          f"stage {build.stage_id} not materialized: {build.not_run}")


@register("split_parity", order=380,
          codes=["split_parity_mismatch", "check_not_run", "llama_cpp_crashed"],
          runs_when=[asked_for("--parity SOURCE.gguf", lambda view: view.options.parity)])
def check_split_parity(view: PackageView) -> Iterator[Finding]:
    result = view.parity
    if result is None:
        yield finding("check_not_run", "split parity not run: the run left no result")
        return
    if result.status == "crashed":
        model = result.death.model if result.death is not None else None
        yield finding("llama_cpp_crashed", f"split parity undecided: {result.detail}",
                      path=model)
    elif result.status == "failed":
        yield finding("split_parity_mismatch", f"split parity failed: {result.detail}")
    elif result.status == "not_run":
        yield finding("check_not_run", f"split parity not run: {result.detail}")
