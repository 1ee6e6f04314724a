"""The error catalog (docs/mosaic-gpu-errors.tsv, JAX 0.10.2's 109 errors) re-derived on the installed JAX.

Each row's trigger is a fixture line: a kernel under tests/fixtures whose `# E:` comment for JAX
0.10.2 names a rule claiming the row (`Rule.catalog_rows`) with a message of the row's template
(`ROW_TRIGGERS` picks one where several fit; a row may have one trigger per lowering semantics).
The trigger is run through real JAX on the CPU (`jax_oracle.trace_file`: trace, and for a
lowering row the Mosaic GPU lowering for sm_90) and through wgmma-lsp, and the row gets JAX's
verdict on this version — its message and the line it blames, "accepted", or a different error —
and whether wgmma-lsp reports that message on that line.

JAX 0.12 no longer lowers a Mosaic GPU `pl.pallas_call`: a lowering trigger written with one is
rewritten (`as_kernel`) into the same kernel under `plgpu.kernel` — each SMEM block becomes an
SMEM scratch buffer with the block's transforms, filled and drained by TMA copies around the
unchanged kernel body — on the same lines, so that JAX's blamed line and the fixture's line
still correspond.
"""

from __future__ import annotations

import ast
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.jax_source import pallas_call_lowers_mosaic_gpu, signature
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.rules.catalog import CatalogRow, load_catalog
from wgmma_lsp.rules.registry import RULES

FIXTURES = Path(__file__).parent / "fixtures"
CATALOG_VERSION = (0, 10, 2)

#: Rows several fixture lines fit (the same template, different triggers): the line whose
#: trigger is the row's, as "dir/file.py:line" (one per lowering semantics where both exist).
ROW_TRIGGERS: dict[int, tuple[str, ...]] = {
    2: ("errors/wgmma_mixed_dtypes.py:11",),
    3: ("errors/reftype_smem.py:10",),
    4: ("errors/reftype_functional.py:10",),
    11: ("lowering/acc_layout_store_lane.py:12",),
    12: ("lowering/acc_layout_run_state_lane.py:14",),
    51: ("errors/blackwell_tmem_access.py:11",),
    52: ("errors/blackwell_tmem_access.py:18",),
    # one per semantics; not lowering_kernel/barrier_not_indexed.py's ordering case (a Lane MMA in
    # a file that names both semantics, which `Trigger.semantics` would read as Warpgroup)
    57: ("lowering/tcgen05_lane.py:43", "lowering_kernel/kernel_level_tcgen05_acc_dtype_warpgroup.py:15",
         "lowering_kernel/tcgen05_lane_by_version.py:46"),
    63: ("lowering/tcgen05_rhs_untransformed_lane.py:16",  # the bare assert: an rhs without transforms
         "lowering_kernel/tcgen05_plain_operands_lane_by_version.py:15"),
    70: ("errors/tma_memory_spaces.py:9",),
    71: ("errors/tma_memory_spaces.py:13",),
    72: ("errors/tma_memory_spaces.py:17",),
    73: ("errors/tma_memory_spaces.py:21",),
    78: ("lowering/tma_copies_lane.py:10",),  # the catalog's trigger: a plgpu.kernel copy
    89: ("errors/constructed_objects.py:29",),  # SwizzleTransform(256): the same check as (16)
    93: ("lowering_kernel/transpose_swizzled_dim_by_version.py:14",),  # a plgpu.kernel: 0.12 accepts it
    94: ("lowering/tiled_slices_lane.py:13",),
    95: ("lowering/tiled_slices_lane.py:19",),
    102: ("lowering_kernel/swizzle_without_tiling_lane.py:14",),  # a whole load (slices: row 97)
    106: ("errors/constructed_objects.py:22",),
    108: ("lowering_kernel/wgmma_fp8_e4m3_e5m2_mix.py:14",),
}


@dataclass(frozen=True)
class Trigger:
    row: int
    path: Path
    line: int
    code: str
    message: str  # JAX 0.10.2's message, as the fixture records it

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}:{self.line}"

    @property
    def semantics(self) -> str:
        """"lane", "warpgroup" or "default" (the installed JAX's default)."""
        text = self.path.read_text()
        if "LoweringSemantics.Warpgroup" in text:
            return "warpgroup"
        if "LoweringSemantics.Lane" in text:
            return "lane"
        return "default"


@dataclass(frozen=True)
class Outcome:
    """One trigger on the installed JAX."""

    trigger: Trigger
    verdict: str  # "rejected", "accepted", "different error", "not lowered" (no plgpu.kernel form)
    message: str | None  # JAX's message (None when accepted)
    line: int | None  # the line of the trigger file JAX blames
    caught: bool  # wgmma-lsp reports JAX's message on that line (or, accepted, nothing there)
    ours: str | None  # wgmma-lsp's error on the trigger's line, if any
    via_kernel: bool  # run as the plgpu.kernel rewrite of a pl.pallas_call trigger
    semantics: str = "default"  # "default": as the trigger says; "lane": Lane forced


def _template_rx(template: str) -> re.Pattern[str] | None:
    """A message template as a regex: `{fields}`, `<placeholders>`, "..." and "…" match any text."""
    parts = re.split(r"\{[^{}]*\}|<[^<>]*>|\.\.\.|…", template.strip())
    if not "".join(parts).strip() and template.strip() and not template.strip().startswith("<"):
        return None
    return re.compile("^" + "(.*?)".join(re.escape(p) for p in parts) + r"\s*$", re.DOTALL)


def _row_regex(row: CatalogRow) -> re.Pattern[str] | None:
    t = row.template[1:-1] if row.template.startswith("`") and row.template.endswith("`") else row.template
    t = re.sub(r"^Verification failed: \.\.\. ", "", t)
    if t.startswith("(empty message)"):
        return None
    cut = len(row.template.strip("`")) >= CATALOG_CUT
    return _template_rx(t + "…" if cut else t)  # the catalog cut it there


#: The catalog (docs/mosaic-gpu-errors.tsv) cuts a longer template at this many characters.
CATALOG_CUT = 260


def _fits(rx: re.Pattern[str] | None, message: str) -> bool:
    if rx is None:
        return True
    pieces = message.split(": ")
    tails = [": ".join(pieces[i:]) for i in range(len(pieces))]  # wgmma-lsp's text before JAX's
    return any(rx.match(m) for m in (message, message.split(": '", 1)[0], *tails))


def _expectations() -> list[tuple[Path, int, str, str]]:
    """(fixture, line, code, message) of every `# E:` comment for JAX 0.10.2, and of every `# B:`
    comment (JAX's own text where the diagnostic explains it) at its code's `# E:` line."""
    out = []
    for p in sorted(FIXTURES.rglob("*.py")):
        source = p.read_text()
        errors = sorted(expectations(source, "E", version=CATALOG_VERSION))
        out += [(p, ln, code, msg) for ln, code, msg in errors]
        for _, code, msg in sorted(expectations(source, "B", version=CATALOG_VERSION)):
            out += [(p, ln, code, msg) for ln, c, _ in errors[:1] if c == code]
    return out


def triggers() -> dict[int, list[Trigger]]:
    """Each catalog row's triggers: at most one per lowering semantics."""
    claims: dict[int, set[str]] = {}
    for rule in RULES.values():
        for r in rule.catalog_rows:
            claims.setdefault(r, set()).add(rule.code)
    exps = _expectations()
    out: dict[int, list[Trigger]] = {}
    for row in load_catalog():
        rx = _row_regex(row)
        cands = [Trigger(row.row, p, ln, code, msg) for p, ln, code, msg in exps
                 if code in claims.get(row.row, ()) and _fits(rx, msg)]
        chosen = ROW_TRIGGERS.get(row.row)
        if chosen is not None:
            cands = [t for t in cands if t.name in chosen]
        picked: dict[str, Trigger] = {}
        # A trigger every JAX can run first: plgpu.kernel, or a pallas_call as_kernel can rewrite.
        cands.sort(key=lambda t: not _runs_everywhere(t.path))
        for t in cands:
            picked.setdefault(t.semantics, t)
        out[row.row] = list(picked.values())
    return out


# -- pl.pallas_call -> plgpu.kernel ------------------------------------------------------------

def _runs_everywhere(path: Path) -> bool:
    source = path.read_text()
    return "pallas_call" not in source or as_kernel(source) is not None


def _pallas_calls(tree: ast.Module) -> list[ast.Call]:
    """`pl.pallas_call(...)(args)` calls (the outer call)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Call)
            and isinstance(n.func.func, ast.Attribute) and n.func.func.attr == "pallas_call"]


def _specs(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.left, ast.List)
            and len(node.left.elts) == 1 and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, int)):
        return node.left.elts * node.right.value
    return [node]


def _smem_transforms(spec: ast.expr) -> str | None:
    """The transforms of a whole-array SMEM BlockSpec, as source text ("()" when none)."""
    if not (isinstance(spec, ast.Call) and isinstance(spec.func, ast.Attribute) and spec.func.attr == "BlockSpec"):
        return None
    if spec.args:
        return None
    kw = {k.arg: k.value for k in spec.keywords}
    if set(kw) - {"memory_space", "transforms"}:
        return None
    space = kw.get("memory_space")
    if space is not None and not (isinstance(space, ast.Attribute) and space.attr == "SMEM"):
        return None
    return ast.unparse(kw["transforms"]) if "transforms" in kw else "()"


def as_kernel(source: str, lane: bool = False) -> str | None:
    """`source` with its `pl.pallas_call(kernel, ...)(args)` calls (no grid, whole-array SMEM
    blocks) rewritten to the same kernel under `plgpu.kernel`, on the same lines; None when a
    call has another form."""
    tree = ast.parse(source)
    calls = _pallas_calls(tree)
    if not calls:
        return None
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    edits: list[tuple[int, int, str]] = []
    defs: list[str] = []
    for i, outer in enumerate(calls):
        inner = outer.func
        assert isinstance(inner, ast.Call)
        kw = {k.arg: k.value for k in inner.keywords}
        if len(inner.args) != 1 or set(kw) - {"out_shape", "in_specs", "out_specs", "compiler_params",
                                              "scratch_shapes"} or "out_shape" not in kw:
            return None
        ins = _specs(kw["in_specs"]) if "in_specs" in kw else []
        outs = _specs(kw["out_specs"]) if "out_specs" in kw else [ast.parse("plgpu.BlockSpec()", mode="eval").body]
        if ins is None or outs is None or len(outs) != 1 or len(ins) != len(outer.args) or outer.keywords:
            return None
        tins = [_smem_transforms(s) for s in ins]
        tout = _smem_transforms(outs[0])
        if tout is None or any(t is None for t in tins):
            return None
        scratch = kw.get("scratch_shapes")
        nscratch = len(scratch.elts) if isinstance(scratch, (ast.List, ast.Tuple)) else 0 if scratch is None else -1
        if nscratch < 0:
            return None
        n = len(ins)
        name = f"_wgmma_lsp_as_kernel_{i}"
        args = [ast.unparse(inner.args[0]), ast.unparse(kw["out_shape"]),
                ast.unparse(kw["compiler_params"]) if "compiler_params" in kw else LANE_PARAMS if lane else "None",
                ast.unparse(scratch) if scratch is not None else "()", *tins, tout]
        start = offsets[outer.lineno - 1] + len(lines[outer.lineno - 1][:outer.col_offset].encode()
                                                 .decode())  # col_offset is in UTF-8 bytes; fixtures are ASCII
        end = offsets[outer.end_lineno - 1] + outer.end_col_offset  # type: ignore[operator]
        pad = "\n" * (outer.end_lineno - outer.lineno)  # type: ignore[operator]
        edits.append((start, end, f"{name}({pad}{', '.join(args)})({', '.join(ast.unparse(a) for a in outer.args)})"))
        g = [f"g{j}" for j in range(n)]
        s = [f"s{j}" for j in range(n)]
        sc = [f"x{j}" for j in range(nscratch)]
        body = [f"    def body({', '.join([*g, 'go', *s, 'so', *sc, 'bar'])}):"]
        body += [f"      plgpu.copy_gmem_to_smem(g{j}, s{j}, bar.at[{j}])" for j in range(n)]
        body += [f"      plgpu.barrier_wait(bar.at[{j}])" for j in range(n)]
        body += [f"      kernel({', '.join([*s, 'so', *sc])})",
                 "      plgpu.commit_smem()", "      plgpu.copy_smem_to_gmem(so, go)",
                 "      plgpu.wait_smem_to_gmem(0)"]
        scratch_types = [f"plgpu.SMEM(a{j}.shape, a{j}.dtype, transforms=t{j})" for j in range(n)]
        scratch_types += ["plgpu.SMEM(out_shape.shape, out_shape.dtype, transforms=to)", "*scratch",
                          f"plgpu.Barrier(num_barriers={max(n, 1)})"]
        defs.append("\n".join([
            "", "",
            f"def {name}(kernel, out_shape, compiler_params, scratch, {', '.join([*(f't{j}' for j in range(n)), 'to'])}):",
            f"  def call({', '.join(f'a{j}' for j in range(n))}):",
            *body,
            f"    return plgpu.kernel(body, out_type=out_shape, scratch_types=[{', '.join(scratch_types)}],",
            f"                        compiler_params=compiler_params)({', '.join(f'a{j}' for j in range(n))})",
            "  return call", ""]))
    text = source
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text.rstrip("\n") + "\n" + "".join(defs)


# -- running a trigger -------------------------------------------------------------------------

def _same_check(row: CatalogRow, trigger: Trigger, message: str) -> bool:
    """JAX's message is the row's error (in 0.10's words, or the claiming rule's for this JAX)."""
    rx = _row_regex(row)
    if rx is not None and _fits(rx, message):
        return True
    if rx is None and message == f"(empty {row.exception})":  # a bare assert, as the row's
        return True
    rule = RULES[trigger.code]
    for alt in rule.installed_template().split(" / "):
        alt_rx = _template_rx(alt) if alt.strip().strip("{}") != alt.strip() or len(alt) > 12 else None
        if alt_rx is not None and _fits(alt_rx, message):
            return True
    return message == trigger.message


def _errors(source: str, path: Path) -> list[tuple[int, str, str]]:
    """wgmma-lsp's errors, at their line and at the line the finding says JAX blames."""
    analysis = analyze(source, str(path))
    shown = [(d.span.line + 1, d.code, strip_context_note(d.message).rstrip())
             for d in diagnostics(analysis) if d.severity == Severity.ERROR]
    keys = {(code, msg) for _, code, msg in shown}
    blamed = [(f.blame_line + 1, f.rule.code, strip_context_note(f.message).rstrip())
              for f in analysis.findings if f.certain]
    return shown + [b for b in blamed if (b[1], b[2]) in keys]


def _kernel_keywords(source: str) -> str:
    """The trigger in the installed JAX's API: `plgpu.kernel(out_shape=, scratch_shapes=)` as
    `out_type=`/`scratch_types=` where this JAX's plgpu.kernel has only those (JAX 0.12), on the
    same lines."""
    sig = signature("plgpu.kernel")
    if sig is None or "out_type" not in sig.names("kwonly") or "out_shape" in sig.names("kwonly"):
        return source
    lines = source.splitlines(keepends=True)
    renames = {"out_shape": "out_type", "scratch_shapes": "scratch_types"}
    edits = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "kernel":
            edits += [(k.lineno, k.col_offset, k.arg) for k in n.keywords if k.arg in renames]
    for ln, col, arg in sorted(edits, reverse=True):
        text = lines[ln - 1]
        assert text[col:col + len(arg)] == arg
        lines[ln - 1] = text[:col] + renames[arg] + text[col + len(arg):]
    return "".join(lines)


def _verdict_for(verdicts: list, trigger: Trigger, row: CatalogRow):
    """The verdict of the entry point that reaches the trigger (a fixture may hold several)."""
    for v in verdicts:
        if v.line == trigger.line:
            return v
    same = [v for v in verdicts if v.message is not None and _same_check(row, trigger, v.message)]
    return (same or verdicts)[0]


_ENTRY = re.compile(r"^\s*#\s*wgmma-lsp:\s*trace\s+(.*)$")
LANE_PARAMS = "plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)"


def _only_entry(source: str, line: int) -> str:
    """Of several `# wgmma-lsp: trace` entry points, the one that runs the top-level function
    holding `line` (a fixture with one error per entry point); the source unchanged otherwise."""
    lines = source.splitlines(keepends=True)
    entries = [i for i, t in enumerate(lines) if _ENTRY.match(t)]
    if len(entries) < 2:
        return source
    holder = next((n.name for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    if holder is None:
        return source
    keep = [i for i in entries if re.search(rf"\b{re.escape(holder)}\b", lines[i])]
    if len(keep) != 1:
        return source
    return "".join("\n" if i in entries and i not in keep else t for i, t in enumerate(lines))


def _as_lane(source: str) -> str | None:
    """The kernel compiled with Lane semantics: `compiler_params=` added to every `plgpu.kernel(`
    call without one (same lines); None when a call already names its parameters."""
    edits = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "kernel":
            if any(k.arg == "compiler_params" for k in n.keywords):
                if ast.unparse(next(k.value for k in n.keywords if k.arg == "compiler_params")) != "compiler_params":
                    return None
                continue
            edits.append((n.end_lineno, n.end_col_offset - 1, bool(n.args or n.keywords)))
    lines = source.splitlines(keepends=True)
    for ln, col, comma in sorted(edits, reverse=True):
        text = lines[ln - 1]
        assert text[col] == ")"
        sep = ", " if comma and not text[:col].rstrip().endswith(",") else ""
        lines[ln - 1] = text[:col] + sep + f"compiler_params={LANE_PARAMS}" + text[col:]
    return "".join(lines)


def variants(row: CatalogRow, trigger: Trigger) -> list[str]:
    """The lowering semantics to derive a trigger under: its own; and for a lowering trigger that
    names none, Lane too where this JAX's default is not Lane (0.10's default, the catalog's)."""
    from wgmma_lsp.interpret.jax_version import installed_default_lowering_semantics

    if row.stage == "lower" and trigger.semantics == "default" and installed_default_lowering_semantics() != "lane":
        return ["default", "lane"]
    return ["default"]


def run(row: CatalogRow, trigger: Trigger, semantics: str = "default") -> Outcome:
    source = _only_entry(trigger.path.read_text(), trigger.line)
    path = trigger.path
    via_kernel = False
    lower = row.stage == "lower"
    if lower and "pallas_call" in source and pallas_call_lowers_mosaic_gpu() is False:
        converted = as_kernel(source, lane=semantics == "lane")
        if converted is None:
            return Outcome(trigger, "not lowered", None, None, False, None, False, semantics)
        source, via_kernel = converted, True
    elif semantics == "lane":
        lane = _as_lane(source)
        if lane is None:
            return Outcome(trigger, "not lowered", None, None, False, None, False, semantics)
        source = lane
    migrated = _kernel_keywords(source)
    if migrated != trigger.path.read_text():
        path = Path(tempfile.mkdtemp(prefix="wgmma_catalog_")) / trigger.path.name
        path.write_text(migrated)
        source = migrated
    verdicts = [v for v in trace_file(path, lower=lower) if v.message is not None or v.line is not None]
    errors = _errors(source, path)
    at_line = [e for e in errors if e[0] == trigger.line]
    ours = at_line[0][2] if at_line else None
    if not verdicts:
        clean_there = not at_line
        return Outcome(trigger, "accepted", None, None, clean_there, ours, via_kernel, semantics)
    v = _verdict_for(verdicts, trigger, row)
    message = v.message or f"(empty {v.exc_type})"
    verdict = "rejected" if _same_check(row, trigger, message) else "different error"
    line = v.line if v.line is not None else trigger.line
    jax_text = (v.message or "").rstrip()  # `swap`'s messages end in a space; wgmma-lsp's are stripped
    caught = any(ln == line and (msg == jax_text or (jax_text and jax_text in msg)
                                 or (not jax_text and (RULES[code].exception == v.exc_type
                                                       or f"(JAX: {v.exc_type} from" in msg)))
                 for ln, code, msg in errors)
    if v.line is None:  # kernel-level: no line of the file in JAX's traceback
        caught = caught or any(jax_text and jax_text in msg for _, _, msg in errors)
    return Outcome(trigger, verdict, message, v.line, caught, ours, via_kernel, semantics)


def jax_label() -> str:
    from wgmma_lsp.interpret.jax_facts import current

    return current().jax_version or ".".join(map(str, installed() or ()))


def semantics_label(trigger: Trigger) -> str:
    s = trigger.semantics
    if s != "default":
        return s
    from wgmma_lsp.interpret.jax_version import installed_default_lowering_semantics

    return f"default ({installed_default_lowering_semantics()})"
