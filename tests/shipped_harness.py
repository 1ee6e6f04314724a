"""A harness that calls the entry points of the kernels shipped in the installed jax.

The kernel files (`jax/experimental/pallas/ops/gpu/*_mgpu.py`) are read at test time, never
copied into this repository. To trace them on a CPU:

- `SHIMS` replace the few expressions that ask the GPU for facts a CPU cannot give (its SM
  count, the CUDA runtime version) by constants, on the same line (line numbers stay put);
- `ENTRIES` name, per file, calls of the file's entry points with concrete configs and
  `jax.ShapeDtypeStruct` arguments, written as `# wgmma-lsp: trace CALL` lines appended at the
  end of the file (compact specs: `f16[512,512]`). Both sides read the same lines: real JAX
  (`trace_entries` below, `jax.make_jaxpr` on the CPU, lowering for "cuda" on request) and
  wgmma-lsp (its comment entry points).
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from wgmma_lsp.trace.entries import parse_entry_points

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jax_oracle import _blamed_line, _mlir_verification, jax_message  # noqa: E402

_counter = itertools.count()

#: (pattern, replacement) applied wherever the pattern occurs: GPU facts become constants.
SHIMS: list[tuple[str, str]] = [
    ("backend.get_default_device().core_count", "132"),
    ("jax.devices()[0].core_count", "132"),
    ("jax.local_devices()[0].core_count", "132"),
    ("assert cuda_versions is not None", "pass"),
    ("cuda_versions.cuda_runtime_get_version()", "12090"),
]

_HOPPER_CFG = "TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=4)"
_BW_CFG = ("TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2, "
           "collective=False)")

#: Calls of each file's entry points, with concrete configs (what a test or benchmark does).
ENTRIES: dict[str, list[str]] = {
    "hopper_matmul_mgpu.py": [
        f"functools.partial(matmul, config={_HOPPER_CFG})(f16[512,512], f16[512,512], None)",
    ],
    "hopper_mixed_type_matmul_mgpu.py": [
        f"functools.partial(mixed_matmul_kernel, out_dtype=jnp.float16, config={_HOPPER_CFG})"
        "(i8[512,512], f16[512,512])",
    ],
    "attention_mgpu.py": [
        "functools.partial(attention, config=TuningConfig(block_q=64, block_kv=64, "
        "max_concurrent_steps=2))(f16[1,256,2,64], f16[1,256,1,64], f16[1,256,1,64])",
        "functools.partial(attention_with_pipeline_emitter, config=TuningConfig(block_q=64, "
        "block_kv=64, max_concurrent_steps=2))(f16[1,256,2,64], f16[1,256,1,64], f16[1,256,1,64])",
    ],
    "blackwell_matmul_mgpu.py": [
        f"functools.partial(matmul_kernel, config={_BW_CFG})(f16[512,512], f16[512,512])",
    ],
    "blackwell_ragged_dot_mgpu.py": [
        "functools.partial(ragged_dot_kernel, config=TuningConfig(tile_m=128, tile_n=128, "
        "tile_k=64, max_concurrent_steps=2, collective=True, grid_tile_width=1, "
        "grid_minor_dim=blackwell_matmul_mgpu.MatmulDimension.N))"
        "(f16[512,512], f16[4,512,512], i32[4])",
    ],
    "ragged_dot_mgpu.py": [
        "functools.partial(ragged_dot, block_m=64, block_n=128, block_k=64, "
        "max_concurrent_steps=2, grid_block_n=2)(f16[512,512], f16[4,512,512], group_sizes=i32[4])",
    ],
    "transposed_ragged_dot_mgpu.py": [
        "functools.partial(transposed_ragged_dot, block_m=64, block_n=128, block_k=64, "
        "max_concurrent_steps=2, grid_block_n=2)(f16[512,512], f16[512,512], group_sizes=i32[4])",
    ],
}

# Collective kernels run under `jax.shard_map` over a one-device mesh (the CPU has one device).
_SHARD = ("jax.shard_map({body}, mesh=jax.make_mesh((1,), ('x',)), "
          "in_specs={specs}, out_specs=jax.sharding.PartitionSpec(None, None), check_vma=False)")
_P = "jax.sharding.PartitionSpec(None, None)"
ENTRIES.update({
    "all_gather_mgpu.py": [
        _SHARD.format(body="lambda x: all_gather(x, axis_name='x', gather_dimension=0, num_blocks=4, "
                           "tile_size=1024)", specs=_P) + "(f16[512,512])",
    ],
    "reduce_scatter_mgpu.py": [
        _SHARD.format(body="lambda x: reduce_scatter(x, axis_name='x', scatter_dimension=0, "
                           "num_blocks=4, tile_size=1024)", specs=_P) + "(f16[512,512])",
    ],
    "collective_matmul_mgpu.py": [
        _SHARD.format(body="lambda a, b: all_gather_lhs_matmul(a, b, 'x', config=hopper_matmul_mgpu."
                           f"{_HOPPER_CFG})", specs=f"({_P}, {_P})") + "(f16[512,512], f16[512,512])",
    ],
})

HARNESS_MARK = "# --- wgmma-lsp test harness (appended at test time) ---"


def kernel_dir() -> Path:
    import jax

    return Path(jax.__file__).parent / "experimental" / "pallas" / "ops" / "gpu"


def shipped_kernel_files() -> list[Path]:
    return sorted(kernel_dir().glob("*_mgpu.py"))


def apply_shims(source: str) -> str:
    for pattern, replacement in SHIMS:
        source = source.replace(pattern, replacement)
    return source


def with_harness(source: str, name: str) -> str:
    """The file with its shims applied and its entry points appended as trace comments."""
    lines = [apply_shims(source).rstrip("\n"), "", HARNESS_MARK]
    lines += [f"# wgmma-lsp: trace {call}" for call in ENTRIES.get(name, [])]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Verdict:
    entry: str
    line: int | None  # 1-based line JAX blames, None for a clean trace
    message: str | None
    exc_type: str | None = None
    stage: str | None = None  # "trace" (make_jaxpr) or "lower" (lowering for cuda)


def _load(path: Path):
    name = f"_wgmma_shipped_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def trace_entries(path: Path, lower: bool = False, ran: set[int] | None = None) -> list[Verdict]:
    """Real JAX on every entry point of a harnessed file: `jax.make_jaxpr`, then (with `lower`)
    lowering for "cuda". Array arguments (positional or keyword) are traced; the rest is fixed.
    With `ran`, the lines of the file that executed are added to it."""
    if ran is not None:
        return _with_line_trace(path, ran, lambda: trace_entries(path, lower))
    import jax
    import jax.numpy as jnp

    source = path.read_text()
    try:
        module = _load(path)
    except Exception as e:  # a mutation that breaks the module itself
        return [Verdict("<import>", _blamed_line(e, path), str(e), type(e).__name__)]
    ns = dict(vars(module))
    ns["__wgmma_spec__"] = lambda dtype, shape: jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    out = []
    for entry in parse_entry_points(source):
        call = ast.parse(entry.expression, mode="eval").body
        assert isinstance(call, ast.Call), entry

        def ev(node: ast.expr):
            return eval(compile(ast.Expression(node), "<entry>", "eval"), ns)

        fn = ev(call.func)
        args = [ev(a) for a in call.args]
        kwargs = {k.arg: ev(k.value) for k in call.keywords if k.arg}
        is_arr = lambda a: isinstance(a, jax.ShapeDtypeStruct)  # noqa: E731
        arrays = [a for a in args if is_arr(a)] + [v for v in kwargs.values() if is_arr(v)]

        def traced(*xs, fn=fn, args=args, kwargs=kwargs):
            it = iter(xs)
            a2 = [next(it) if is_arr(a) else a for a in args]
            k2 = {k: next(it) if is_arr(v) else v for k, v in kwargs.items()}
            return fn(*a2, **k2)

        stage = "trace"
        try:
            jax.make_jaxpr(traced)(*arrays)
            if lower:
                stage = "lower"
                jax.jit(traced).trace(*arrays).lower(lowering_platforms=("cuda",))
        except Exception as e:  # the verdict we compare against
            # JAX 0.10's MLIR verifier failures name the failing op's location in the message
            # (`Verification failed:` then the op's message), as the fixtures' oracle reads them.
            mlir = _mlir_verification(str(e), path)
            if mlir is not None:
                out.append(Verdict(entry.call, mlir[0], mlir[1], type(e).__name__, stage))
                continue
            out.append(Verdict(entry.call, _blamed_line(e, path), jax_message(e), type(e).__name__, stage))
        else:
            out.append(Verdict(entry.call, None, None))
    return out


@dataclass
class Runtime:
    """What JAX did while tracing a harnessed file: `arrays` maps (first line of a function,
    local name) to the aval of the JAX array or ref it held; `lines` are the 1-based lines that
    ran."""

    arrays: dict[tuple[int, str], str]
    lines: set[int]
    params: dict[tuple[int, str], str]  # what parameters held on entry to their function


def runtime_arrays(path: Path) -> Runtime:
    """Which local names of the harnessed file hold JAX arrays or refs while JAX traces its
    entry points, and which lines ran. Observed with `sys.settrace` while `jax.make_jaxpr` runs
    (each function's locals, closure cells included, at every line and at its return). This is
    the ground truth the hover-coverage benchmark counts against: the analyzer's own opinion
    does not decide which names count."""
    import jax
    from jax._src.state.types import TransformedRef

    target = str(path)
    seen: dict[tuple[int, str], str] = {}
    ran: set[int] = set()
    params: dict[tuple[int, str], str] = {}

    def snapshot(frame, into: dict[tuple[int, str], str]) -> None:
        ran.add(frame.f_lineno)
        key_line = frame.f_code.co_firstlineno
        for name, v in frame.f_locals.items():
            if isinstance(v, (jax.core.Tracer, TransformedRef)):
                try:
                    aval = str(v.aval) if not isinstance(v, TransformedRef) else str(v)
                except Exception:
                    aval = type(v).__name__
                into.setdefault((key_line, name), aval)

    def local(frame, event, arg):
        if event in ("line", "return"):
            snapshot(frame, seen)
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename == target:
            snapshot(frame, params)  # the "call" event: only the parameters are bound
            return local
        return None

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        trace_entries(path)
    finally:
        sys.settrace(old)
    return Runtime(seen, ran, params)


def _with_line_trace(path: Path, ran: set[int], fn):
    target = str(path)

    def local(frame, event, arg):
        ran.add(frame.f_lineno)
        return local

    def global_(frame, event, arg):
        return local if frame.f_code.co_filename == target else None

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        return fn()
    finally:
        sys.settrace(old)


def first_line(message: str | None) -> str:
    return (message or "").strip().splitlines()[0] if message else ""


def _main() -> None:  # python tests/shipped_harness.py: JAX's verdict on each unmutated file
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for path in shipped_kernel_files():
            if path.name not in ENTRIES:
                print(f"{path.name}: no entry")
                continue
            out = Path(tmp) / path.name
            out.write_text(with_harness(path.read_text(), path.name))
            for v in trace_entries(out, lower="--lower" in sys.argv):
                print(path.name, v.line, v.exc_type, re.sub(r"\s+", " ", v.message or "clean")[:300])


if __name__ == "__main__":
    _main()
