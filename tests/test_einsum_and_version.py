"""`jnp.einsum` (models/einsum.py) and `jax.__version_info__` (models/jax_version_info.py),
against the installed JAX itself: the shape and dtype `jax.eval_shape` gives for each einsum,
and the version tuple the installed `jax` module holds (code that picks a branch by version,
as tokamax's kernels pick their lowering semantics, follows JAX's branch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import describe

CASES = [  # (subscripts, operand avals)
    ("qhd,qhd->hq", ["bfloat16[8,2,4]", "bfloat16[8,2,4]"]),
    ("...qhd,...qhd->...hq", ["float32[3,8,2,4]", "float32[8,2,4]"]),
    ("ij->ji", ["bfloat16[8,2]"]),
    ("ij,jk->ik", ["bfloat16[8,2]", "float32[2,3]"]),
    ("bij,bjk->bik", ["float16[5,8,2]", "float16[5,2,3]"]),
]


def _source(subscripts: str, avals: list[str], extra: str = "") -> str:
    lines = ["import jax.numpy as jnp"]
    for i, aval in enumerate(avals):
        dtype, shape = aval.rstrip("]").split("[")
        lines.append(f"x{i} = jnp.zeros(({shape},), jnp.{dtype})")
    operands = ", ".join(f"x{i}" for i in range(len(avals)))
    lines.append(f"r = jnp.einsum({subscripts!r}, {operands}{extra})")
    return "\n".join(lines) + "\n"


def _value_of_r(source: str, tmp_path: Path) -> str | None:
    path = tmp_path / "m.py"
    path.write_text(source)
    records = analyze(source, str(path)).records
    last = source.splitlines().index(next(l for l in source.splitlines() if l.startswith("r = ")))
    found = [describe(v) for span, r in records.items() if span.line == last and span.col == 0
             for v in r.values]
    return found[0] if found else None


@pytest.mark.parametrize("extra", ["", ", preferred_element_type=jnp.float32"])
@pytest.mark.parametrize("subscripts,avals", CASES)
def test_einsum_shape_and_dtype_are_jaxs(subscripts: str, avals: list[str], extra: str, tmp_path: Path) -> None:
    import jax
    import jax.numpy as jnp

    args = []
    for aval in avals:
        dtype, shape = aval.rstrip("]").split("[")
        args.append(jax.ShapeDtypeStruct(tuple(int(d) for d in shape.split(",")), getattr(jnp, dtype)))
    kw = {"preferred_element_type": jnp.float32} if extra else {}
    out = jax.eval_shape(lambda *xs: jnp.einsum(subscripts, *xs, **kw), *args)
    expected = f"{out.dtype}[{','.join(map(str, out.shape))}]"
    assert _value_of_r(_source(subscripts, avals, extra), tmp_path) == expected


@pytest.mark.parametrize("subscripts,avals", [
    ("ij,jk", ["bfloat16[8,2]", "float32[2,3]"]),  # implicit output: not followed
    ("ij,kk->ik", ["bfloat16[8,2]", "float32[2,3]"]),  # a label with two sizes: JAX raises
])
def test_einsum_not_followed_is_unknown(subscripts: str, avals: list[str], tmp_path: Path) -> None:
    assert _value_of_r(_source(subscripts, avals), tmp_path) is None


def test_version_info_is_the_installed_jaxs_and_picks_its_branch(tmp_path: Path) -> None:
    import jax

    source = ("import jax\n"
              "v = jax.__version_info__\n"
              "if jax.__version_info__ >= (0, 11, 0):\n"
              "    which = 'new'\n"
              "else:\n"
              "    which = 'old'\n"
              "w = which\n")
    path = tmp_path / "m.py"
    path.write_text(source)
    records = analyze(source, str(path)).records
    at = {span.line: [describe(v) for v in r.values] for span, r in records.items() if span.col == 0}
    assert at[1] == [str(jax.__version_info__)]
    assert at[6] == [repr("new" if jax.__version_info__ >= (0, 11, 0) else "old")]
