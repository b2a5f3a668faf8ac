"""The report's node_defaults and mesh_llm sections as facts and rows the HTML and Markdown
reports lay out ('What a node will apply', 'Which mesh-llm can load it')."""

from __future__ import annotations

import json
from dataclasses import dataclass

from meshcert.certify.report import CertReport
from meshcert.reports.common import Fact


@dataclass(frozen=True)
class ProfileRow:
    name: str
    selection: str  # "default, reasoning_enabled" or ""
    fields: list[tuple[str, str]]  # field -> compact JSON (provenance left out: see `source`)
    source: str  # provenance url, or ""


@dataclass(frozen=True)
class NodeView:
    applies: list[Fact]
    profiles: list[ProfileRow]
    mesh_llm: list[Fact]


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def build_node_view(report: CertReport) -> NodeView | None:
    node, support = report.node_defaults, report.mesh_llm
    if node is None and support is None:
        return None
    applies: list[Fact] = []
    profiles: list[ProfileRow] = []
    if node is not None:
        source = {"kv_cache_dtype": "the package's kv_cache_dtype",
                  "compute_dtype": "the package's compute_dtype (no KV declaration)",
                  "runtime_default": "no package declaration"}[node.kv_cache_from]
        applies = [
            Fact("KV cache (K/V)", f"{node.kv_cache_type}/{node.kv_cache_type}", mono=True,
                 note=f"from {source}; an explicit user cache type wins"),
            Fact("declared kv_cache_dtype", node.declared_kv_cache_dtype or "\u2014",
                 mono=bool(node.declared_kv_cache_dtype)),
            Fact("declared compute_dtype", node.declared_compute_dtype or "\u2014",
                 mono=bool(node.declared_compute_dtype),
                 note="only q8_0/q4_0 change the live cache; others run F16/F16"),
        ]
        for p in node.request_profiles:
            provenance = p.fields.get("provenance")
            url = provenance.get("url") if isinstance(provenance, dict) else None
            profiles.append(ProfileRow(
                p.name, ", ".join(p.selection),
                [(k, _compact(v)) for k, v in p.fields.items() if k != "provenance"],
                url if isinstance(url, str) else ""))
    mesh: list[Fact] = []
    if support is not None:
        mesh.append(Fact("oldest mesh-llm", f">= {support.minimum_version}"
                         if support.minimum_version else "\u2014", mono=True,
                         note="; ".join(support.minimum_reasons)))
        if support.required_by_option:
            mesh.append(Fact("--min-mesh-llm", support.required_by_option, mono=True))
        split = ("\u2014" if support.split_certified is None else
                 "certified" if support.split_certified else
                 "not certified: needs --allow-uncertified-split")
        roster = (f"roster {support.roster_recipe_used or 'recipe unknown'}, retrieved "
                  f"{support.roster_retrieved or 'unknown'}"
                  + (", partial" if support.roster_partial else ""))
        mesh.append(Fact("split serving", split,
                         note=f"{support.architecture or 'unknown architecture'}; {roster}"))
    return NodeView(applies, profiles, mesh)
