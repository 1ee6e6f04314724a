"""`jnp.result_type(...)` in the analyzer is JAX's answer (models/dtype_info.py).

Libraries pick a kernel's output dtype with it (tokamax's ragged dot: `preferred_element_type =
jnp.result_type(lhs, rhs)`, then an SMEM buffer of that dtype the epilogue stores into): without
it the buffer's dtype was unknown and a store of the float32 accumulator went unchecked.

Checked differentially: random argument lists (arrays, dtypes, dtype names, Python scalars,
`None`) are evaluated by the installed JAX and by the analyzer; wherever JAX answers, the
analyzer gives the same dtype, and where JAX refuses, the analyzer claims nothing.
"""

from __future__ import annotations

import random
import warnings

import pytest

jnp = pytest.importorskip("jax.numpy")

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.values import DTypeVal

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float16",
          "bfloat16", "float32", "float64", "complex64", "float8_e4m3fn"]
#: (analyzer source, the Python value JAX gets)
SCALARS = [("True", True), ("3", 3), ("2.5", 2.5), ("1j", 1j), ("None", None)]


def _operands(rng: random.Random) -> list[tuple[str, object]]:
    out = []
    for _ in range(rng.choice((1, 2, 2, 3))):
        kind = rng.choice(("array", "array", "dtype", "name", "scalar"))
        if kind == "scalar":
            out.append(rng.choice(SCALARS))
            continue
        name = rng.choice(DTYPES)
        if kind == "array":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                array = jnp.zeros((2,), getattr(jnp, name))
            out.append((f"jnp.zeros((2,), jnp.{name})", array))
        elif kind == "dtype":
            out.append((f"jnp.{name}", getattr(jnp, name)))
        else:
            out.append((repr(name), name))
    return out


def _jax_answer(values: list[object]) -> str | None:
    try:
        with warnings.catch_warnings():  # int64/float64 truncated to 32 bits: said, expected
            warnings.simplefilter("ignore", UserWarning)
            return str(jnp.result_type(*values))
    except (TypeError, ValueError):  # JAX refuses (TypePromotionError: a promotion it forbids)
        return None


def _cases(n: int, seed: int = 1234) -> list[tuple[str, str | None]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        ops = _operands(rng)
        cases.append((", ".join(src for src, _ in ops), _jax_answer([v for _, v in ops])))
    return cases


def _analyzer_answers(calls: list[str]) -> dict[str, object]:
    body = "".join(f"    r_{i} = jnp.result_type({c})\n" for i, c in enumerate(calls))
    source = f"import jax.numpy as jnp\n\ndef probe():\n{body}    return 0\n\nprobe()\n"
    out: dict[str, object] = {}
    for rec in analyze(source, "probe.py").records.values():
        if rec.kind == "store" and rec.name and rec.name.startswith("r_"):
            known = {str(v.dtype) for v in rec.values if isinstance(v, DTypeVal)}
            out[rec.name] = known.pop() if len(known) == 1 and len(rec.values) == 1 else None
    return out


def test_result_type_is_jaxs_wherever_jax_answers() -> None:
    cases = _cases(400)
    got = _analyzer_answers([c for c, _ in cases])
    answered = 0
    for i, (call, expected) in enumerate(cases):
        mine = got.get(f"r_{i}")
        if expected is None:
            assert mine is None, f"jnp.result_type({call}): JAX refuses, the analyzer said {mine}"
            continue
        answered += 1
        assert mine == expected, f"jnp.result_type({call}): JAX {expected}, the analyzer {mine}"
    assert answered > 300  # the cases are mostly ones JAX answers: the comparison is not empty
    assert answered < len(cases)  # and some it refuses (float8 with other floats)


def test_the_corners_tokamax_meets() -> None:
    """bf16 x bf16 is bf16 (the ragged dot's output); a weak float with bf16 stays bf16; two
    weak scalars give the default types; int8 with uint8 widens."""
    calls = ["jnp.zeros((2,), jnp.bfloat16), jnp.zeros((2,), jnp.bfloat16)",
             "jnp.zeros((2,), jnp.bfloat16), 2.5", "2.5, 3", "3", "jnp.int8, jnp.uint8",
             "jnp.float64"]
    got = _analyzer_answers(calls)
    assert [got[f"r_{i}"] for i in range(len(calls))] == [
        "bfloat16", "bfloat16", "float32", "int32", "int16", "float32"]
    values: list[list[object]] = [[jnp.zeros((2,), jnp.bfloat16)] * 2, [jnp.zeros((2,), jnp.bfloat16), 2.5], [2.5, 3],
              [3], [jnp.int8, jnp.uint8], [jnp.float64]]
    assert [_jax_answer(v) for v in values] == [got[f"r_{i}"] for i in range(len(calls))]


def test_unknown_operands_give_no_dtype() -> None:
    source = ("import jax.numpy as jnp\n\ndef probe(x, dt):\n    r_0 = jnp.result_type(x, jnp.float32)\n"
              "    r_1 = jnp.result_type(jnp.float32, dtype=dt)\n    return 0\n")  # analysed with x, dt unknown
    got = {rec.name: rec.values for rec in analyze(source, "probe.py").records.values()
           if rec.kind == "store" and rec.name in ("r_0", "r_1")}
    assert got and not any(isinstance(v, DTypeVal) for vs in got.values() for v in vs)
