"""What every rule is: a stable code, JAX's message template, its documentation and its fixes."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable
    from wgmma_lsp.ide_model import Fix


@dataclass(frozen=True)
class Rule:
    """One error class JAX raises, as wgmma-lsp reports it."""

    code: str  # stable: "WG001"
    name: str  # kebab-case: "accumulator-dtype"
    summary: str  # one line
    template: str  # JAX's message template, in JAX's words
    exception: str  # the Python exception type JAX raises
    jax_source: str  # the JAX function whose check this rule mirrors
    stage: str = "trace"  # "trace" (jax.make_jaxpr) or "lower"
    doc_file: Path | None = None
    fixes: Callable[["Finding", str], list["Fix"]] | None = field(default=None, compare=False)
    # Rows of the error catalog (docs/mosaic-gpu-errors.tsv) this rule catches: the coverage
    # table in docs/coverage.md is generated from them (scripts/gen_rule_table.py).
    catalog_rows: tuple[int, ...] = ()
    # For the README's rule table (generated): JAX's message as shown there (default: the
    # template) and the quick fixes offered, in a few words ("" when none).
    table_message: str = ""
    fix_summary: str = ""
    # Lowering semantics the rule is claimed for ("lane", "warpgroup"); () for trace-time
    # rules, which do not depend on it.
    semantics: tuple[str, ...] = ()
    # Where another JAX words the message differently: (version spec, template) pairs
    # (`jax_version.matches` specs such as ">=0.12"); the first that holds for the installed JAX
    # replaces `template` (JAX 0.10.2's words). tests/test_rule_templates.py reads each back from
    # that JAX's source.
    version_templates: tuple[tuple[str, str], ...] = ()
    # (jax_version.matches spec, stage) where a JAX version raises it at another stage (0.12's
    # copy primitives check at trace time what 0.10's lowering checked): `installed_stage()`.
    version_stages: tuple[tuple[str, str], ...] = ()
    # The public API calls whose arguments this rule checks (canonical names: "plgpu.wgmma",
    # "pl.run_scoped"): their hover and signature help list the rule's summary as a constraint
    # of the call (ide/api_help.py), met or not at the call under the cursor.
    apis: tuple[str, ...] = ()
    # A lowering check JAX makes after every other lowering check of the kernel body that the
    # analysis reports before it (the transfer plan of a store: Lane lowers the body in order,
    # Warpgroup plans transfers in its last pass): a certain earlier lowering error of another
    # rule in the same body ends it (interpret/followon.py).
    checked_last: bool = False

    def installed_template(self) -> str:
        """The message template in the installed JAX's words."""
        from wgmma_lsp.interpret.jax_version import matches

        return next((t for spec, t in self.version_templates if matches(spec)), self.template)

    def installed_stage(self) -> str:
        """The stage the installed JAX raises it at ("trace" or "lower")."""
        from wgmma_lsp.interpret.jax_version import matches

        return next((st for spec, st in self.version_stages if matches(spec)), self.stage)

    @property
    def doc(self) -> str:
        if self.doc_file is None or not self.doc_file.exists():
            return self.summary
        return self.doc_file.read_text(encoding="utf-8")

    @property
    def doc_uri(self) -> str:
        assert self.doc_file is not None
        return _file_uri(self.doc_file)


@functools.lru_cache(maxsize=None)
def _file_uri(path: Path) -> str:
    return path.resolve().as_uri()


@dataclass
class Related:
    """Another place a finding points at."""
    span: Span
    message: str
    path: str | None = None  # another file than the analysed document (None: the same one)


#: Why a kernel-level lowering error is blamed at the kernel's call (its related location there).
KERNEL_LEVEL_NOTE = "JAX raises this while lowering this kernel (no line of the kernel is in its traceback)"


def kernel_level_note(kernel_span: Span) -> Related:
    """The related location of an error JAX raises while lowering a kernel with no line of the
    kernel in its traceback (JAX's traceback, and the diagnostic's blame, point at the launch)."""
    return Related(kernel_span, KERNEL_LEVEL_NOTE)


@dataclass
class Finding:
    """A proven error: what JAX would raise, where, and what the fixes need to know."""

    rule: Rule
    message: str
    span: Span  # the offending expression (the stored value, the wrong argument)
    blame_line: int  # the 0-based line JAX's traceback blames
    related: list[Related] = field(default_factory=list)
    certain: bool = True  # False when reached only on some paths: shown as a warning
    data: dict[str, Any] = field(default_factory=dict)  # facts the fixes use
    context: str = ""  # the call that made it reachable, e.g. "pallas_call at line 40"
    # Concrete contexts (entry.context.Context) it was proven in; None stands for the analysis
    # with nothing known (symbolic). `owner` is the id of the function node it was found in.
    contexts: list[Any] = field(default_factory=list)
    owner: int | None = None
    context_note: str = ""  # " (with tile_m=256, from main() at line 290)" when only some
    condition: str = ""  # "tile_m == tile_n": the sizes differ only symbolically (a warning)

    @property
    def key(self) -> tuple:
        return (self.rule.code, self.span, self.message)


def doc_path(module_file: str) -> Path:
    """The Markdown documentation beside a rule module."""
    return Path(module_file).with_suffix(".md")
