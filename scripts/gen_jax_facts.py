"""Generate wgmma_lsp/interpret/jax_facts_bundled.json: the JAX API facts used when the analysed
environment has no JAX (interpret/jax_facts.py), read from the JAX installed next to this script's
interpreter — the newest supported one.

    .venv312/bin/python scripts/gen_jax_facts.py          # write the table
    .venv312/bin/python scripts/gen_jax_facts.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wgmma_lsp import environment  # noqa: E402
from wgmma_lsp.interpret import jax_facts  # noqa: E402


def render() -> str:
    env = environment.active()
    if env.jax_root is None:
        raise SystemExit("gen_jax_facts: no JAX in this interpreter's environment")
    facts, _ = jax_facts.extract()
    return json.dumps(facts.to_json(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the bundled table differs")
    args = parser.parse_args()
    text = render()
    if args.check:
        if jax_facts.BUNDLED.read_text(encoding="utf-8") != text:
            print(f"{jax_facts.BUNDLED} is stale: run {__file__}", file=sys.stderr)
            return 1
        return 0
    jax_facts.BUNDLED.write_text(text, encoding="utf-8")
    print(f"wrote {jax_facts.BUNDLED} (jax {json.loads(text)['jax_version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
