"""Reverse-mode differentiation as JAX runs the user's code for it (models/autodiff.py).

A kernel library's backward kernels run only under `jax.vjp` / `jax.grad`: a `jax.custom_vjp`
function runs its forward rule there (its residuals kept), and the pullback runs the backward
rule with a cotangent of the forward output's aval. Every program below runs in CPython (with
JAX) and through the interpreter; what the interpreter claims for the names checked must be what
CPython holds. The side effects of the rules (`seen.append(...)`) show which rule ran, in which
order and with which avals.
"""

from __future__ import annotations

from pytree_agree import agree, claims
from test_python_calls import HEADER

RULES = HEADER + """
seen = []

@jax.custom_vjp
def f(x, y):
    seen.append(("f", x.shape))
    return x * 2.0, y

def f_fwd(x, y):
    seen.append(("fwd", x.shape, y.shape))
    return (x * 2.0, y), (x, y.sum())

def f_bwd(res, ct):
    x, s = res
    ct_x, ct_y = ct
    seen.append(("bwd", ct_x.shape, ct_x.dtype.name, ct_y.shape, s.shape))
    return ct_x * 2.0, ct_y

f.defvjp(f_fwd, f_bwd)
x = jnp.zeros((4, 8), jnp.float32)
y = jnp.ones((3,), jnp.bfloat16)
"""


def test_outside_vjp_a_custom_vjp_call_runs_its_function() -> None:
    agree(RULES + """
out = f(x, y)
ran = list(seen)
""", "out", "ran")


def test_vjp_runs_fwd_then_the_pullback_runs_bwd_with_the_outputs_avals() -> None:
    agree(RULES + """
out, pullback = jax.vjp(f, x, y)
before = list(seen)
grads = pullback((jnp.ones((4, 8), jnp.float32), jnp.ones((3,), jnp.bfloat16)))
after = list(seen)
""", "out", "before", "grads", "after")


def test_pullback_runs_the_rules_last_call_first() -> None:
    agree(RULES + """
def g(x, y):
    a, b = f(x, y)
    c, d = f(a[:2], b)
    return c.sum() + a.sum()

value, pullback = jax.vjp(g, x, y)
grads = pullback(jnp.float32(1.0))
order = [s[0] for s in seen]
""", "value", "grads", "order")


def test_nondiff_argnums_come_first_in_bwd() -> None:
    agree(HEADER + """
seen = []

@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def scale(block, x):
    return x * block

def scale_fwd(block, x):
    return x * block, x.shape

def scale_bwd(block, res, ct):
    seen.append((block, res, ct.shape))
    return (ct * block,)

scale.defvjp(scale_fwd, scale_bwd)
out, pb = jax.vjp(lambda x: scale(64, x), jnp.zeros((2, 16), jnp.float16))
(g,) = pb(jnp.ones((2, 16), jnp.float16))
""", "out", "g", "seen")


def test_grad_and_value_and_grad() -> None:
    agree(RULES + """
def loss(x, y):
    a, b = f(x, y)
    return (a * a).sum()

g = jax.grad(loss)(x, y)
both = jax.grad(loss, argnums=(0, 1))(x, y)
value, g0 = jax.value_and_grad(loss)(x, y)
order = [s[0] for s in seen]
""", "g", "both", "value", "g0", "order")


def test_has_aux() -> None:
    agree(RULES + """
def loss(x, y):
    a, b = f(x, y)
    return a.sum(), {"b": b}

g, aux = jax.grad(loss, has_aux=True)(x, y)
(value, aux2), g2 = jax.value_and_grad(loss, has_aux=True)(x, y)
out, pb, aux3 = jax.vjp(loss, x, y, has_aux=True)
""", "g", "aux", "value", "aux2", "g2", "out", "aux3")


def test_a_wrong_cotangent_runs_no_rule() -> None:
    """JAX raises before any backward rule runs when the cotangent's aval is not the output's;
    the interpreter runs none (and claims no gradient)."""
    source = RULES + """
out, pullback = jax.vjp(f, x, y)
try:
    pullback((jnp.ones((4, 4), jnp.float32), jnp.ones((3,), jnp.bfloat16)))
    raised = False
except Exception:
    raised = True
ran = [s[0] for s in seen]
"""
    agree(source, "ran")
    assert claims(source, "raised") in (True, None)  # (that JAX raises is not claimed)


def test_grad_of_a_non_scalar_claims_nothing() -> None:
    assert claims(RULES + """
def not_scalar(x, y):
    return f(x, y)[0]

try:
    g = jax.grad(not_scalar)(x, y)
except TypeError:
    g = None
""", "g") is None


def test_rules_registered_out_of_order_are_not_guessed() -> None:
    """`defvjp` on a path that may not be taken: the rules are not known, and no backward rule
    is claimed to run."""
    assert claims(RULES + """
import random

@jax.custom_vjp
def h(x):
    return x

if random.random() < 2:
    h.defvjp(lambda x: (x, None), lambda res, ct: (ct,))
out, pb = jax.vjp(h, x)
(g,) = pb(x)
n = len(seen)
""", "n") in (0, None)
