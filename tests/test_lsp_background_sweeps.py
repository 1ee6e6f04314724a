"""The editor checks what its typing budget left out once the document settles.

While the author types, the server keeps each analysis within a typing-speed budget: a tuning
loop's combinations beyond it get a WG903 note instead of a check (interpret/sweep_budget.py).
`wgmma-lsp check` has time for every combination, and so has the editor once the typing stops:
the same version is analysed again with every combination in the background and its
diagnostics replace the budgeted ones. Here the shared memory of 4 stages of 120 or 128 rows
overflows, which only the last combinations of the loop reach: the editor first says what it
left out (and that it checks them once typing stops), then reports the overflow, as `wgmma-lsp
check` does. A project that chose `sweeps = "budget"` keeps the budget, with its notes, and
nothing runs in the background.

The real server over stdio (tests/raw_lsp.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from jax_oracle import kernel_keywords
from raw_lsp import RawClient

KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def copy(x, stages, rows):
  def body(x_gmem, o_gmem, buf_smem):
    del x_gmem, o_gmem, buf_smem

  return plgpu.kernel(
      body, {out}=jax.ShapeDtypeStruct((128, 128), jnp.float32),
      {scratch}=[plgpu.SMEM((stages, rows, 128), jnp.float32)],
  )(x)


def main():
  x = jax.ShapeDtypeStruct((128, 128), jnp.float32)
  for rows in (8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128):
    for stages in (1, 2, 3, 4):
      jax.jit(copy, static_argnums=(1, 2)).trace(x, stages, rows).lower(lowering_platforms=("cuda",))


if __name__ == "__main__":
  main()
'''


def kernel_source() -> str:
    """With `plgpu.kernel`'s keywords as the installed JAX names them (0.12 renamed them)."""
    pytest.importorskip("jax.experimental.pallas.mosaic_gpu")
    return KERNEL.format(**kernel_keywords())


def codes(publication: dict) -> list[str]:
    return sorted(d["code"] for d in publication["diagnostics"])


def publications(client: RawClient, uri: str, until: int, timeout: float = 60.0) -> list[dict]:
    """The document's publications, once there are `until` of them (or the time is up)."""
    deadline = time.monotonic() + timeout
    while len(client.diagnostics(uri)) < until and time.monotonic() < deadline:
        client.drain(0.2)
    return client.diagnostics(uri)


@contextmanager
def opened(tmp_path: Path) -> Iterator[tuple[RawClient, Path]]:
    """The server, the tuning file opened in it."""
    f = tmp_path / "tuning.py"
    f.write_text(kernel_source())
    client = RawClient()
    try:
        client.initialize()
        client.open(f.as_uri(), f.read_text())
        yield client, f
    finally:
        client.kill()


def test_the_budgeted_notes_then_every_combination_checked(tmp_path: Path) -> None:
    with opened(tmp_path) as (client, f):
        first, then = publications(client, f.as_uri(), until=2)[:2]
        assert codes(first) == ["WG903", "WG903"]  # what the budget left out, said
        assert any("checked 5 of 16 combinations" in d["message"] for d in first["diagnostics"])
        assert all(d["message"].endswith("the analysis budget left out the others (checking them "
                                         "once typing stops)") for d in first["diagnostics"])
        assert then["version"] == first["version"] == 1
        assert codes(then) == ["WG032", "WG032"]  # the overflow, in the last two combinations
        messages = sorted(d["message"] for d in then["diagnostics"])
        assert "smem_bytes=245760 > max_smem_bytes=232448" in messages[0]  # 4 x 120 x 128 x 4 B
        assert "smem_bytes=262144 > max_smem_bytes=232448" in messages[1]  # 4 x 128 x 128 x 4 B
        client.drain(1.0)
        assert len(client.diagnostics(f.as_uri())) == 2  # checked once: nothing more runs


def test_an_edit_abandons_the_background_check_of_the_older_text(tmp_path: Path) -> None:
    with opened(tmp_path) as (client, f):
        first = publications(client, f.as_uri(), until=1)[0]
        assert codes(first) == ["WG903", "WG903"]
        # The author narrows the loop before the background check of version 1 reports.
        lines = f.read_text().splitlines()
        loop = next(i for i, line in enumerate(lines) if "for rows in" in line)
        lines[loop] = lines[loop].replace(", 120, 128)", ")")
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": f.as_uri(), "version": 2},
            "contentChanges": [{"text": "\n".join(lines) + "\n"}]})
        client.drain(4.0)
        seen = client.diagnostics(f.as_uri())
        assert seen[-1]["version"] == 2 and codes(seen[-1]) == []  # 112 rows fit, 4 stages too
        assert not any("WG032" in codes(p) for p in seen if p["version"] == 2)


def test_a_project_that_chose_the_budget_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.wgmma-lsp]\nsweeps = "budget"\n')
    with opened(tmp_path) as (client, f):
        first = publications(client, f.as_uri(), until=1)[0]
        assert codes(first) == ["WG903", "WG903"]
        assert not any("typing stops" in d["message"] for d in first["diagnostics"])
        client.drain(3.0)
        assert len(client.diagnostics(f.as_uri())) == 1  # no background check
