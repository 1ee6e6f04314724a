"""wgmma-lsp: a language server for JAX Pallas kernels on Mosaic GPU (Hopper wgmma, Blackwell tcgen05)."""

__version__ = "0.1.0"
