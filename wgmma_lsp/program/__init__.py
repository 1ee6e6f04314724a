"""The program layer: the user's other modules (see program.py)."""

from wgmma_lsp.program.program import Program, Session, default_program

__all__ = ["Program", "Session", "default_program"]
