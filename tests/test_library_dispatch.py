"""How a library's op reaches its kernel in a test context, followed as Python runs it:

- the op's own `bind` (tokamax's `RaggedDot.bind` fills `ragged_dot_dimension_numbers=None` with
  the default numbers, wraps `group_sizes`, canonicalises `precision`, then calls the base
  class's `bind`, which binds `_fwd`'s signature and applies its defaults): `_fwd` gets what the
  op's `bind` passes on;
- the GPU it asks about (`jax.extend.backend.get_default_device().compute_capability`,
  `jax.devices()[0].device_kind`): in a test context of a kernel module, the GPU that module is
  written for (`plgpu.wgmma`: Hopper, 9.0; tcgen05: Blackwell, 10.0) — outside one, nothing is
  known;
- `==` of JAX's plain-data values the op dispatches on (enum members, the ragged-dot dimension
  numbers), and an int field of the config class a parameter is annotated with.

The library is tests/fixtures/lib_tests/mylib (see test_package_test_contexts.py), changed here
into those shapes; every answer about Python is checked against CPython."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.target_gpu import gpu_capability
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.interpret.jax_value_equality import IDENTITY_ENUMS, MEMBER_ALIASES
from wgmma_lsp.interpret.values import Const

FIXTURE = Path(__file__).parent / "fixtures" / "lib_tests" / "mylib"

GPU = '''"""What GPU the op runs on, as tokamax's gpu_utils and tests ask."""
import jax
from jax.extend import backend


def _compute_capability():
  device = backend.get_default_device()
  if device.platform != "gpu":
    return None
  cc = getattr(device, "compute_capability", None)
  return None if cc is None else float(cc)


def is_sm90() -> bool:
  cc = _compute_capability()
  kind = jax.devices()[0].device_kind.lower()  # the stand-in's name: "nvidia h100 80gb hbm3"
  return cc is not None and 9.0 <= cc < 10.0 and "a100" not in kind
'''

#: The fixture's op base, its `bind` as tokamax's: `_fwd`'s signature bound, defaults applied.
OP_BASE_BIND = ("    return inspect.signature(self._fwd).bind(*args, **kwargs)\n",
                "    sig = inspect.signature(self._fwd)\n    ba = sig.bind(*args, **kwargs)\n"
                "    ba.apply_defaults()\n    return ba\n")

#: The fixture's op, with a `bind` of its own giving `scale` its default (`_fwd` requires it).
OP_EDITS = [
    ("  def _fwd(self, x, *, scale=None, config):\n    scale = scale or (lambda v: v * 2.0)\n",
     "  def bind(self, x, *, scale=None):\n    if scale is None:\n      scale = _double\n"
     "    return super().bind(x, scale=scale)\n\n  def _fwd(self, x, *, scale, config):\n"),
    ("def _get_kernel_module():", "def _double(v):\n  return v * 2.0\n\n\ndef _get_kernel_module():"),
]


def _edited(path: Path, edits: list[tuple[str, str]]) -> None:
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text)


def _library(tmp_path: Path) -> Path:
    pkg = tmp_path / "mylib"
    shutil.copytree(FIXTURE, pkg)
    (pkg / "gpu.py").write_text(GPU)
    _edited(pkg / "op_base.py", [OP_BASE_BIND])
    _edited(pkg / "op.py", OP_EDITS)
    return pkg / "kernel.py"


def test_the_ops_own_bind_and_the_gpu_it_asks_about_lead_to_the_kernel(tmp_path: Path) -> None:
    path = _library(tmp_path)
    source = path.read_text()
    analysis = analyze(source, str(path))
    lines = source.splitlines()
    line = next(i for i, t in enumerate(lines) if "x_smem[...] = y.astype" in t)
    smem = hover(analysis, line, lines[line].index("x_smem"))
    assert smem is not None and "`Ref<smem>{bfloat16[64,64]}` (with m=128, n=64" in smem.markdown
    y = hover(analysis, line, lines[line].index("y.astype"))
    assert y is not None and "float32[64,64]" in y.markdown  # `scale`: what the op's bind gave


def test_the_first_of_jax_devices_is_the_stand_in_gpu_of_a_test_context() -> None:
    """tokamax's ragged-dot test reads `jax.devices()[0].device_kind.lower()` to pick its config:
    in a test context, the first device is the stand-in GPU; its other items, and any item
    outside a test context, are not known."""
    from types import SimpleNamespace

    from wgmma_lsp.interpret.call import Call
    from wgmma_lsp.models.registry import GETITEM, MODELS

    def first(capability: str | None, index: object = 0) -> str:
        interp = SimpleNamespace(program_hooks=SimpleNamespace(gpu_capability=capability) if capability else None)
        devices = MODELS["jax.devices"](Call(interp, None, [], {}, [], {}, None))
        item = GETITEM["wrapped:" + devices.api](interp, devices, Const(index), None)
        kind = getattr(item, "kwargs", {}).get("device_kind")
        return kind.value if isinstance(kind, Const) else item.describe()

    assert first("9.0") == "NVIDIA H100 80GB HBM3"
    assert first("10.0") == "NVIDIA B200"
    assert first("8.0") == "NVIDIA A100-SXM4-80GB"
    assert first("9.0", 1) == "unknown"
    assert first(None) == "unknown"


def test_the_gpu_a_kernel_module_is_written_for() -> None:
    hopper = "from jax.experimental.pallas import mosaic_gpu as plgpu\ndef k(a, b, c):\n  plgpu.wgmma(a, b, c)\n"
    blackwell = "from jax.experimental.pallas import mosaic_gpu as plgpu\ndef k(a, b, c, d):\n  plgpu.tcgen05_mma(a, b, c, d)\n"
    assert gpu_capability(ast.parse(hopper)) == "9.0"
    assert gpu_capability(ast.parse(blackwell)) == "10.0"
    assert gpu_capability(ast.parse(hopper + blackwell.replace("def k", "def k2"))) is None
    assert gpu_capability(ast.parse("x = 1\n")) is None
    ampere = "from jax.experimental.pallas import mosaic_gpu as plgpu\ndef k(a, b, c):\n  return plgpu.mma(a, b, c)\n"
    assert gpu_capability(ast.parse(ampere)) == "8.0"  # Ampere's `plgpu.mma` alone
    assert gpu_capability(ast.parse(ampere + hopper.replace("def k", "def k2"))) == "9.0"


def test_outside_a_test_context_no_device_is_known() -> None:
    source = ("from jax.extend import backend\nimport jax\n"
              "def f():\n  d = backend.get_default_device()\n  b = jax.default_backend()\n"
              "  first = jax.devices()[0]\n")
    analysis = analyze(source, "snippet.py")
    stored = {r.name: r.values for s, r in analysis.records.items() if r.kind == "store"}
    assert [v.describe() for v in stored["d"]] == ["unknown"]
    assert [v.describe() for v in stored["b"]] == ["unknown"]
    assert [v.describe() for v in stored["first"]] == ["unknown"]


def _analyzer(source: str) -> dict[str, object]:
    analysis = analyze(source, "probe.py")
    out: dict[str, object] = {}
    for span, rec in analysis.records.items():
        if rec.kind == "store" and rec.name and rec.name.startswith("r_"):
            values = {v.value if isinstance(v, Const) else None for v in rec.values}
            out[rec.name] = values.pop() if len(values) == 1 else None
    return out


def _cpython(source: str) -> dict[str, object]:
    program = source + "\nfor k, v in probe().items():\n  if k.startswith('r_'): print(k, v)\n"
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    return {k: v == "True" for k, v in (line.split() for line in out.stdout.splitlines())}


EQUALITY = """
import jax
import jax.numpy as jnp
from jax import lax

def probe():
  default = lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [1]), ([], [])),
                                          lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])
  same = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
  other = lax.RaggedDotDimensionNumbers((([1], [2]), ([], [])), [0], [0])
  r_same = default == same
  r_other = default == other
  r_not_other = default != other
  r_field = default.lhs_ragged_dimensions == (0,)
  r_enum_same = lax.Precision.HIGHEST == lax.Precision.HIGHEST
  r_enum_other = lax.Precision.HIGHEST == lax.Precision.DEFAULT
  r_preset = lax.DotAlgorithmPreset.BF16_BF16_F32 == lax.DotAlgorithmPreset.DEFAULT
  r_two_enums = lax.Precision.DEFAULT == lax.DotAlgorithmPreset.DEFAULT
  preset = lax.DotAlgorithmPreset.BF16_BF16_F32
  r_is_preset = isinstance(preset, lax.DotAlgorithmPreset)
  r_is_precision = isinstance(preset, lax.Precision)
  r_is_str = isinstance(preset, str)
  r_is_algorithm = isinstance(preset, lax.DotAlgorithm)
  r_either = isinstance(preset, (lax.DotAlgorithm, lax.DotAlgorithmPreset))
  r_is_tuple = isinstance(lax.Precision.HIGHEST, (list, tuple))
  pair = (lax.Precision.DEFAULT, lax.Precision.DEFAULT)  # canonicalize_precision's result
  r_pair_is_precision = isinstance(pair, lax.Precision)
  r_pair_is_preset = isinstance(pair, (lax.DotAlgorithm, lax.DotAlgorithmPreset))
  r_none_is_precision = isinstance(None, lax.Precision)
  r_str_is_preset = isinstance("BF16_BF16_F32", lax.DotAlgorithmPreset)
  # JAX's configuration at its defaults (tokamax: `if (p := jax.config.jax_default_matmul_precision) is None`)
  r_no_default_precision = jax.config.jax_default_matmul_precision is None
  r_x64 = jax.config.jax_enable_x64
  # dtypes as set elements: numpy.dtype objects hash as themselves, apart from scalar types
  supported = frozenset({jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16)})
  r_bf16_supported = jnp.dtype(jnp.ones(2, jnp.bfloat16).dtype) in supported
  r_f32_unsupported = jnp.dtype(jnp.float32) not in supported
  r_name_not_element = "bfloat16" in supported
  r_two_dtypes = len({jnp.dtype("float32"), jnp.ones(1).dtype, jnp.dtype(jnp.float16)}) == 2
  # jnp.promote_types (tokamax's tests: `x.astype(jnp.promote_types(x.dtype, jnp.float32))`)
  r_promote_bf16 = jnp.promote_types(jnp.ones(1, jnp.bfloat16).dtype, jnp.float32) == jnp.float32
  r_promote_halves = jnp.promote_types(jnp.float16, jnp.bfloat16) == jnp.float32
  r_promote_ints = jnp.promote_types(jnp.uint8, jnp.int8) == jnp.int16
  r_promote_mixed = jnp.promote_types(jnp.int8, jnp.float16) == jnp.float16
  r_promote_is_dtype = jnp.promote_types(jnp.int8, jnp.float16) in supported
  return locals()
"""


def test_jax_plain_data_compares_as_cpython_compares_it() -> None:
    expected = _cpython(EQUALITY)
    got = _analyzer(EQUALITY)
    assert set(got) == set(expected)
    for name, answer in got.items():
        assert answer is expected[name], name  # every one decided, as CPython answers


def test_the_enums_compared_by_identity_still_are_in_the_installed_jax() -> None:
    import enum

    from jax import lax
    from jax.experimental.pallas import mosaic_gpu as plgpu

    modules = {"lax": lax, "plgpu": plgpu}
    for name in IDENTITY_ENUMS:
        module, _, cls_name = name.partition(".")
        cls = getattr(modules[module], cls_name)
        values = [m.value for m in cls]
        assert issubclass(cls, enum.Enum) and cls.__eq__ is enum.Enum.__eq__
        assert len(values) == len(set(map(repr, values))) == len(cls.__members__), name  # no aliases
    for alias, member in MEMBER_ALIASES.items():
        module, _, rest = member.partition(".")
        enum_name, _, member_name = rest.partition(".")
        assert getattr(plgpu, alias.split(".", 1)[1]) is getattr(getattr(modules[module], enum_name), member_name)


CONFIG = """
import dataclasses
from typing import Annotated
import jax
import jax.numpy as jnp
from jax import lax
import pydantic

@pydantic.dataclasses.dataclass(frozen=True)
class Config:
  block_m: Annotated[int, pydantic.Field(multiple_of=8, gt=0)]
  block_k: pydantic.PositiveInt
  name: str = "x"

@dataclasses.dataclass(frozen=True)
class Plain:
  block_n: int
  loose: pydantic.PositiveInt = 1

def body(x: jax.Array, config: Config, plain: Plain):
  start = jnp.zeros((), jnp.int32)
  lb = lax.div(start, config.block_k)
  rows = jnp.zeros((config.block_m, plain.block_n), jnp.float32)
  named = config.name
  loose = plain.loose
"""


def test_an_int_field_of_the_declared_config_class_is_an_int() -> None:
    analysis = analyze(CONFIG, "config_probe.py")
    stored = {r.name: [v.describe() for v in r.values] for s, r in analysis.records.items() if r.kind == "store"}
    assert stored["lb"] == ["int32[]"]  # `lax.div(int32, int)`: JAX's int32
    assert stored["rows"] == ["float32[config.block_m, plain.block_n]"]
    assert stored["named"] == ["unknown (config.name)"]  # a str field: not an int
    assert stored["loose"] == ["unknown (plain.loose)"]  # pydantic's PositiveInt, not validated here
