"""Entry points: where a file's kernels are called with concrete shapes and configs.

`declared` reads the entry points a user writes down (`# wgmma-lsp: trace ...` comments,
pyproject.toml); `discover` finds the calls the program itself makes (`__main__` blocks, pytest
and absl tests with their parameters); `context` names the concrete contexts they create.
All of it only reads source text: trace mode and the static analyzer share it.
"""
