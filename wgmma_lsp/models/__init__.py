"""Abstract semantics of the JAX API: one small function per API entry, by canonical name.

Like JAX's abstract-eval rules, a model computes the result's abstract value and reports the
errors JAX's own checks would raise. Each model names the JAX source it mirrors.
"""
