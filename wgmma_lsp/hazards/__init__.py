"""Run-time hazards of a Mosaic GPU kernel (WG2xx): a static happens-before analysis.

While the interpreter runs a kernel body (`models/pallas.py: _run_kernel`), the models of the
operations that touch shared memory asynchronously or synchronise with it — `copy_gmem_to_smem`,
`copy_smem_to_gmem`, `barrier_wait`/`barrier_arrive`, `commit_smem`, `wait_smem_to_gmem` — and
the loads and stores through SMEM refs append events to the kernel's log (`log.py`). When the body
has run, `analysis.py` replays the log in program order with the synchronisation JAX's GPU
interpret mode models (its race detector: `jax/_src/pallas/mosaic_gpu/interpret/`), and the rules
WG200-WG2xx report each access that races in every execution the analysis sees.

A `lax.fori_loop` / `pl.loop` with Python-int bounds is unrolled in the log (`unroll.py`): its
index knows its value at each step (`interpret/loop_steps.py`), so a multi-buffered loop's slot
`i % num_stages` is known at every step. `release.py` looks for producer/consumer threads whose
producer refills a slot without waiting on the consumer's release barrier (WG210).

Precision first: an event reached only on some paths (a traced `pl.when`, a loop that may not
run) never proves a race, while a synchronisation reached on some path counts as done; an index
that is not known, a call the interpreter does not follow with a ref, or a body replayed from the
memo silences the kernel.
"""
