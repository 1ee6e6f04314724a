"""Trace mode: JAX's own verdict on a kernel, computed in a separate, sandboxed process."""
