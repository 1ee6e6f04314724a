"""`match` statements as CPython runs them (interpret/interp_match.py): the first case whose
pattern matches and whose guard holds runs; an undecided pattern or guard leaves the case on a
path of its own. Each program runs in CPython and through the interpreter: where the
interpreter claims a value, it is CPython's.

tokamax's precision helpers pick a `lax.DotAlgorithmPreset` with `match dtype:` / `match
precision:` and read the preset's `accumulation_type` (a `match self:` in JAX itself, read from
the installed JAX: interpret/jax_dot_presets.py).
"""

from __future__ import annotations

from pytree_agree import claims
from test_python_calls import agree

from wgmma_lsp.interpret import jax_dot_presets

CLASSES = """
import dataclasses
import enum

class P(enum.Enum):
    DEFAULT = 0
    HIGH = 1

@dataclasses.dataclass(frozen=True)
class Pt:
    x: int
    y: int = 0

class Plain:
    pass
"""


def test_value_singleton_or_and_guard_patterns() -> None:
    agree(CLASSES + """
def preset(dtype, precision):
    match dtype:
        case "f16":
            match precision:
                case P.DEFAULT | None:
                    return "bf16"
                case P.HIGH:
                    return "bf16x3"
                case _:
                    raise ValueError(precision)
        case "f32" if precision is None:
            return "tf32"
        case "f32":
            return "f32"
    return "other"

def flag(v):
    match v:
        case True:
            return "true"
        case 1:
            return "one"
        case None:
            return "none"
        case 0.0 | "":
            return "falsy"
    return "?"

picked = (preset("f16", None), preset("f16", P.HIGH), preset("f32", None), preset("f32", P.DEFAULT),
          preset("f8", None))
flags = (flag(True), flag(1), flag(1.0), flag(None), flag(0), flag(""), flag(False), flag(2))
""", "picked", "flags")


def test_sequence_mapping_class_and_capture_patterns() -> None:
    agree(CLASSES + """
def shape(v):
    match v:
        case []:
            return "empty"
        case [x]:
            return ("one", x)
        case [x, *rest] if x > 0:
            return ("many", x, len(rest))
        case [_, _, *_]:
            return "many-nonpositive"
        case {"m": m, **others}:
            return ("dict", m, len(others))
        case {"k": 1}:
            return "k1"
        case Pt(x=0):
            return "origin-x"
        case Pt(a, b):
            return ("pt", a, b)
        case int(n) if n > 3:
            return ("big", n)
        case str() | bytes():
            return "text"
        case (1, 2) as pair:
            return ("pair", pair)
        case Plain():
            return "plain"
    return None

results = (shape([]), shape((7,)), shape([1, 2, 3]), shape([0, 2, 3]), shape({"m": 1, "n": 2}),
           shape({"k": 1}), shape({"k": 2}), shape(Pt(0, 5)), shape(Pt(2, 5)), shape(9), shape(2),
           shape("abc"), shape(b"x"), shape(Plain()), shape(3.5))
""", "results")


def test_an_undecided_pattern_or_guard_claims_nothing_either_way() -> None:
    source = CLASSES + """
import os

unknown = os.environ.get("WGMMA_LSP_NOT_SET")

def pick(v):
    match v:
        case "a":
            return 1
        case _:
            return 2

def guarded(n, flag):
    match n:
        case int() if flag:
            return "guarded"
    return "fell through"

def alternatives(v):
    match v:
        case "x" | 1 | _:  # the wildcard matches whatever the undecided alternatives do
            return "matched"
    return "no match"

either = pick(unknown)
known = pick("a")
maybe = guarded(3, unknown)
always = alternatives(unknown)
"""
    assert claims(source, "either") is None
    assert claims(source, "maybe") is None
    assert claims(source, "known") == 1
    assert claims(source, "always") == "matched"


def test_a_precision_preset_picked_by_match_and_its_accumulation_type_as_jax_gives_them() -> None:
    agree("""
import jax.numpy as jnp
from jax import lax

def to_preset(dtype, precision):
    match dtype:
        case jnp.float16:
            match precision:
                case lax.Precision.DEFAULT | None:
                    return lax.DotAlgorithmPreset.F16_F16_F32
                case _:
                    return lax.DotAlgorithmPreset.F32_F32_F32
        case jnp.bfloat16:
            return lax.DotAlgorithmPreset.BF16_BF16_F32
    return lax.DotAlgorithmPreset.DEFAULT

f16 = to_preset(jnp.float16, None) == lax.DotAlgorithmPreset.F16_F16_F32
bf16 = to_preset(jnp.dtype("bfloat16"), lax.Precision.HIGHEST) == lax.DotAlgorithmPreset.BF16_BF16_F32
logits_is_f32 = jnp.dtype(to_preset(jnp.bfloat16, None).accumulation_type) == jnp.float32
default_has_none = lax.DotAlgorithmPreset.DEFAULT.accumulation_type is None
bf16_bf16 = jnp.dtype(lax.DotAlgorithmPreset.BF16_BF16_BF16.accumulation_type) == jnp.bfloat16
""", "f16", "bf16", "logits_is_f32", "default_has_none", "bf16_bf16")


def test_every_presets_accumulation_type_is_the_installed_jaxs() -> None:
    import numpy as np
    from jax import lax

    table = jax_dot_presets.read()
    assert table is not None and set(table) == set(lax.DotAlgorithmPreset.__members__)
    for name, dtype in table.items():
        actual = lax.DotAlgorithmPreset[name].accumulation_type
        assert (None if actual is None else np.dtype(actual).name) == dtype, name
