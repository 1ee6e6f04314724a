"""Classes as kernel configs are written, against CPython; and the calls that end a test's path.

Each program runs in CPython and through the interpreter (tests/python_programs.py): every value
the interpreter claims must be CPython's, and the names listed must be known (claimed) — the
forms tokamax's configs take: dataclasses with defaults and `field(...)`, `__post_init__`,
`replace`, NamedTuples, enums compared in `if`s, pydantic models with defaults and validators
that only check, properties and cached properties, inheritance with `super().__init__`, class
and static methods; typing constructs and jaxtyping annotations are inert.
"""

from __future__ import annotations

import pytest

from python_programs import HEADER, LAST_ERROR, Tally, compare_value, run_cpython, run_interpreter

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.values import Const, DictVal, TupleVal


def known_values(body: str) -> dict[str, object]:
    """Run `body` both ways; CPython's value of each name the interpreter knows (asserting
    that every claim agrees)."""
    source = HEADER + body
    expected = run_cpython(source)
    assert expected is not None, f"the program raises in CPython: {LAST_ERROR[0]!r}"
    got, interp = run_interpreter(source)
    tally = Tally()
    known = {}
    for name, actual in expected.items():
        if name in got and not name.startswith("__"):
            before = tally.claims
            compare_value(got[name], actual, name, tally, interp)
            v = mutation.live(interp, got[name])
            if tally.claims > before and isinstance(v, (Const, TupleVal, DictVal)):
                known[name] = actual
    assert not tally.disagreements, tally.disagreements
    return known


def assert_known(body: str, *names: str) -> None:
    known = known_values(body)
    missing = [n for n in names if n not in known]
    assert not missing, f"not known: {missing} (known: {sorted(known)})"


def test_a_dataclass_config_with_defaults_fields_post_init_and_replace() -> None:
    assert_known("""
@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    tile_m: int = 128
    tile_n: int = 64
    stages: int = dataclasses.field(default=2)
    dims: tuple = dataclasses.field(default_factory=tuple)
    epilogue: typing.ClassVar[str] = "none"

    def __post_init__(self):
        object.__setattr__(self, "unused", 0) if False else None

    @property
    def smem_tiles(self):
        return self.stages * self.tile_m * self.tile_n

cfg = Config(tile_n=256)
smem = cfg.smem_tiles
steps = cfg.tile_m * 2 // cfg.stages
deeper = dataclasses.replace(cfg, stages=4).smem_tiles
dims = cfg.dims
epilogue = Config.epilogue
""", "smem", "steps", "deeper", "dims", "epilogue")


def test_post_init_derives_and_replace_derives_again() -> None:
    assert_known("""
@dataclasses.dataclass
class Tiling:
    m: int
    k: int = 64
    def __post_init__(self):
        self.blocks = self.m // self.k

t = Tiling(256)
blocks = t.blocks
again = dataclasses.replace(t, k=32).blocks
""", "blocks", "again")


def test_enums_compared_in_ifs() -> None:
    assert_known("""
class Layout(enum.Enum):
    ROW = "row"
    COL = "col"
    SAME_AS_ROW = "row"  # an alias: the same member

class Kind(enum.Enum):
    A = enum.auto()
    B = enum.auto()

class Stages(enum.IntEnum):
    ONE = 1
    TWO = 2

layout = Layout.ROW
if layout == Layout.COL:
    tile = 64
elif layout is Layout.ROW:
    tile = 128
else:
    tile = 0
name = layout.name
value = Layout("row").value
by_name = Layout["COL"] is Layout.COL
plain_is_not_its_value = Layout.ROW == "row"
int_enum_is_its_value = Stages.TWO == 2
count = len([m for m in Stages])
alias = Layout.SAME_AS_ROW is Layout.ROW
auto = Kind.B.value
member_in = layout in (Layout.COL, Layout.ROW)
int_in = Stages.TWO in (1, 2)
""", "tile", "name", "value", "by_name", "plain_is_not_its_value", "int_enum_is_its_value", "count",
                 "alias", "auto", "member_in", "int_in")


def test_named_tuples() -> None:
    assert_known("""
class Block(typing.NamedTuple):
    m: int
    n: int = 32

b = Block(64)
m, n = b
area = b.m * b.n
swapped = b._replace(n=16).n
first = b[0]
as_dict = b._asdict()
""", "m", "n", "area", "swapped", "first", "as_dict")


def test_inheritance_super_and_class_and_static_methods() -> None:
    assert_known("""
class Base:
    scale = 2
    def __init__(self, m):
        self.m = m * self.scale
    @staticmethod
    def align(x):
        return -(-x // 8) * 8
    @classmethod
    def make(cls, m):
        return cls(m)
    def size(self):
        return self.m

class Derived(Base):
    scale = 3
    def __init__(self, m, extra=1):
        super().__init__(m)
        self.extra = extra
    def size(self):
        return super().size() + self.extra

d = Derived.make(4)
size = d.size()
aligned = d.align(13)
m = d.m
""", "size", "aligned", "m")


def test_cached_property_and_typing_constructs_are_inert() -> None:
    assert_known("""
T = typing.TypeVar("T")

class Holder(typing.Generic[T]):
    LIMIT: typing.Final = 228 * 1024
    def __init__(self, n: typing.Annotated[int, "rows"]):
        self.n = n
    @functools.cached_property
    def doubled(self) -> typing.Literal[1, 2]:
        return self.n * 2

h = Holder(21)
doubled = h.doubled
limit = Holder.LIMIT
""", "doubled", "limit")


def test_pydantic_model_fields_with_defaults_and_checking_validators() -> None:
    pytest.importorskip("pydantic")
    assert_known("""
import pydantic

class Config(pydantic.BaseModel):
    tile_m: int = 64
    tile_n: int = pydantic.Field(128, ge=16)
    num_stages: int = 2

    @pydantic.field_validator("tile_m")
    @classmethod
    def _check(cls, v):
        if v % 16:
            raise ValueError("tile_m")
        return v

cfg = Config(num_stages=4)
tiles = cfg.tile_m * cfg.tile_n * cfg.num_stages

class Dim(enum.IntEnum):
    M = 0
    N = 1

@pydantic.dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KernelConfig:
    block_m: typing.Annotated[int, pydantic.Field(multiple_of=8, gt=0)] = 64
    block_n: pydantic.PositiveInt = 128
    persistent: pydantic.StrictBool = True
    minor: Dim = Dim.N
    scale: float = 1.0

@pydantic.dataclasses.dataclass(frozen=True, kw_only=True)
class Derived(KernelConfig):
    split_k: pydantic.PositiveInt = 1

k = Derived(block_m=128, split_k=2)
if k.minor == Dim.M:
    steps = k.block_m // k.split_k
else:
    steps = k.block_n // k.split_k
persistent = k.persistent
converted = Derived(scale=2).scale  # pydantic makes it 2.0: the interpreter does not claim 2
""", "tiles", "steps", "persistent")


def test_pydantic_configs_built_in_a_loop_keep_each_value_and_dedupe_in_a_set() -> None:
    """An autotuning enumeration: one pydantic class built again and again, its `Literal` field
    given each of its strings in turn (what pydantic accepts depends on the value there, not on the
    annotation alone) and its frozen instances deduplicated in a set by their fields."""
    pytest.importorskip("pydantic")
    assert_known("""
import pydantic
from typing import Literal

@pydantic.dataclasses.dataclass(frozen=True)
class Config:
    tile_m: typing.Annotated[int, pydantic.Field(ge=64, multiple_of=64)] = 128
    mode: Literal["fast", "exact"] = "fast"
    persistent: pydantic.StrictBool | Literal["static"] = False
    stages: pydantic.PositiveInt = 2

    def __post_init__(self):
        if self.tile_m % 64 != 0:
            raise ValueError("tile_m")

configs = set()
for tile_m in (64, 128, 64):
    for mode in ("exact", "fast"):
        for persistent in (True, "static", True):
            configs.add(Config(tile_m=tile_m, mode=mode, persistent=persistent, stages=1))
picked = Config(tile_m=128, mode="exact", persistent="static", stages=1)
count = len(configs)
found = picked in configs
never_built = Config(tile_m=64, mode="fast", persistent=False, stages=1) in configs
fields = (picked.mode, picked.persistent, Config(mode="exact").mode, Config().persistent)
""", "count", "found", "never_built", "fields")


def test_jaxtyping_annotations_are_inert() -> None:
    pytest.importorskip("jaxtyping")
    assert_known("""
import jaxtyping

def rows(x: jaxtyping.Float[jaxtyping.Array, "*B M K"], m: int = 64) -> int:
    return m * 2

r = rows(None)
""", "r")


# -- paths that end ---------------------------------------------------------------------------

KERNEL_HEADER = """\
import jax.numpy as jnp
import pytest
from absl.testing import absltest
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

"""


def severities(source: str) -> list[tuple[str, Severity]]:
    return [(d.code, d.severity) for d in diagnostics(analyze(KERNEL_HEADER + source))]


BF16_STORE = """\
    def body(acc_ref):
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    pl.run_scoped(body, plgpu.ACC((64, 128)))
"""


def test_a_bf16_store_into_the_accumulator_is_an_error() -> None:
    # (the finding the tests below put after a skip)
    assert severities("class KernelTest(absltest.TestCase):\n  def test_it(self):\n" + BF16_STORE) \
        == [("WG001", Severity.ERROR)]


@pytest.mark.parametrize("skip", ['self.skipTest("no GPU")', 'pytest.skip("no GPU")',
                                  'self.fail("unsupported")', "raise absltest.SkipTest('no GPU')"])
def test_a_skip_ends_the_path(skip: str) -> None:
    source = f"class KernelTest(absltest.TestCase):\n  def test_it(self):\n    {skip}\n" + BF16_STORE
    assert severities(source) == []


def test_a_skip_on_some_paths_leaves_a_finding_on_the_others() -> None:
    source = ("class KernelTest(absltest.TestCase):\n  def test_it(self, on_tpu):\n"
              "    if on_tpu:\n      self.skipTest('TPU only')\n" + BF16_STORE)
    assert severities(source) == [("WG001", Severity.WARNING)]


def test_isinstance_object_setattr_and_frozen_instances() -> None:
    assert_known("""
class Base:
    pass

class Child(Base):
    pass

@dataclasses.dataclass(frozen=True)
class Frozen:
    m: int = 2
    def __post_init__(self):
        object.__setattr__(self, "twice", self.m * 2)

def bump(f):
    try:
        f.m = 5  # FrozenInstanceError
    except dataclasses.FrozenInstanceError:
        pass
    return f.m

c = Child()
checks = [isinstance(c, Base), isinstance(Base(), Child), isinstance(3, int), isinstance(True, int),
          isinstance([1], (tuple, list)), isinstance("x", (int, float)), isinstance({}, dict)]
twice = Frozen().twice
unchanged = bump(Frozen())
""", "checks", "twice", "unchanged")


def test_dataclasses_compare_their_fields_and_objects_themselves() -> None:
    assert_known("""
@dataclasses.dataclass
class Point:
    x: int = 1

class Plain:
    pass

same_fields = Point() == Point()
different = Point(2) != Point(3)
in_lists = [Point()] == [Point()]
two_objects = Plain() == Plain()
""", "same_fields", "different", "in_lists", "two_objects")


def test_each_call_of_a_memoised_function_makes_its_own_objects() -> None:
    # After module code, calls are memoised (interpret/memo.py): a replayed call's result is
    # made anew, so changing what one call returned leaves the other's alone, as in CPython.
    source = """
class P:
    def __init__(self):
        self.x = 0

def make():
    return P()

def one():
    return [1]

def main():
    a = make()
    b = make()
    a.x = 5
    bx = b.x
    u = one()
    v = one()
    u.append(2)
    n = len(v)
    same = a == b

if __name__ == "__main__":
    main()
"""
    analysis = analyze(source)
    got = {rec.name: [v.describe() for v in rec.values] for rec in analysis.records.values()
           if rec.name in ("bx", "n", "same")}
    assert got == {"bx": ["0"], "n": ["1"], "same": ["False"]}


def test_what_a_cut_sweep_changed_is_not_known(monkeypatch: pytest.MonkeyPatch) -> None:
    # The budget checks some of the 20 combinations: the list and the attribute the others would
    # have changed are unknown after the loop (they claimed what the checked ones left: 6 items).
    from wgmma_lsp.interpret import sweep_budget

    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 300)
    source = """
class Log:
    def __init__(self):
        self.last = 0

def main():
    results = []
    log = Log()
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20):
        x = [n * k for k in range(6)]
        results.append(n)
        log.last = n
    count = len(results)
    last = log.last

if __name__ == "__main__":
    main()
"""
    analysis = analyze(source)
    (line, done, total), = analysis.sweeps
    assert done < total == 20
    got = {rec.name: [v.describe() for v in rec.values] for span, rec in analysis.records.items()
           if rec.name in ("count", "last") and rec.kind == "store"}
    assert got == {"count": ["int"], "last": ["unknown"]}
