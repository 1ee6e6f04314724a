"""Which functions of a module that imports the Pallas API the pre-filter counts as reaching it.

A module-level import of the API: every function and class of the module may use it. An import
inside one function (jax's own `lax/utils.py` imports Mosaic GPU's layout rules in one): that
function, and those that call it, to a fixpoint — unless module-level code names one of them.
Pallas's private TPU backend (`jax._src.pallas.mosaic`, which jax's `mlir.py` imports in a function
half of jax reaches) is no API here: nothing of it can make a finding (no model reports on it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wgmma_lsp import prefilter
from wgmma_lsp.prefilter import Prefilter, defs_reaching_api

PLGPU = "from jax.experimental.pallas import mosaic_gpu as plgpu"


@pytest.fixture(autouse=True)
def _fresh_lookups():
    prefilter.cache_clear()
    yield
    prefilter.cache_clear()


def _relevant(folder: Path, files: dict[str, str]) -> set[str]:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return {Path(p).name for p in Prefilter().relevant(folder / n for n in files)}


LOCAL = (
    "import numpy as np\n\n"
    "def layout_rule(x):\n"
    f"    {PLGPU}\n"
    "    return plgpu.ACC\n\n"
    "def call_rule(x):\n"
    "    return layout_rule(x)\n\n"
    "class Primitive:\n"
    "    def bind(self, x):\n"
    "        return call_rule(x)\n\n"
    "def unrelated(x):\n"
    "    return np.abs(x)\n"
)


def test_an_import_in_one_function_reaches_it_and_its_callers() -> None:
    assert defs_reaching_api(LOCAL.encode()) == {"layout_rule", "call_rule", "Primitive"}


def test_a_file_importing_another_function_of_it_is_not_analysed(tmp_path: Path) -> None:
    relevant = _relevant(tmp_path, {
        "utils.py": LOCAL,
        "uses_unrelated.py": "from utils import unrelated\nunrelated(1)\n",
        "uses_primitive.py": "from utils import Primitive\nPrimitive().bind(1)\n",
        "spells_caller.py": "import utils\nutils.call_rule(1)\n",
        "spells_other.py": "import utils\nutils.unrelated(1)\n",
    })
    assert relevant == {"utils.py", "uses_primitive.py", "spells_caller.py"}


def test_a_signature_closed_in_column_0_keeps_the_import_in_its_function() -> None:
    # jax's style: two-space indents, the closing parenthesis of a long signature in column 0
    text = (
        "def layout_rule(\n"
        "    x,\n"
        ") -> int:\n"
        f"  {PLGPU}\n"
        "  return plgpu.ACC\n\n"
        "def unrelated():\n"
        "  return 1\n"
    )
    assert defs_reaching_api(text.encode()) == {"layout_rule"}


@pytest.mark.parametrize("text", [
    # an indented import at module level binds a module-level name
    f"try:\n    {PLGPU}\nexcept ImportError:\n    plgpu = None\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n",
    f"{PLGPU}\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n",
    # module-level code names the function that imports it: what reaches it is not followed
    f"def a():\n    {PLGPU}\n    return plgpu.ACC\n\nTABLE = {{\n    'a': a,\n}}\n\ndef b():\n    return TABLE['a']()\n",
    f"def a():\n    {PLGPU}\n    return plgpu.ACC\n\n@a\ndef b():\n    return 2\n",
    # a docstring line in column 0 ends the block early: the import counts as module-level
    f"def a():\n    '''\ntext\n    '''\n    {PLGPU}\n    return plgpu.ACC\n\ndef b():\n    return 2\n",
])
def test_every_function_counts_when_module_level_code_may_reach_the_api(text: str) -> None:
    assert defs_reaching_api(text.encode()) == {"a", "b"}


def test_the_private_tpu_backend_makes_no_file_relevant(tmp_path: Path) -> None:
    relevant = _relevant(tmp_path, {
        "mlir_like.py": "def ids(jaxpr):\n    from jax._src.pallas.mosaic import core as tpu_core\n"
                        "    return tpu_core.x\n",
        "uses_mlir.py": "import mlir_like\nmlir_like.ids(1)\n",
        "tpu_private.py": "from jax._src.pallas.mosaic import primitives as tpu_primitives\n",
        # the public path spells `jax.experimental.pallas` out: selected, as any such text is
        "tpu_kernel.py": "import jax.experimental.pallas.tpu as pltpu\nx = pltpu.VMEM\n",
        "gpu_private.py": "from jax._src.pallas.mosaic_gpu import core as gpu_core\n",
        "pallas_and_tpu.py": "from jax.experimental import pallas as pl\n"
                             "from jax.experimental.pallas import tpu as pltpu\n",
    })
    assert relevant == {"gpu_private.py", "pallas_and_tpu.py", "tpu_kernel.py"}


# -- `module.NAME` spelled in a file: one set of attributes per (file, module alias) ----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _by_regex(data: bytes, prefix: str, names: set[str]) -> bool:
    """The pre-filter's first spelling of the question: one regular expression per name set."""
    import re

    pattern = re.escape(prefix).encode() + rb"\s*\.\s*(" + b"|".join(
        re.escape(n).encode() for n in sorted(names)) + rb")\b"
    return re.search(pattern, data) is not None


_WORDS = st.sampled_from(["pl", "plgpu", "a", "ab", "b", "x_1", "_", "wgmma", "é"])
_GLUE = st.sampled_from([".", " . ", "\n.", "..", " ", "(", ")", "x", "é", "_", "1", ""])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_WORDS, _GLUE), max_size=12), _WORDS,
       st.sets(_WORDS.filter(lambda w: w != "é"), min_size=1, max_size=4))
def test_attribute_set_answers_as_the_regex_does(parts, prefix, names):
    """`pl.ab` spells `ab`, not `a`; `xpl.a` spells `a` after `pl` too (no boundary before the
    alias, as before); overlapping spellings (`pl.pl.a`) count; non-ASCII text around them."""
    data = "".join(w + g for w, g in parts).encode()
    assert prefilter._spells_attribute(data, prefix, names) == _by_regex(data, prefix, names)


def test_attribute_set_examples():
    assert prefilter._spells_attribute(b"pl.pl.a", "pl", {"a"})
    assert not prefilter._spells_attribute(b"pl.ab", "pl", {"a"})
    assert prefilter._spells_attribute(b"pl .\n ab", "pl", {"a", "ab"})
    assert prefilter._spells_attribute(b"xpl.a", "pl", {"a"})
    assert not prefilter._spells_attribute(b"pl.a", "pl", set())
