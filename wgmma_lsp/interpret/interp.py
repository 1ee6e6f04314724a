"""The abstract interpreter: runs module code and kernel bodies over abstract values.

It follows calls into user functions (with their closures, defaults, decorators and
`functools.partial`), records the value of every expression it visits (for hover), and lets
the models of the JAX API report findings. Control flow it cannot decide is explored on
every path; a fact that differs between paths is joined away, and findings made on a path
that may not run are marked uncertain.
"""

from __future__ import annotations

import ast
import threading
import weakref

from wgmma_lsp.analysis_types import ValueRecord
from wgmma_lsp.interpret import interp_base
from wgmma_lsp.entry.context import Context
from wgmma_lsp.interpret.block_exits import rebound_names
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.kernel_state import KernelState, outside_kernel
from wgmma_lsp.interpret.memo import MemoEntry
from wgmma_lsp.interpret.observe import Observations
from wgmma_lsp.interpret.origin import ModuleOrigin, active_importer
from wgmma_lsp.interpret.sweep_budget import sweep_steps
from wgmma_lsp.interpret.values import FuncVal, Value
from wgmma_lsp.models import registry
from wgmma_lsp.rules.base import Finding
from wgmma_lsp.spans import LineIndex, Span

registry.load_all()
# The interpreter's parts (one mixin per module) and what other modules import from here.
from wgmma_lsp.interpret.interp_base import (  # noqa: E402,F401
    CHECK_EVERY, CURRENT_CANCEL, MAX_STEPS, Budget, Cancelled, Frame, _informative, is_driver,
    release_scopes)
from wgmma_lsp.interpret.interp_calls import CallsMixin  # noqa: E402
from wgmma_lsp.interpret.interp_expressions import ExpressionsMixin  # noqa: E402
from wgmma_lsp.interpret.interp_generators import GeneratorsMixin  # noqa: E402
from wgmma_lsp.interpret.interp_loops import LoopsMixin, _LoopExits  # noqa: E402
from wgmma_lsp.interpret.interp_records import RecordsMixin  # noqa: E402
from wgmma_lsp.interpret.interp_statements import StatementsMixin  # noqa: E402
from wgmma_lsp.interpret.interp_try import TryMixin, _TryScope  # noqa: E402
from wgmma_lsp.interpret.interp_match import MatchMixin  # noqa: E402

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from wgmma_lsp.interpret import followon
    from wgmma_lsp.interpret.origin import Importer

class Interpreter(RecordsMixin, CallsMixin, StatementsMixin, LoopsMixin, TryMixin, MatchMixin, ExpressionsMixin,
                  GeneratorsMixin):
    """Runs a module's code and the kernel bodies it reaches, over abstract values: its state
    is here, its parts are the mixins (records and findings, calls, statements, loops, `try`,
    expressions)."""

    def __init__(self, source: str, tree: ast.Module, lines: LineIndex, path: str | None = None,
                 origin: ModuleOrigin | None = None, importer: Importer | None = None,
                 cancel: threading.Event | None = None):
        self.source = source
        self.tree = tree
        self.lines = lines
        self.path = path
        # Which module's code runs now: None for the analysed document; a ModuleOrigin while a
        # function of another user module runs (its spans are ForeignSpans, nothing is recorded
        # for hovers, findings move to `entry_span`). `home` is the module this interpreter
        # analyses: an interpreter that only summarises another module (home set) reports nothing.
        self.home = origin
        self.where = origin
        self.entry_span: Span | None = None  # the call in the analysed document that led there
        self.importer = importer if importer is not None else active_importer()
        self.shared_writes: dict[int, dict[str, Value]] = {}  # see InstanceVal.shared
        # Lists and dicts (interpret/mutation.py): another module's containers this analysis
        # spoiled (by id), and the serial number of the first object made after module code
        # (an older one is not changed exactly by the contexts that follow it).
        self.spoiled_shared: dict[int, Value] = {}
        self.shared_born = 0
        self.outside_written: list = []  # (object, attribute) a sweep iteration changed (mutation.py)
        self.records: dict[Span, ValueRecord] = {}
        self._records: dict[int, tuple] = {}  # id(node) -> (node, kind, name, values, contexts)
        # Keys of `_records` whose values are settled: MAX_RECORD_VALUES of them, none partly
        # unknown (`record` adds or replaces nothing there again).
        self._records_full: set[int] = set()
        self.findings: list[Finding] = []
        # Every report made, with whether it was certain there (a finding seen before is
        # reported again without a new one): interp_records.settle_lowering_findings reads it.
        self.report_log: list[tuple[Finding, bool]] = []
        self._finding_keys: set[tuple] = set()
        # JAX stops at its first error (interpret/followon.py): the contexts whose run a certain
        # trace-time error ended, in the running run scope, with the serial number of that
        # report (`report_serial` counts every report made, kept or not).
        self.ended: dict[Context | None, int] = {}
        self.run_base: followon.RunBase | None = None  # what the running run began under
        # Where a lowering error ends the run (followon.py): whether the code at the bottom runs
        # untraced (a test function, a `__main__` block), the model of the outermost modelled
        # call running above it (None: none), and the contexts of the run scope whose certain
        # lowering error JAX raises when that call returns.
        self.eager_root = False
        self.api_call: str | None = None
        self.pending_ends: set[Context | None] = set()
        self.report_serial = 0
        self.module_env = Env(origin=origin)
        self.stack: list[Frame] = []
        self.certain = True
        self.uncertain_born = 0  # when `certain` became false (see uncertain())
        self.silent = 0
        # When the outermost `quiet()` began on a certain path (None: not so): what it makes
        # from there on is its own, changed exactly (interpret/mutation.made_on_this_path)
        self.quiet_born: int | None = None
        self.steps = 0
        self.step_limit = MAX_STEPS  # Budget past it (interpret/incomplete.py sets it per piece)
        if cancel is None:
            cancel = getattr(CURRENT_CANCEL, "event", None)
        self.cancel = cancel  # set from another thread: stop at the next checkpoint
        self._check_at = min(interp_base.CHECK_EVERY, MAX_STEPS) if cancel is not None else MAX_STEPS
        self.entered: set[int] = set()  # id() of function nodes whose bodies ran
        self.defined: dict[int, FuncVal] = {}  # id() of def node -> last function value made
        self.escaped: set[int] = set()  # id() of def nodes returned to callers
        self.context: list[str] = []  # descriptions of the call sites that led here
        # The concrete context being analysed (an entry point, a sweep iteration), None when
        # nothing is known; which contexts entered each function (by id of its node); notes
        # about what the budget left out (span, message).
        self.ctx: Context | None = None
        self.ctx_entered: dict[int, set[Context | None]] = {}
        self.notes: list[tuple[Span, str]] = []
        self.incomplete: list = []  # analysis.Incomplete: where the analysis stopped short (WG904)
        self.sweep_steps = 0  # steps spent in sweep iterations
        self.sweep_depth = 0
        # Loops over a few known items are unrolled; in a function analysed with nothing known
        # (`run_unreached`) a nest of them is unrolled only while the product of its trip counts
        # stays within `unroll_cap` (interp_loops.py): deeper loops run as loops of unknown trip
        # count. None: no cap. `unroll_weight`: the product of the unrolled loops running now.
        self.unroll_cap: int | None = None
        self.unroll_weight = 1
        self.unroll_joined = False  # a loop ran as a loop because of the cap
        self.capped: set[int] = set()  # id() of def nodes whose run joined a nest (driver.py)
        # Each sweep: (0-based line of its loop, combinations checked, combinations in all).
        self.sweep_checked: list[tuple[int, int, int]] = []
        # Open observation logs of sweep iterations (interpret/observe.py): while one is open,
        # reads that keep books are made unobserved. The serial number an object must be born
        # from to belong to the running iteration, and how many writes went to older objects.
        self.observing = 0
        self.obs = Observations()
        self.iteration_born = 0
        self.outside_writes = 0
        # The last pass: code the contexts reached, analysed with nothing known, only for the
        # hovers of lines no context reached (its findings belong to the contexts).
        self.hover_only = False
        # While it runs: the nodes that had an informative value when it started (the
        # contexts' values: kept as they are; interp_records._record).
        self.hover_kept: set[int] = set()
        self.flip_flags = False  # hover pass, second round: flags' defaults flipped
        self.hover_memo: dict | None = None  # while the hover pass runs (interpret/hover_memo.py)
        # Called with each list, dict or set spoiled (mutation.spoil) while set: a run that is
        # only for a function's result stops once that result is known to be unknown
        # (entry/provider_result.py).
        self.spoil_watch: Callable[[Value], None] | None = None
        # The package's test cases the budget left out, for the hover pass (test_contexts.py):
        # a thunk per case that runs it in its context.
        self.unrun_test_cases: list[Any] = []
        # The last undecided `a == b` / `a != b` of two sizes: its node and `a - b`
        # (interpret/path_equalities.py); read by the `if` it is the test of.
        self.dim_test: tuple[ast.expr, Any] | None = None
        self.expecting_error = 0  # inside `with pytest.raises(...)`: errors are expected there
        # How many `uncertain()` regions are open (a generator's yields are known only where none
        # opened since its body started), and the generator bodies running (interpret/generators.py).
        self.uncertain_depth = 0
        self.yield_sinks: list = []
        # Each enclosing `try`: the exception classes it catches (None: it may catch anything),
        # and whether an error it may catch was already found in its body (then the rest of
        # that body may not run).
        self.handlers: list[_TryScope] = []
        # The loops whose `break`/`continue` the interpreter follows (sweep iterations), innermost
        # last; None for a loop it runs another way (their exits are theirs).
        self.loops: list[_LoopExits | None] = []
        # Calls analysed once per distinct arguments (interpret/memo.py), after the module ran.
        self.memo_enabled = False
        self.memo: dict[Any, MemoEntry] = {}
        # Another module's functions, memoised the same way (interpret/foreign_memo.py).
        self.foreign_memo: dict[Any, MemoEntry] = {}
        # The deepest stack a user function call was made at (interp_calls._call_user), for the
        # runs foreign_memo.py keeps: how deep each went.
        self.max_stack = 0
        # Calls in silent passes, memoised for those only (interpret/silent_memo.py).
        self.silent_memo: dict[Any, MemoEntry] = {}
        self.captures: list[MemoEntry] = []
        # Writes to objects so far (lists, dicts, sets, instances, classes: mutation.note_write),
        # and the suffix minima of the written objects' birth serials (mutation.written_since):
        # a memoised call that read older objects replays only while none of those was written.
        self.write_serial = 0
        self.write_minima: list[tuple[int, int]] = []
        # The `jax.vjp`s running (innermost last): each collects the custom_vjp calls its
        # function makes, whose backward rules its pullback runs (models/autodiff.py).
        self.vjp_frames: list[list[Any]] = []
        # While a test context of the package runs: its hooks (entry/op_dispatch.ProgramHooks).
        self.program_hooks: Any = None
        # Functions (by node id) whose every return value is logged while set: a test context
        # reading each config a provider returns (entry/op_dispatch.py), not their join.
        self.return_log: dict[int, list] | None = None
        self.raised_out = False  # the user function call that just ended raised on every path
        # The class statements whose metaclass of the user's runs (interpret/metaclasses.py),
        # innermost last: the class each body made, and the (name, bases, namespace) given.
        self.making_classes: list[tuple[Any, list[Any]]] = []
        self.sweep_start = 0
        # Steps all configuration sweeps together may spend (interpret/sweep_budget.py): the
        # first case of a sweep always runs; the budget keeps the speed target.
        self.sweep_budget = sweep_steps(len(lines.lines), MAX_STEPS)
        # The kernel whose body runs now (lowering semantics, its call, thread axis, SMEM scopes):
        # one object, replaced for each kernel body (models/pallas.py); memo keys derive from it.
        self.kernel: KernelState = outside_kernel()
        # id() of an API result -> (that result, the call that made it), for checks JAX makes
        # only when the result is used (a `plgpu.kernel(...)` decorator's keywords).
        self.made_by: dict[int, tuple[Value, Call]] = {}
        # What each kernel call allocates in shared memory (models/smem_budget.py), by its span.
        self.smem_usage: dict[Span, list] = {}
        # Names some function rebinds with `global`/`nonlocal`: their value at any point is unknown.
        # (skipped when the words are absent; `pl.get_global` has one: then statements only)
        self.volatile: set[str] = rebound_names(tree) \
            if "global" in source or "nonlocal" in source else set()
        self._span_cache: dict[int, Span] = {}
        # Scopes a function or class was bound in: each holds a value that closes over it, a
        # reference cycle that only the collector could free. When this interpreter is dropped
        # (its analysis superseded, or its hover records built), they are emptied, so that the
        # analysis' memory returns at once, without a garbage collection (see release_scopes).
        # Not for the summaries of the user's other modules (home set): those are kept and shared.
        self._closure_scopes: set[Env] | None = None
        if origin is None:
            self._closure_scopes = set()
            weakref.finalize(self, release_scopes, self._closure_scopes)
        self.unresolved: list = []  # jedi_resolve.Pending: imports only jedi can resolve
        self._home_state = (self.lines, self.path, self.volatile)
        self.models = registry.MODELS
        self.methods = registry.METHODS

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self._check_at:
            self.checkpoint()

    def checkpoint(self) -> None:
        """Every `interp_base.CHECK_EVERY` steps: stop if cancelled or out of budget."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        if self.steps > self.step_limit:
            raise Budget()
        if self.cancel is not None:
            self._check_at = min(self.step_limit, self.steps + interp_base.CHECK_EVERY)
        else:
            self._check_at = self.step_limit

    # -- module and functions ---------------------------------------------------------------
    def run_module(self) -> None:
        self.exec_block(self.tree.body, self.module_env)


_EXEC = {getattr(ast, name[5:]): fn for klass in reversed(Interpreter.__mro__) for name, fn in vars(klass).items()
         if name.startswith("exec_") and hasattr(ast, name[5:])}
_EVAL = {getattr(ast, name[5:]): fn for klass in reversed(Interpreter.__mro__) for name, fn in vars(klass).items()
         if name.startswith("eval_") and hasattr(ast, name[5:])}
Interpreter._EXEC = _EXEC
Interpreter._EVAL = _EVAL
