"""Every rule's message is JAX's own: each template is read back from the INSTALLED JAX's source.

A rule's template (`Rule.installed_template()`: `Rule.template`, JAX 0.10.2's words, or the
`version_templates` entry for the installed JAX) is found in the installed source by its literal
parts: the raising statement's f-string, `str.format` template or constant
(`wgmma_lsp/interpret/jax_templates.py`). When JAX rewords a message this test fails on that
JAX's suite, naming the rule; the fix is a `version_templates` entry (and the model's message).

A message that is not one literal string of JAX's Python source has an explicit note below, per
JAX version, and the note itself is checked: the message really is absent as one literal (so a
note cannot hide a template that could be checked), and the pieces the note names are there.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from wgmma_lsp.interpret import jax_templates as T
from wgmma_lsp.interpret.jax_source import jax_root
from wgmma_lsp.interpret.jax_version import installed, matches
from wgmma_lsp.rules.registry import RULES

pytestmark = pytest.mark.skipif(jax_root() is None, reason="needs an installed jax")


@dataclass(frozen=True)
class NotLiteral:
    """Why a template is not one string of the installed source, for the JAX versions `spec`."""

    spec: str  # jax_version.matches spec: "<0.12", ">=0.12", ">=0.10"
    why: str
    pieces: tuple[str, ...] = ()  # templates that must each be found (the message is composed)
    alternative: str | None = None  # the alternatives of the template it is about, by prefix (None: all)


NOT_LITERAL: dict[str, tuple[NotLiteral, ...]] = {
    "WG019": (NotLiteral(">=0.12", "0.12's Lane WGMMA lowering has no `assert b_transforms is not None`: an "
                                   "untransformed rhs gets WG020's 'WGMMA rhs has unsupported transforms: [].' "
                                   "there (models/wgmma_lowering.py)"),),
    "WG035": (NotLiteral(">=0.10", "the message is the bare MLIR dtype: `raise NotImplementedError(self.mlir_dtype)` "
                                   "in fragmented_array.py (optimization_barrier of a splat array)",
                         alternative="{array.mlir_dtype}"),),
    "WG079": (NotLiteral(">=0.10", "Warpgroup: the mosaic_gpu.tcgen05_mma op verifier's text, in jaxlib's C++ "
                                   "dialect (not Python source)", alternative="'mosaic_gpu.tcgen05_mma' op "),),
    "WG090": (NotLiteral(">=0.10", "CPython's own argument-binding TypeError, for the signature read from the "
                                   "installed jax (jax_source.signature)"),),
    "WG092": (NotLiteral(">=0.12", "composed: the prefix and suffix are Tracer.memory_space's f-string, the "
                                   "middle is Tracer._error_repr() ('traced array with shape …')",
                         ("The 'memory_space' attribute is not available on {self._error_repr()}. "
                          "Use `jax.typeof(x).memory_space` instead.", "traced array with shape {…}")),
              NotLiteral("<0.12", "JAX 0.10 has no Tracer.memory_space: the rule is 0.12's")),
    "WG104": (NotLiteral(">=0.12", "JAX 0.12's Lane load lowering has no such check (the template was removed): "
                                   "the rule is 0.10's"),),
    "WG114": (NotLiteral("<0.12", "JAX 0.10's waits have no abstract-evaluation check of their count (the MLIR "
                                  "verifier rejects it in the lowering): the rule is 0.12's"),),
    "WG094": (NotLiteral(">=0.10", "composed by lax's _check_carry_type: a header, one line per differing carry "
                                   "component, and a footer",
                         ("{name} function carry input and carry output must have equal types, but they "
                          "differ:\n\n{differences}", "the input carry component {carry_name}{keystr(p)}",
                          " but the corresponding output carry component has type ",
                          "Revise the function so that all output types match the corresponding input "
                          "types.")),),
    "WG093": (NotLiteral("<0.12", "JAX 0.10 registers a Mosaic GPU pallas_call lowering, so it has no such "
                                  "assert to fail: the rule is 0.12's"),),
    "WG109": (NotLiteral("<0.12.1", "JAX before 0.12.1 applies a plgpu.BlockSpec's transforms in "
                                    "pl.pallas_call, so it has no such assert to fail: the rule is 0.12.1's"),),
    "WG110": (NotLiteral(">=0.10", "CPython's import system's ModuleNotFoundError, for the installed jax "
                                   "package's files (models/jax_imports.py)"),),
    "WG111": (NotLiteral(">=0.10", "CPython's import system's ImportError ('cannot import name …'), for the "
                                   "installed jax's files and _deprecations (models/jax_imports.py)"),),
    "WG112": (NotLiteral(">=0.10", "CPython's ValueError from unpacking a shape in wgmma's `m, n = acc.shape` "
                                   "(models/wgmma.py: unpacking_message)"),),
    "WG106": (NotLiteral("<0.12", "JAX 0.10 has no plgpu.mma (Ampere MMA): the rule is 0.12's"),),
    "WG121": (NotLiteral("<0.12", "JAX 0.10 plans no GMEM transfer (fragmented_array.py has no "
                                  "plan_gmem_transfer): those messages are 0.12's (0.10's bank-conflict "
                                  "message is literal, but its Lane store of an untransformed SMEM ref is "
                                  "unoptimized: the rule is 0.12's)", alternative="GMEM transfer"),),
    "WG107": (NotLiteral("<0.12", "JAX 0.10 has no plgpu.mma (Ampere MMA): the rule is 0.12's"),),
    "WG108": (NotLiteral("<0.12", "JAX 0.10 has no plgpu.mma (Ampere MMA): the rule is 0.12's"),),
    "WG067": (NotLiteral(">=0.12.1", "JAX 0.12.1 removed plgpu.transpose_ref (WG091), and its check with it: the "
                                     "rule is for earlier versions (0.12.1's lowering of a TMEM load or store refuses a "
                                     "transposed TMEM ref with 'TMEM transpose not allowed.': WG120)",
                         ("TMEM transpose not allowed.",)),),
    "WG095": (NotLiteral(">=0.10", "no template of its own: each warning is the deprecation message read from "
                                   "the installed jax (interpret/jax_deprecations.py)"),),
    "WG118": (NotLiteral(">=0.10", "composed by lax.cond's `_cond`: the prefix plus one arm of a conditional "
                                   "expression (the shape arm for an array predicate; `{pred}` is the tracer's "
                                   "repr, `JitTracer(bool[128])`)",
                         ("Pred must be a scalar, got {pred} of ", "shape {np.shape(pred)}.")),),
}


def _note(code: str) -> NotLiteral | None:
    return next((n for n in NOT_LITERAL.get(code, ()) if matches(n.spec)), None)


def _statement(alt: str) -> str | None:
    code = alt.removeprefix("(empty message) ")
    return code if code.startswith(("assert ", "raise ")) else None


#: Stages whose findings are wgmma-lsp's own words, not a message JAX raises (static race hazards:
#: JAX's GPU interpreter finds those at run time, with no message to quote).
OWN_WORDS_STAGES = {"hazard"}
JAX_RULES = sorted(c for c, r in RULES.items() if r.stage not in OWN_WORDS_STAGES)


def test_only_hazards_are_in_wgmma_lsp_s_own_words() -> None:
    own = {c for c in RULES if c not in JAX_RULES}
    assert all(RULES[c].stage == "hazard" for c in own)
    assert len(JAX_RULES) > 70


@pytest.mark.parametrize("code", JAX_RULES, ids=str)
def test_rule_template_is_in_the_installed_jax(code: str) -> None:
    rule = RULES[code]
    note = _note(code)
    alts = T.alternatives(rule.installed_template())
    if note is not None:
        noted = [a for a in alts if note.alternative is None or a.startswith(note.alternative)]
        assert noted, f"{code}: the note is about {note.alternative!r}, not one of {alts}"
        # The note is honest: no literal string of this JAX holds the message...
        for alt in noted:
            stmt = _statement(alt)
            hits = T.find(alt) if stmt is None else T.statement(stmt, files=T.named_files(rule.jax_source) or None)
            assert not hits, f"{code} has a note but its template is literal in jax {installed()}: {hits[0]}"
        # ...and the pieces it is composed of are.
        for piece in note.pieces:
            assert T.find(piece), f"{code}: piece {piece!r} not in the installed jax {installed()}"
        alts = [a for a in alts if a not in noted]
    for alt in alts:
        stmt = _statement(alt)
        if stmt is not None:
            where = T.statement(stmt, files=T.named_files(rule.jax_source) or None)
            assert where, f"{code}: `{stmt}` is not in {rule.jax_source} of jax {installed()}"
            continue
        hits = T.find(alt)
        assert hits, (f"{code}: jax {installed()} no longer says {alt!r}; add a version_templates entry "
                      f"with its words (and a note here if they are not literal)")


def test_every_note_names_a_rule_and_a_valid_version() -> None:
    for code, notes in NOT_LITERAL.items():
        assert code in RULES
        for n in notes:
            matches(n.spec)  # raises on a malformed spec


def test_the_installed_template_follows_the_version() -> None:
    """A rule with words for another JAX answers with those only there."""
    reworded = [r for r in RULES.values() if r.version_templates]
    assert reworded
    for rule in reworded:
        want = next((t for spec, t in rule.version_templates if matches(spec)), rule.template)
        assert rule.installed_template() == want


def test_a_reworded_message_is_not_found() -> None:
    """The search can fail: a template JAX does not have is reported missing."""
    assert T.find("Accumulator dtype {x} does not match value dtype {y}")
    assert not T.find("Accumulator dtype {x} does not equal value dtype {y}")
    assert T.literal_parts("a {x} b ... c") == ["a", "b", "c"]
