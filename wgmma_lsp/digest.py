"""Content digests without loading OpenSSL (no other import here).

`hashlib` loads OpenSSL's libcrypto when imported — about 20M instructions, 5-6 ms of every
process start — though the digests wgmma-lsp needs (a module's content, a cache entry's key) are
BLAKE2b, which CPython builds in (`_blake2`, what `hashlib.blake2b` is). A Python built without
it: hashlib's.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - CPython without its BLAKE2 module
    from hashlib import blake2b

__all__ = ["blake2b"]
