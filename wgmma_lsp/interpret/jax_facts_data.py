"""The facts read from an installed JAX, as data (`JaxFacts`), their JSON form, and the table
bundled with wgmma-lsp for when the analysed environment has no JAX (`bundled`). A leaf: the
readers fill it (`jax_facts.extract`), the cache stores it, the queries read it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from wgmma_lsp.interpret.jax_api_types import Export, Param, Signature

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: Bumped when the facts' shape changes (the cache also keys on the extractor's source).
FORMAT = 1
BUNDLED = Path(__file__).with_name("jax_facts_bundled.json")


@dataclass(frozen=True)
class JaxFacts:
    """What the installed JAX exports and how it is called."""
    jax_version: str | None
    default_lowering: str | None  # "lane" / "warpgroup" for `plgpu.CompilerParams()`
    exports: dict[str, dict[str, Export]] = field(default_factory=dict)  # module -> public name
    signatures: dict[str, Signature] = field(default_factory=dict)  # "plgpu.load" -> parameters
    tracer_memory_space_raises: bool | None = None
    pallas_call_lowers_mosaic_gpu: bool | None = None
    layout_failure_message: str | None = None
    layout_inference_takes_swizzle_only: bool | None = None
    wgmma_mixable_dtypes: list[str] | None = None  # jax_source.wgmma_mixable_dtypes
    reduction_scratch: dict[str, Any] | None = None  # jax_reduction_scratch.read
    # "lane/warpgroup" -> primitives with a Mosaic GPU lowering rule: jax_lowering_rules.py
    mosaic_lowering_rules: dict[str, list[str]] | None = None
    # "plgpu.kernel" -> {"out_shape": [JAX's deprecation message, alias or None]}: jax_deprecations.py
    deprecated_params: dict[str, dict[str, list]] = field(default_factory=dict)
    barrier_default_num_barriers: list[int] | None = None  # `plgpu.Barrier()`'s barrier array shape
    # "jax_enable_x64" -> False: the flags whose default is a literal (jax_config_flags.py)
    config_defaults: dict[str, Any] | None = None
    # "BF16_BF16_F32" -> "float32": `lax.DotAlgorithmPreset.<m>.accumulation_type` (jax_dot_presets.py)
    preset_accumulation_types: dict[str, Any] | None = None
    source: str = "jax"  # "jax" (read from an installed JAX) or "bundled"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "jax_version": self.jax_version,
            "default_lowering": self.default_lowering,
            "exports": {m: {n: _export_json(e) for n, e in sorted(t.items())}
                        for m, t in sorted(self.exports.items())},
            "signatures": {k: _sig_json(s) for k, s in sorted(self.signatures.items())},
            "tracer_memory_space_raises": self.tracer_memory_space_raises,
            "pallas_call_lowers_mosaic_gpu": self.pallas_call_lowers_mosaic_gpu,
            "layout_failure_message": self.layout_failure_message,
            "layout_inference_takes_swizzle_only": self.layout_inference_takes_swizzle_only,
            "wgmma_mixable_dtypes": self.wgmma_mixable_dtypes,
            "reduction_scratch": self.reduction_scratch,
            "mosaic_lowering_rules": self.mosaic_lowering_rules,
            "deprecated_params": self.deprecated_params,
            "barrier_default_num_barriers": self.barrier_default_num_barriers,
            "config_defaults": self.config_defaults,
            "preset_accumulation_types": self.preset_accumulation_types,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "jax") -> "JaxFacts":
        """The facts of `to_json`'s output; KeyError/TypeError/ValueError when it is not that."""
        if data["format"] != FORMAT:
            raise ValueError(f"facts format {data['format']!r}, expected {FORMAT}")
        return cls(
            jax_version=_opt(data["jax_version"], str),
            default_lowering=_opt(data["default_lowering"], str),
            exports={m: {n: Export(**e) for n, e in t.items()} for m, t in data["exports"].items()},
            signatures={k: _sig(s) for k, s in data["signatures"].items()},
            tracer_memory_space_raises=_opt(data["tracer_memory_space_raises"], bool),
            pallas_call_lowers_mosaic_gpu=_opt(data["pallas_call_lowers_mosaic_gpu"], bool),
            layout_failure_message=_opt(data["layout_failure_message"], str),
            layout_inference_takes_swizzle_only=_opt(data["layout_inference_takes_swizzle_only"], bool),
            wgmma_mixable_dtypes=_opt(data.get("wgmma_mixable_dtypes"), list),
            reduction_scratch=_opt(data.get("reduction_scratch"), dict),
            mosaic_lowering_rules=_opt(data.get("mosaic_lowering_rules"), dict),
            deprecated_params={str(api): {str(p): [str(m), _opt(r, str)] for p, (m, r) in ps.items()}
                               for api, ps in data.get("deprecated_params", {}).items()},
            barrier_default_num_barriers=_opt(data.get("barrier_default_num_barriers"), list),
            config_defaults=_opt(data.get("config_defaults"), dict),
            preset_accumulation_types=_opt(data.get("preset_accumulation_types"), dict),
            source=source,
        )


def _opt(v: Any, t: type) -> Any:
    if v is not None and not isinstance(v, t):
        raise TypeError(f"expected {t.__name__} or null, got {v!r}")
    return v


def _export_json(e: Export) -> dict[str, Any]:
    return {"module": e.module, "name": e.name, "removed_message": e.removed_message,
            "deprecated": e.deprecated}


def _sig_json(s: Signature) -> dict[str, Any]:
    return {"qualname": s.qualname, "params": [[p.name, p.kind, p.required] for p in s.params],
            "forwards_to": _sig_json(s.forwards_to) if s.forwards_to is not None else None,
            "forward_own_keywords": list(s.forward_own_keywords), "binds_self": s.binds_self}


def _sig(d: dict[str, Any]) -> Signature:
    return Signature(
        qualname=str(d["qualname"]),
        params=tuple(Param(str(n), str(k), bool(r)) for n, k, r in d["params"]),
        forwards_to=_sig(d["forwards_to"]) if d["forwards_to"] is not None else None,
        forward_own_keywords=tuple(str(k) for k in d["forward_own_keywords"]),
        binds_self=bool(d["binds_self"]))


@cache
def bundled() -> JaxFacts:
    """The facts shipped with wgmma-lsp, for the newest supported JAX."""
    return JaxFacts.from_json(json.loads(BUNDLED.read_text(encoding="utf-8")), source="bundled")


def bundled_version() -> str:
    return bundled().jax_version or "?"
