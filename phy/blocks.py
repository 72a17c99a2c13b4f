"""Chunk-invariant noise: draws in fixed logical blocks of the d data slots.

The d data slots are split into logical blocks of :data:`BLOCK` = 4096 consecutive entries.
The noise of block m of round t comes from the keyed stream ``(seed, purpose, t, m)`` and has
a fixed shape (rows × length of the block), so it does not depend on how the d slots are
grouped for processing. Processing chunks are whole numbers of blocks
(:func:`chunk_ranges`), so any ``chunk_size`` gives bit-identical results.
"""

from __future__ import annotations

import numpy as np

from .randomness import stream

__all__ = ["BLOCK", "chunk_ranges", "fill_block_noise"]

BLOCK = 4096


def chunk_ranges(d: int, chunk_size: int):
    """Yield (start, stop) of processing chunks of the d slots; chunks hold ⌈chunk_size/BLOCK⌉·BLOCK slots."""
    step = max(1, -(-int(chunk_size) // BLOCK)) * BLOCK
    for start in range(0, int(d), step):
        yield start, min(start + step, int(d))


def fill_block_noise(out: np.ndarray, *, seed: int, purpose: str, round_index: int, start: int, std: float) -> np.ndarray:
    """Fill ``out`` [rows, c] (or [c]) with N(0, std²) noise of slots start..start+c−1.

    ``start`` must be a multiple of :data:`BLOCK`. Returns ``out``.
    """
    if start % BLOCK:
        raise ValueError(f"start must be a multiple of {BLOCK} (got {start})")
    c = out.shape[-1]
    rows = out.shape[:-1]
    for offset in range(0, c, BLOCK):
        n = min(BLOCK, c - offset)
        block = (start + offset) // BLOCK
        out[..., offset : offset + n] = stream(seed, purpose, round_index, block).standard_normal(rows + (n,))
    out *= std
    return out
