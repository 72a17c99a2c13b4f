"""Chunk-invariant noise: draws in fixed logical blocks of the d data slots.

The d data slots are split into logical blocks of :data:`BLOCK` = 4096 consecutive entries.
The noise of block m of round t comes from the keyed stream ``(seed, purpose, t, m)`` and has
a fixed shape (rows × length of the block), so it does not depend on how the d slots are
grouped for processing. Processing chunks are whole numbers of blocks
(:func:`chunk_ranges`), and the links consume noise block by block, so any ``chunk_size``
gives bit-identical results.
"""

from __future__ import annotations

import numpy as np

from .randomness import stream

__all__ = ["BLOCK", "chunk_ranges", "block_ranges", "block_noise", "fill_block_noise"]

BLOCK = 4096


def chunk_ranges(d: int, chunk_size: int):
    """Yield (start, stop) of processing chunks of the d slots; chunks hold ⌈chunk_size/BLOCK⌉·BLOCK slots."""
    step = max(1, -(-int(chunk_size) // BLOCK)) * BLOCK
    for start in range(0, int(d), step):
        yield start, min(start + step, int(d))


def block_ranges(start: int, stop: int):
    """Yield (a, z, m): the logical blocks m covering slots [start, stop); start is a multiple of BLOCK."""
    if start % BLOCK:
        raise ValueError(f"start must be a multiple of {BLOCK} (got {start})")
    for a in range(start, stop, BLOCK):
        yield a, min(a + BLOCK, stop), a // BLOCK


def block_noise(rows: tuple[int, ...], n: int, *, seed: int, purpose: str, round_index: int, block: int,
                std: float) -> np.ndarray:
    """N(0, std²) noise of logical block ``block``: a fresh float64 array of shape rows + (n,)."""
    z = stream(seed, purpose, round_index, block).standard_normal(tuple(rows) + (n,))
    z *= std
    return z


def fill_block_noise(out: np.ndarray, *, seed: int, purpose: str, round_index: int, start: int, std: float) -> np.ndarray:
    """Fill ``out`` [rows, c] (or [c]) with the noise of slots start..start+c−1 (start a multiple of BLOCK)."""
    c = out.shape[-1]
    rows = out.shape[:-1]
    for a, z, m in block_ranges(start, start + c):
        out[..., a - start : z - start] = block_noise(rows, z - a, seed=seed, purpose=purpose,
                                                      round_index=round_index, block=m, std=std)
    return out
