"""The rule catalog: one module per error class JAX raises, each with its documentation beside it.

A rule module defines `RULE` (a `Rule`) and, optionally, `fixes(finding, source)`. Its
documentation is the Markdown file with the same name next to it. `registry` finds them all.
"""
