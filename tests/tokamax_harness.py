"""A harness that calls tokamax's Mosaic GPU kernel functions on the CPU, with concrete configs.

tokamax (a Pallas kernel library nobody on this project wrote; on the package registry) is read
where it is installed, at test time: its files are never copied into this repository. Its public
ops refuse a CPU, so the harness calls the kernel functions themselves (`gated_linear_unit`,
`ragged_dot_kernel`, `flash_attention_kernel`, `flash_attention_vjp_kernel`, ...) with a tuning
config and `jax.ShapeDtypeStruct` arguments, written as `# wgmma-lsp: trace CALL` lines appended
to the file, as `shipped_harness.py` does for jax's own kernels (whose machinery this reuses:
`trace_entries` runs `jax.make_jaxpr` on the CPU and, on request, the Mosaic GPU lowering for
"cuda"). Both sides read the same lines: real JAX and wgmma-lsp (its comment entry points).

GPU facts a CPU cannot give are supplied two ways: the `shipped_harness.SHIMS` constants in the
harnessed file itself (its `backend.get_default_device().core_count`), and, for tokamax's own
helpers in other modules (`tokamax._src.mosaic_gpu`'s persistent kernels read the SM count),
a stand-in default device (`stand_in_device`) while JAX traces: an H100 (sm_90, 132 SMs). JAX's
Mosaic GPU lowering reads the target arch from that device too (`compute_capability`).

tokamax 0.0.17 needs Python >= 3.12 and jax >= 0.11.1 (`.venv312`); `skip_reason()` says why
the tokamax tests cannot run elsewhere (on Python 3.11 with jax 0.10.2: tokamax 0.0.12 imports
there, but its kernels use Mosaic GPU APIs jax 0.10.2 lacks — `wgmma-lsp check` rightly reports
them, WG091 — so it is not installed).

    .venv312/bin/python tests/tokamax_harness.py [--lower]   # JAX's verdict on each file
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shipped_harness import HARNESS_MARK, Verdict, apply_shims, trace_entries  # noqa: E402

#: The version of tokamax the harness's entries and mutations are written against (its kernel
#: functions' signatures); another version may move them.
KNOWN_VERSIONS = ("0.0.17",)

_GLU = "gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py"
_RAGGED = "ragged_dot/pallas_mosaic_gpu_kernel_sm90.py"
_ATTN = "attention/pallas_mosaic_gpu_kernel_sm90.py"
_VJP = "attention/pallas_mosaic_gpu_vjp_kernel_sm90.py"
_GLU100 = "gated_linear_unit/pallas_mosaic_gpu_kernel_sm100.py"
_RAGGED100 = "ragged_dot/pallas_mosaic_gpu_kernel_sm100.py"
_ATTN100 = "attention/pallas_mosaic_gpu_kernel_sm100.py"
_VJP100 = "attention/pallas_mosaic_gpu_vjp_kernel_sm100.py"
_GLU80 = "gated_linear_unit/pallas_mosaic_gpu_kernel_sm80.py"
_RAGGED80 = "ragged_dot/pallas_mosaic_gpu_kernel_sm80.py"
_ATTN80 = "attention/pallas_mosaic_gpu_kernel_sm80.py"

_ATTN_KW = ("is_causal={causal}, logits_soft_cap=None, logits_scale=0.125, out_dtype=jnp.dtype(jnp.bfloat16), "
            "normalize_output=True, return_residuals={res}, use_stable_softmax=True, "
            "rescale_threshold=1.0, config=Config(block_q=64, block_kv=128, num_stages=2, "
            "persistent={persistent})")
_QKV = "bf16[256,2,64], bf16[256,2,64], bf16[256,2,64]"
_QKV128 = "bf16[512,2,128], bf16[512,2,128], bf16[512,2,128]"
_ATTN100_KW = _ATTN_KW.replace("config=Config(block_q=64, block_kv=128, num_stages=2, persistent={persistent})",
                               "config=Config({extra})")
_QKV_VJP = "bf16[1024,2,64], bf16[1024,2,64], bf16[1024,2,64]"  # 8 kv tiles: a pipeline can be deep
_RD_CFG = "common.Config(block_m=64, block_n=128, block_k=64, num_stages=2, split_k=1{extra})"

#: Calls of each kernel file's entry points (path under `tokamax/_src/ops/`), concrete configs.
ENTRIES: dict[str, list[str]] = {
    _GLU: [
        "functools.partial(gated_linear_unit, activation=jax.nn.swish, config=common.Config("
        "tile_m=128, tile_n=64, tile_k=64, num_stages=4))(bf16[512,2048], bf16[2048,2,256])",
        "functools.partial(gated_linear_unit, activation=jax.nn.swish, config=common.Config("
        "tile_m=64, tile_n=64, tile_k=64, num_stages=2, wg_dimension=common.MatmulDimension.M))"
        "(bf16[512,256], bf16[256,2,256])",
    ],
    _GLU100: [
        "gated_linear_unit(bf16[512,2048], bf16[2048,2,512], activation=jax.nn.swish, "
        "config=common.Config(tile_m=128, tile_n=128, tile_k=64, num_stages=4))",
    ],
    _GLU80: [
        "gated_linear_unit(bf16[512,256], bf16[256,2,256], activation=jax.nn.swish, config=common.Config("
        "tile_m=64, tile_n=64, tile_k=32, num_stages=4, grid_minor_dim=common.MatmulDimension.M))",
    ],
    _RAGGED80: [
        "ragged_dot_kernel(bf16[512,256], bf16[4,256,256], i32[4], jnp.dtype(jnp.bfloat16), "
        "common.Config(block_m=128, block_n=128, block_k=32, num_stages=3, split_k=1, persistent=False))",
    ],
    _ATTN80: [
        "(lambda q, k, v: flash_attention_kernel(q, k, v, None, None, None, None, is_causal=False, "
        "logits_soft_cap=None, logits_scale=0.125, out_dtype=jnp.dtype(jnp.bfloat16), normalize_output=True, "
        "return_residuals=False, use_stable_softmax=True, rescale_threshold=1.0, config=Config(block_q=64, "
        f"block_kv=128, num_stages=2, v_split0=0, q_smem=False, num_p_slots=3)))({_QKV})",
    ],
    _RAGGED: [
        f"functools.partial(ragged_dot_kernel, out_dtype=jnp.dtype(jnp.bfloat16), config={_RD_CFG.format(extra='')})"
        "(bf16[512,2048], bf16[4,2048,256], i32[4])",
        "functools.partial(ragged_dot_kernel, out_dtype=jnp.dtype(jnp.bfloat16), "
        f"config={_RD_CFG.format(extra=', persistent=False')})(bf16[512,2048], bf16[4,2048,256], i32[4])",
        "functools.partial(ragged_contracting_dim_dot_kernel, out_dtype=jnp.dtype(jnp.bfloat16), "
        f"config={_RD_CFG.format(extra='')})(bf16[2048,256], bf16[2048,256], i32[4])",
    ],
    _RAGGED100: [
        "ragged_dot_gpu_non_quant_blackwell_kernel(bf16[512,2048], bf16[4,2048,256], i32[4], "
        "jnp.dtype(jnp.bfloat16), common.Config(block_m=128, block_n=128, block_k=64, num_stages=4, "
        "split_k=1))",
        "ragged_dot_gpu_non_quant_blackwell_kernel(bf16[512,2048], bf16[4,2048,256], i32[4], "
        "jnp.dtype(jnp.bfloat16), common.Config(block_m=128, block_n=128, block_k=64, num_stages=4, "
        "split_k=1, collective=True))",
    ],
    _ATTN: [
        f"functools.partial(flash_attention_kernel, {_ATTN_KW.format(causal=False, res=False, persistent=False)})"
        f"({_QKV}, None, None, None, None)",
        f"functools.partial(flash_attention_kernel, {_ATTN_KW.format(causal=True, res=True, persistent=True)})"
        f"({_QKV}, None, None, None, None)",
    ],
    _ATTN100: [
        f"functools.partial(flash_attention_kernel, {_ATTN100_KW.format(causal=False, res=False, extra='block_q=128, block_kv=128, num_stages=2, collective=False')})"
        f"({_QKV128}, None, None, None, None)",
        f"functools.partial(flash_attention_kernel, {_ATTN100_KW.format(causal=True, res=True, extra='block_q=256, block_kv=128, num_stages=2, collective=True')})"
        f"({_QKV128}, None, None, None, None)",
    ],
    _VJP: [
        "(lambda q, k, v, m, l, out, dout: flash_attention_vjp_kernel(q, k, v, (m, l), out, dout, "
        "None, None, None, None, logits_scale=0.125, logits_soft_cap=None, is_causal=False, "
        "ds_dtype=None, config=Config(block_q_dkv=64, block_kv_dkv=128, block_q_dq=64, block_kv_dq=128, "
        f"num_stages=2)))({_QKV_VJP}, f32[2,1024], f32[2,1024], bf16[1024,2,64], bf16[1024,2,64])",
    ],
    _VJP100: [
        "(lambda q, k, v, m, l, out, dout: flash_attention_vjp_kernel(q, k, v, (m, l), out, dout, "
        "None, None, None, None, logits_scale=0.125, logits_soft_cap=None, is_causal=False, "
        "ds_dtype=None, config=Config(block_q_dkv=128, block_kv_dkv=128, block_q_dq=128, block_kv_dq=128, "
        f"num_stages=2)))({_QKV_VJP}, f32[2,1024], f32[2,1024], bf16[1024,2,64], bf16[1024,2,64])",
    ],
}


def installed_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tokamax")
    except PackageNotFoundError:
        return None


def skip_reason() -> str | None:
    """Why the tokamax harness cannot run in this environment (None: it can)."""
    reason = missing_reason()
    if reason:
        return reason
    v = installed_version()
    if v not in KNOWN_VERSIONS:
        return f"tokamax {v}: the harness is written against {', '.join(KNOWN_VERSIONS)}"
    return None


def missing_reason() -> str | None:
    """Why there is no usable tokamax here at all (None: it is installed and imports)."""
    v = installed_version()
    if v is None:
        return ("tokamax is not installed: 0.0.17 needs Python >= 3.12 and jax >= 0.11.1 (the test "
                "extra installs it there, .venv312); 0.0.12, whose metadata allows jax >= 0.9.2, imports "
                "with jax 0.10.2 but its kernels call plgpu.TransposeTransform, unswizzle_ref and "
                "untile_ref, which jax 0.10.2 does not have, so it is not installed on Python 3.11")
    try:
        import tokamax  # noqa: F401  (ground truth: JAX traces tokamax's kernels)
    except Exception as e:  # an incompatible jax: say so, the tests skip
        return f"tokamax {v} does not import here ({type(e).__name__}: {e})"
    return None


def ops_dir() -> Path:
    spec = importlib.util.find_spec("tokamax")
    assert spec is not None and spec.origin, "tokamax is not installed"
    return Path(spec.origin).parent / "_src" / "ops"


def package_dir() -> Path:
    return ops_dir().parent.parent


def kernel_files() -> list[Path]:
    """Every Mosaic GPU module of the installed tokamax (`ops/*/pallas_mosaic_gpu*.py`)."""
    return sorted(ops_dir().glob("*/pallas_mosaic_gpu*.py"))


def with_harness(source: str, rel: str) -> str:
    """The file with the CPU shims applied and its entry points appended as trace comments
    (line numbers of the file itself stay put)."""
    lines = [apply_shims(source).rstrip("\n"), "", HARNESS_MARK]
    lines += [f"# wgmma-lsp: trace {call}" for call in ENTRIES.get(rel, [])]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class StandInDevice:
    """What tokamax and JAX's Mosaic GPU lowering ask the default device: an H100 (or a B200)."""

    platform: str = "gpu"
    device_kind: str = "NVIDIA H100 80GB HBM3"
    compute_capability: str = "9.0"
    core_count: int = 132
    id: int = 0


HOPPER = StandInDevice()
BLACKWELL = StandInDevice(device_kind="NVIDIA B200", compute_capability="10.0", core_count=148)
AMPERE = StandInDevice(device_kind="NVIDIA A100-SXM4-80GB", compute_capability="8.0", core_count=108)


def device_for(name: str) -> StandInDevice:
    """The GPU a kernel file is written for: tokamax names its kernels `*_sm80*` (Ampere),
    `*_sm90*` (Hopper), `*_sm100*` (Blackwell)."""
    return BLACKWELL if "sm100" in name else AMPERE if "sm80" in name else HOPPER


@contextlib.contextmanager
def stand_in_device(device: StandInDevice = HOPPER) -> Iterator[None]:
    """`jax.extend.backend.get_default_device()` answers `device` while the harness traces (the
    module attribute is what tokamax and JAX's lowering call; jax's own dispatch does not use it)."""
    from jax.extend import backend

    real = backend.get_default_device
    backend.get_default_device = lambda: device  # type: ignore[assignment]
    try:
        yield
    finally:
        backend.get_default_device = real  # type: ignore[assignment]


def trace(path: Path, lower: bool = False, ran: set[int] | None = None) -> list[Verdict]:
    """Real JAX on every entry point of a harnessed tokamax file (see `trace_entries`), on the
    GPU the file is written for."""
    with stand_in_device(device_for(path.name)):
        return trace_entries(path, lower=lower, ran=ran)


def kernel_smem_totals(path: Path) -> list[int]:
    """The shared memory (bytes) of every Mosaic GPU kernel JAX lowers for the harnessed file's
    entries, in lowering order: what `jax.experimental.mosaic.gpu.core._launch` sizes (the
    `smem_bytes` it checks against the GPU's limit), read from its `_smem_tree_size` call."""
    import sys as _sys

    from jax.experimental.mosaic.gpu import core as mgpu_core

    totals: list[int] = []
    real = mgpu_core._smem_tree_size

    def recording(tree):
        size = real(tree)
        if _sys._getframe(1).f_code.co_name == "_launch":
            totals.append(size)
        return size

    mgpu_core._smem_tree_size = recording
    try:
        verdicts = trace(path, lower=True)
    finally:
        mgpu_core._smem_tree_size = real
    failed = [v for v in verdicts if v.message is not None]
    assert not failed, failed
    return totals


def harnessed_copy(rel: str, tmp: Path, source: str | None = None) -> Path:
    """The harnessed file (or the given variant of it) written under `tmp`, to be traced."""
    out = tmp / rel.replace("/", "__")
    out.write_text(with_harness(source if source is not None else (ops_dir() / rel).read_text(), rel))
    return out


@functools.lru_cache(maxsize=None)
def jax_rejects_unmutated(rel: str) -> tuple[tuple[int | None, str], ...]:
    """JAX's errors (line, message) on tokamax's own, unmutated kernel file `rel` under the
    harness: () where JAX accepts it. Not every tokamax runs on every JAX it allows (tokamax
    0.0.17's SM80 kernels call `plgpu.transpose_ref`, which jax 0.12.1 removed): a kernel JAX
    rejects as written cannot judge planted bugs, hovers or SMEM totals."""
    with tempfile.TemporaryDirectory() as tmp:
        path = harnessed_copy(rel, Path(tmp))
        return tuple((v.line, v.message) for v in trace(path, lower=True) if v.message is not None)


def confirmed_by_jax(file: str, line: int, code: str, message: str) -> bool:
    """Whether real JAX raises this finding of `wgmma-lsp check` on tokamax as installed: in a
    harnessed kernel file, JAX's error on the unmutated file at that line, with that message; a
    WG091 for an attribute the installed JAX removed (`jax_source.missing_attribute`), anywhere:
    `getattr` on the real module raises that message (the line spells the attribute)."""
    message = message.removesuffix(" (on some paths)")
    rel = next((r for r in ENTRIES if file.endswith("/" + r)), None)
    if rel is not None:
        return (line, message) in jax_rejects_unmutated(rel)
    if code != "WG091":
        return False
    import jax.experimental.pallas as pl
    import jax.experimental.pallas.mosaic_gpu as plgpu

    text = Path(file).read_text().splitlines()[line - 1]
    for module in (pl, plgpu):
        for name in set(re.findall(r"\.(\w+)", text)):
            try:
                getattr(module, name)
            except AttributeError as e:
                if str(e) == message:
                    return True
    return False


def runtime(path: Path):
    """`shipped_harness.runtime_arrays` of a harnessed tokamax file (under the stand-in device)."""
    from shipped_harness import runtime_arrays

    with stand_in_device(device_for(path.name)):
        return runtime_arrays(path)


def hover_coverage_of(rel: str, tmp: Path):
    """Hover coverage of one kernel file, (as opened, with the harness's entry points): the names
    that hold arrays/refs are what real JAX held while tracing the harness's entries; the file
    is analysed at its installed path (so that it resolves its own package)."""
    import ast

    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.coverage import hover_coverage

    harnessed = harnessed_copy(rel, tmp)
    seen = runtime(harnessed)
    installed = ops_dir() / rel
    source = installed.read_text()
    tree = ast.parse(source)
    as_opened = hover_coverage(analyze(source, str(installed)), tree, seen.arrays, seen.lines, seen.params)
    with_entry = hover_coverage(analyze(harnessed.read_text(), str(installed)), tree, seen.arrays,
                                seen.lines)
    return as_opened, with_entry


def _main() -> None:
    reason = skip_reason()
    if reason:
        print(reason)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for rel in ENTRIES:
            path = harnessed_copy(rel, Path(tmp))
            for v in trace(path, lower="--lower" in sys.argv):
                print(rel, v.line, v.exc_type, re.sub(r"\s+", " ", v.message or "clean")[:300])


if __name__ == "__main__":
    _main()
