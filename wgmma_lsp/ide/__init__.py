"""IDE features as pure functions from analysis results to plain dataclasses (no LSP types here)."""
