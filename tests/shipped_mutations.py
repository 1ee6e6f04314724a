"""Seeded bugs planted in the kernels shipped in the installed jax, and the two verdicts on them.

Each mutation is a small textual edit located by an exact pattern in one file (the edit fails
loudly when the installed file no longer has the pattern). Edits stay on their line (`;` joins a
planted statement to the line it follows), so line numbers keep their meaning. The mutated file
gets the harness of `shipped_harness.py` (CPU shims and concrete entry points) and goes to real
JAX (`jax.make_jaxpr` on the CPU; lowering for "cuda" for mutations marked `lower`) and to
wgmma-lsp; they agree when JAX's error (first line of its message, blamed line) is among our
errors, and when JAX accepts the mutant and we report no error.

    .venv/bin/python tests/shipped_mutations.py   # prints every mutant's verdicts and the rate
"""

from __future__ import annotations

import re
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shipped_harness import (  # noqa: E402
    ENTRIES, first_line, kernel_dir, trace_entries, with_harness,
)
from wgmma_lsp.interpret.jax_version import matches  # noqa: E402


@dataclass(frozen=True)
class Mutation:
    file: str
    name: str
    pattern: str  # exact text in the installed file
    replacement: str
    occurrence: int = 0  # which occurrence of the pattern (0: the first); see `apply`
    lower: bool = False  # JAX's verdict includes lowering for "cuda"
    jax: str = ""  # JAX versions whose kernel files hold the pattern (jax_version.matches); "": all

    @property
    def id(self) -> str:
        return f"{self.file.removesuffix('_mgpu.py')}:{self.name}"

    def apply(self, source: str) -> str:
        count = source.count(self.pattern)
        if count <= self.occurrence:
            raise AssertionError(f"{self.id}: pattern not found in the installed {self.file} "
                                 f"({count} occurrences): {self.pattern!r}")
        start = -1
        for _ in range(self.occurrence + 1):
            start = source.index(self.pattern, start + 1)
        assert "\n" not in self.replacement or self.replacement.count("\n") == self.pattern.count("\n"), \
            "edits keep the line count"
        return source[:start] + self.replacement + source[start + len(self.pattern):]


def _after(pattern: str, stmt: str) -> tuple[str, str]:
    """Plant `stmt` on the same line, after the statement `pattern` ends."""
    return pattern, f"{pattern}; {stmt}"


H = "hopper_matmul_mgpu.py"
HM = "hopper_mixed_type_matmul_mgpu.py"
A = "attention_mgpu.py"
R = "ragged_dot_mgpu.py"
T = "transposed_ragged_dot_mgpu.py"
BW = "blackwell_matmul_mgpu.py"
BR = "blackwell_ragged_dot_mgpu.py"
C = "collective_matmul_mgpu.py"

_H_WGMMA = "plgpu.wgmma(acc_ref, a_smem.at[wg_m_slice], b_smem.at[:, wg_n_slice])"
_HM_WGMMA = "plgpu.wgmma(acc_ref, a_reg, b_smem.at[:, wg_n_slice])"
_R_ACC = "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n)))"
_T_WGMMA = "plgpu.wgmma(acc_ref, plgpu.transpose_ref(lhs_smem, (1, 0)), rhs_smem)"

MUTATIONS: list[Mutation] = [
    # -- hopper_matmul ---------------------------------------------------------------------------
    Mutation(H, "acc-store-bf16", *_after(_H_WGMMA, "acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)")),
    Mutation(H, "acc-store-reshape", *_after(
        _H_WGMMA, "acc_ref[...] = acc_ref[...].reshape(tile_n * 2, tile_m // 2)")),
    Mutation(H, "acc-store-transposed", *_after(_H_WGMMA, "acc_ref[...] = acc_ref[...].T"), lower=True),
    Mutation(H, "acc-in-smem", "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)",
             "acc_ref=plgpu.SMEM((tile_m, tile_n), jnp.float32)"),
    Mutation(H, "acc-sizes-swapped", "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)",
             "acc_ref=plgpu.ACC((tile_n, tile_m), jnp.float32)"),
    Mutation(H, "acc-half-rows", "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)",
             "acc_ref=plgpu.ACC((tile_m // 2, tile_n), jnp.float32)"),
    Mutation(H, "acc-f16", "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)",
             "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float16)", lower=True),
    Mutation(H, "wgmma-operands-swapped", _H_WGMMA,
             "plgpu.wgmma(acc_ref, b_smem.at[:, wg_n_slice], a_smem.at[wg_m_slice])"),
    Mutation(H, "wgmma-acc-last", _H_WGMMA,
             "plgpu.wgmma(a_smem.at[wg_m_slice], b_smem.at[:, wg_n_slice], acc_ref)"),
    Mutation(H, "block-shape-a-swapped", "(cta_tile_m, tile_k),", "(tile_k, cta_tile_m),"),
    Mutation(H, "block-shape-b-half", "(tile_k, cta_tile_n),", "(tile_k, cta_tile_n // 2),"),
    Mutation(H, "acc-store-f32-ok", *_after(_H_WGMMA, "acc_ref[...] = acc_ref[...] * 2.0")),
    # -- hopper_mixed_type_matmul ----------------------------------------------------------------
    Mutation(HM, "acc-store-bf16", *_after(_HM_WGMMA, "acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)")),
    Mutation(HM, "acc-in-smem", "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)",
             "acc_ref=plgpu.SMEM((tile_m, tile_n), jnp.float32)"),
    Mutation(HM, "acc-sizes-half", "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)",
             "acc_ref=plgpu.ACC((tile_m, tile_n // 2), jnp.float32)"),
    Mutation(HM, "lhs-not-dequantized", "a_reg = a_reg.astype(b.dtype)", "a_reg = a_reg"),
    Mutation(HM, "wgmma-operands-swapped", _HM_WGMMA,
             "plgpu.wgmma(acc_ref, b_smem.at[:, wg_n_slice], a_reg)"),
    # -- ragged_dot ----------------------------------------------------------------------------
    Mutation(R, "acc-in-smem", _R_ACC,
             "acc = pl.run_scoped(acc_scope, plgpu.SMEM((block_m, block_n), jnp.float32))"),
    Mutation(R, "acc-sizes-swapped", _R_ACC,
             "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_n, block_m)))"),
    Mutation(R, "acc-bf16", _R_ACC,
             "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n), jnp.bfloat16))", lower=True),
    Mutation(R, "acc-store-bf16", "return acc_ref[...]",
             "acc_ref[...] = acc_ref[...].astype(jnp.bfloat16); return acc_ref[...]"),
    Mutation(R, "block-shape-lhs-swapped", "(block_m, block_k),", "(block_k, block_m),"),
    # -- transposed_ragged_dot -------------------------------------------------------------------
    Mutation(T, "wgmma-no-transpose", _T_WGMMA, "plgpu.wgmma(acc_ref, lhs_smem, rhs_smem)", jax="<0.12"),
    Mutation(T, "wgmma-no-transpose", "plgpu.wgmma(acc_ref, lhs_smem.transpose((1, 0)), rhs_smem)",
             "plgpu.wgmma(acc_ref, lhs_smem, rhs_smem)", jax=">=0.12"),
    Mutation(T, "acc-in-smem", "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n)))",
             "acc = pl.run_scoped(acc_scope, plgpu.SMEM((block_m, block_n), jnp.float32))"),
    Mutation(T, "acc-sizes-swapped", "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n)))",
             "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_n, block_m)))"),
    Mutation(T, "acc-store-reshape", "return acc_ref[...]",
             "acc_ref[...] = acc_ref[...].reshape(block_n, block_m); return acc_ref[...]"),
    Mutation(R, "block-shape-rhs-swapped", "(block_n, block_k) if transpose_rhs else (block_k, block_n),",
             "(block_n, block_k) if transpose_rhs else (block_n, block_k),"),
    Mutation(R, "wgmma-operands-swapped", "                acc_ref,\n                lhs_smem,",
             "                acc_ref,\n                lhs_smem.T,"),
    # -- blackwell_matmul (tcgen05) ---------------------------------------------------------------
    Mutation(BW, "acc-tmem-in-smem", "acc_tmem=plgpu.TMEM(\n              (block_tile_m, tile_n * 2), jnp.float32, collective=collective",
             "acc_tmem=plgpu.SMEM(\n              (block_tile_m, tile_n * 2), jnp.float32"),
    Mutation(BW, "acc-tmem-too-many-rows", "(block_tile_m, tile_n * 2), jnp.float32, collective=collective",
             "(block_tile_m * 2, tile_n * 2), jnp.float32, collective=collective"),
    Mutation(BW, "mma-operands-swapped", "                  a_smem.at[slot],\n                  b_smem.at[slot],",
             "                  b_smem.at[slot],\n                  a_smem.at[slot],"),
    Mutation(BW, "a-smem-k-halved", "(max_concurrent_steps, block_tile_m, tile_k),",
             "(max_concurrent_steps, block_tile_m, tile_k // 2),"),
    Mutation(BW, "acc-tmem-bf16", "(block_tile_m, tile_n * 2), jnp.float32, collective=collective",
             "(block_tile_m, tile_n * 2), jnp.bfloat16, collective=collective"),
    Mutation(BW, "epilogue-store-f32", ").astype(dtype)", ").astype(jnp.float32)"),
    # -- collective_matmul (after its device-count guards; through remote_ref and pl.loop) -------
    Mutation(C, "out-store-f32", 'wg_idx = lax.axis_index("wg")',
             'wg_idx = lax.axis_index("wg"); out_ref[0:8, :] = jnp.zeros((8, n_shard), jnp.float32)'),
    Mutation(C, "remote-store-f32", "send_scratch_ref = plgpu.remote_ref(scratch_ref, send_dev_id)",
             "send_scratch_ref = plgpu.remote_ref(scratch_ref, send_dev_id); "
             "send_scratch_ref.at[0][...] = jnp.zeros((m_shard, k), jnp.float32)"),
    Mutation(C, "remote-store-shape", "send_scratch_ref = plgpu.remote_ref(scratch_ref, send_dev_id)",
             "send_scratch_ref = plgpu.remote_ref(scratch_ref, send_dev_id); "
             "send_scratch_ref.at[0][...] = jnp.zeros((k, m_shard // 2), dtype)"),
    Mutation(C, "out-slice-store-f32", "is_send_wg = wg_idx == 0",
             "is_send_wg = wg_idx == 0; "
             "out_ref.at[out_device_m_slice][...] = jnp.zeros((m_shard, n_shard), jnp.float32)"),
    Mutation(C, "scratch-store-f32", "device_step(scratch_ref.at[device_offset - 1], device_offset)",
             "device_step(scratch_ref.at[device_offset - 1], device_offset); "
             "scratch_ref.at[device_offset - 1][...] = jnp.zeros((m_shard, k), jnp.float32)"),
    Mutation(C, "scratch-f32", "jax.ShapeDtypeStruct((num_devices - 1, m_shard, k), dtype)",
             "jax.ShapeDtypeStruct((num_devices - 1, m_shard, k), jnp.float32)"),
    Mutation(C, "send-copy-reversed", "plgpu.copy_smem_to_gmem(a_smem, send_ref.at[m_slice, k_slice])",
             "plgpu.copy_smem_to_gmem(send_ref.at[m_slice, k_slice], a_smem)"),
    # -- attention -----------------------------------------------------------------------------
    Mutation(A, "qk-acc-in-smem", "qk = pl.run_scoped(compute_qk, plgpu.ACC((block_q, block_kv), jnp.float32))",
             "qk = pl.run_scoped(compute_qk, plgpu.SMEM((block_q, block_kv), jnp.float32))"),
    Mutation(A, "qk-acc-sizes-swapped",
             "qk = pl.run_scoped(compute_qk, plgpu.ACC((block_q, block_kv), jnp.float32))",
             "qk = pl.run_scoped(compute_qk, plgpu.ACC((block_kv, block_q), jnp.float32))"),
    Mutation(A, "qk-no-transpose", "plgpu.wgmma(acc_ref, qo_smem, plgpu.transpose_ref(k_smem.at[slot], (1, 0)))",
             "plgpu.wgmma(acc_ref, qo_smem, k_smem.at[slot])", jax="<0.12"),
    Mutation(A, "qk-no-transpose", "plgpu.wgmma(acc_ref, qo_smem, k_smem.at[slot].transpose((1, 0)))",
             "plgpu.wgmma(acc_ref, qo_smem, k_smem.at[slot])", jax=">=0.12"),
    Mutation(A, "pv-acc-init-bf16", "acc = pl.run_state(compute_pv)(plgpu.ACC.init(acc))",
             "acc = pl.run_state(compute_pv)(plgpu.ACC.init(acc.astype(jnp.bfloat16)))", lower=True),
    Mutation(A, "pv-store-bf16", "plgpu.wgmma(acc_ref, p16, v_smem.at[slot])",
             "plgpu.wgmma(acc_ref, p16, v_smem.at[slot]); acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)"),
    Mutation(A, "pv-operands-swapped", "plgpu.wgmma(acc_ref, p16, v_smem.at[slot])",
             "plgpu.wgmma(acc_ref, v_smem.at[slot], p16)"),
    Mutation(A, "pv-p-not-cast", "p16 = p.astype(dtype)", "p16 = p"),
    Mutation(A, "pv-acc-init-in-run-scoped", "acc = pl.run_state(compute_pv)(plgpu.ACC.init(acc))",
             "acc = pl.run_scoped(compute_pv, plgpu.ACC.init(acc))"),
]
# The installed JAX's kernels: a pattern that moved between versions has one mutation per version.
MUTATIONS = [m for m in MUTATIONS if not m.jax or matches(m.jax)]


@dataclass(frozen=True)
class Reported:
    """One error of ours: the line of its squiggle, the line JAX's traceback blames for it (the
    call's first line when the squiggle is on an argument of a multi-line call), code, message."""

    line: int  # 1-based
    blame_line: int  # 1-based
    code: str
    message: str
    stage: str = "trace"  # the rule's stage: "trace" or "lower"
    bare_assert: bool = False  # the rule explains a bare `assert` of JAX's (JAX's message is empty)
    # JAX's own text where the diagnostic quotes it inside an explanation (a finding's
    # `data["jax_message"]`: an MLIR verifier failure explained by the check it stands for)
    jax_text: str | None = None
    # The harness's entry points (their calls) it was proven for: each is one run of JAX's
    # (`Outcome.follow_ons`). Not compared: the same error from several entries is one error.
    entries: frozenset[str] = field(default=frozenset(), compare=False)

    def matches(self, jax: tuple[int | None, str]) -> bool:
        if jax[0] not in (self.line, self.blame_line):
            return False
        if self.bare_assert:
            return jax[1] == "AssertionError: "
        if self.jax_text is not None:
            assert self.jax_text in self.message, "the diagnostic must keep JAX's text"
            return jax[1] == first_line(self.jax_text)
        return jax[1] == first_line(self.message)


@dataclass
class Outcome:
    mutation: Mutation
    jax: tuple[int | None, str] | None  # (line, first line of the message) or None: accepted
    ours: list[Reported]
    jax_ran: set[int]  # lines JAX executed while tracing the mutant
    jax_stage: str | None = None  # where JAX raised: "trace" or "lower"
    # Each entry point's verdict (its call -> (line, first line of the message), None: clean)
    jax_by_entry: dict[str, tuple[int | None, str] | None] = field(default_factory=dict)

    @property
    def rejected(self) -> bool:
        return self.jax is not None

    @property
    def agrees(self) -> bool:
        """We report JAX's error at JAX's line (or, when JAX accepts, report nothing)."""
        if self.jax is None:
            return not self.ours
        return any(e.matches(self.jax) for e in self.ours)

    @property
    def false_errors(self) -> list[Reported]:
        """Errors of ours that JAX contradicts: any, when JAX accepts the mutant; otherwise one on
        a line JAX ran without raising there (ours at JAX's line must have JAX's message)."""
        if self.jax is None:
            return list(self.ours)
        return [e for e in self.ours if not e.matches(self.jax) and not self._later_stage(e)
                and (self.jax[0] in (e.line, e.blame_line) or e.blame_line in self.jax_ran)]

    def _later_stage(self, e: Reported) -> bool:
        """A lowering error when JAX already failed while tracing: JAX never got to lower. Or a
        lowering error below the line where JAX's lowering failed: JAX lowers the traced
        program in order and stops at its first error, so it never lowered what comes after
        (the second branch of a `lax.cond` whose first branch failed to lower: tracing ran both)."""
        if e.stage != "lower":
            return False
        if self.jax_stage == "trace":
            return True
        return self.jax_stage == "lower" and self.jax is not None and self.jax[0] is not None \
            and e.line > self.jax[0] and e.blame_line > self.jax[0]

    @property
    def beyond(self) -> list[Reported]:
        """Errors of ours on lines JAX never reached (it stopped at its first error), or lowering
        errors when JAX failed while tracing: JAX can neither confirm nor refute them."""
        return [e for e in self.ours if self.jax is not None and not e.matches(self.jax)
                and e not in self.false_errors]

    def _is_jaxs(self, e: Reported, jax: tuple[int | None, str]) -> bool:
        return e.matches(jax)

    @property
    def follow_ons(self) -> list[Reported]:
        """Errors of ours that follow JAX's first error on one of JAX's runs: an entry point
        JAX rejects, for which we report JAX's error too, and another error besides. JAX stops at
        its first error, so nothing after it on that run is ever raised (and nothing before it
        was: JAX would have raised that first), whatever JAX's stage and ours."""
        out: list[Reported] = []
        for entry, jax in self.jax_by_entry.items():
            mine = [e for e in self.ours if entry in e.entries]
            if jax is not None and any(self._is_jaxs(e, jax) for e in mine):
                out += [e for e in mine if not self._is_jaxs(e, jax) and e not in out]
        return out


def mutated_source(m: Mutation) -> str:
    return with_harness(m.apply((kernel_dir() / m.file).read_text()), m.file)


def our_errors(source: str, path: str, keep=None) -> list[Reported]:
    """The errors wgmma-lsp reports (default settings), with the line JAX would blame. `keep`
    (a finding's contexts -> bool) says which contexts JAX's run can confirm (default: any but
    the file's own main())."""
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics
    from wgmma_lsp.ide.model import Severity

    analysis = analyze(source, path)
    from wgmma_lsp.entry.context import strip_context_note

    # A finding proven in only some contexts (the harness's entry, not the file's main()) says
    # which in its diagnostic: JAX's message is the diagnostic's without that note.
    errors = {(d.span, d.code, strip_context_note(d.message)) for d in diagnostics(analysis)
              if d.severity == Severity.ERROR}
    # JAX runs the harness's entry points only: an error proven only in another context (the
    # file's own main() with its tuning configs) is not one this JAX run can confirm.
    out: dict[Reported, set[str]] = {}
    for f in analysis.findings:
        if (f.span, f.rule.code, f.message) not in errors or not (keep(f.contexts) if keep else (
                not f.contexts or any(c is None or not c.origin.startswith("main()") for c in f.contexts))):
            continue
        e = Reported(f.span.line + 1, f.blame_line + 1 if f.blame_line >= 0 else f.span.line + 1,
                     f.rule.code, f.message, f.rule.stage,
                     f.rule.exception == "AssertionError" and f.rule.template.startswith("assert "),
                     f.data.get("jax_message") if isinstance(f.data, dict) else None)
        out.setdefault(e, set()).update(_ENTRY.fullmatch(c.origin).group(1) for c in f.contexts
                                        if c is not None and _ENTRY.fullmatch(c.origin))
    return sorted((replace(e, entries=frozenset(entries)) for e, entries in out.items()),
                  key=lambda e: (e.line, e.code))


#: The origin of a context made by a `# wgmma-lsp: trace CALL` line (driver.py): its call.
_ENTRY = re.compile(r"entry point `(.*)`", re.S)


def run(m: Mutation, tmp: Path) -> Outcome:
    path = tmp / f"{m.id.replace(':', '__')}_{m.file}"
    source = mutated_source(m)
    path.write_text(source)
    ran: set[int] = set()
    verdicts = trace_entries(path, lower=m.lower, ran=ran)
    failed = [v for v in verdicts if v.message is not None]
    # JAX's message, first line; a bare `assert` (no message) is spelled "AssertionError: ".
    by_entry = {v.entry: verdict(v) for v in verdicts}
    jax = verdict(failed[0]) if failed else None
    return Outcome(m, jax, our_errors(source, str(path)), ran, failed[0].stage if failed else None, by_entry)


def verdict(v) -> tuple[int | None, str] | None:
    """JAX's verdict on one entry point: (line, first line of the message), None when clean."""
    if v.message is None:
        return None
    bare = v.exc_type == "AssertionError" and not (v.message or "").strip()
    return (v.line, "AssertionError: " if bare else first_line(v.message))


def _main() -> None:
    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = [run(m, Path(tmp)) for m in MUTATIONS if not only or any(o in m.id for o in only)]
    for o in outcomes:
        mark = "FALSE" if o.false_errors or o.follow_ons else ("ok" if o.agrees else "miss")
        jax = f"JAX {o.jax[0]}: {o.jax[1][:110]}" if o.jax else "JAX accepts"
        print(f"{mark:5} {o.mutation.id:40} {jax}")
        for e in o.ours:
            extra = " (FOLLOWS JAX's first error)" if e in o.follow_ons else (
                " (beyond JAX's first error)" if e in o.beyond else "")
            print(f"{'':46} ours {e.line}/{e.blame_line}: {e.code} {e.message[:100]}{extra}")
    rejected = [o for o in outcomes if o.rejected]
    hit = sum(o.agrees for o in rejected)
    print(f"\nJAX rejects {len(rejected)} of {len(outcomes)} mutants; wgmma-lsp reports {hit} of them at "
          f"JAX's line with JAX's message ({hit / max(1, len(rejected)):.0%}); "
          f"mutants with a false error: {sum(bool(o.false_errors) for o in outcomes)}; "
          f"with an error after JAX's first: {sum(bool(o.follow_ons) for o in outcomes)}; "
          f"accepted mutants with an error from us: {sum(1 for o in outcomes if not o.rejected and o.ours)}")


assert set(m.file for m in MUTATIONS) <= set(ENTRIES)
_ = re  # (kept for pattern helpers)

if __name__ == "__main__":
    _main()
