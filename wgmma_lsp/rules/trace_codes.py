"""The codes trace mode reports under when no rule of the registry matches JAX's message (code,
name). Data only: trace mode (`trace/report.py`) uses them, the rule registry knows them as codes."""

from __future__ import annotations

#: Codes for what trace mode reports when no rule of the registry matches JAX's message.
TRACE_ERROR = ("TRACE001", "trace-error")  # raised by jax.make_jaxpr / jit(...).trace
LOWERING_ERROR = ("TRACE002", "lowering-error")  # raised by .lower(lowering_platforms=("cuda",))
TIME_LIMIT = ("TRACE003", "trace-time-limit")
MEMORY_LIMIT = ("TRACE004", "trace-memory-limit")
PROCESS_FAILED = ("TRACE005", "trace-process-failed")
IMPORT_ERROR = ("TRACE006", "trace-import-error")  # the module itself raised
ENTRY_ERROR = ("TRACE007", "trace-entry-point")  # the entry point's expression raised
JAX_LIMITATION = ("TRACE008", "trace-jax-limitation")  # JAX cannot lower it here: not a verdict
