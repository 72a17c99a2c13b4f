"""Randomness keyed by logical indices (model §1, §5; project convention).

Every random draw of a simulation comes from a generator that is a pure function of
``(master_seed, purpose, *indices)`` — for example ``(seed, "fading", round)`` or
``(seed, "awgn-data", round, block)``. A result therefore does not depend on the chunk
size, the processing path, the order in which work is done or how it is split across
workers: the same logical draw always comes from the same stream.

The secret permutation key of model §4 is *not* derived from the master seed; it is a
separate secret (see :mod:`phy.assignment`).

Streams use numpy's counter-based Philox bit generator seeded through
:class:`numpy.random.SeedSequence` with ``entropy = master_seed`` and a ``spawn_key`` made
of a stable 32-bit identifier of the purpose string followed by the indices.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["purpose_id", "seed_sequence", "stream", "check_seed"]


def check_seed(seed: int, *, name: str = "seed") -> int:
    """Validate a master seed: an integer in [0, 2**63)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{name} must be an integer in [0, 2**63) (got {seed!r})")
    if not 0 <= int(seed) < 2**63:
        raise ValueError(f"{name} must be an integer in [0, 2**63) (got {seed})")
    return int(seed)


def purpose_id(purpose: str) -> int:
    """Stable 32-bit identifier of a purpose string (SHA-256, never Python's ``hash()``)."""
    if not purpose:
        raise ValueError("purpose must be a non-empty string")
    return int.from_bytes(hashlib.sha256(purpose.encode("utf-8")).digest()[:4], "big")


def seed_sequence(seed: int, purpose: str, *indices: int) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of one logical stream."""
    seed = check_seed(seed)
    key = [purpose_id(purpose)]
    for i in indices:
        i = int(i)
        if i < 0:
            raise ValueError(f"stream indices must be non-negative (got {i} for {purpose!r})")
        key.append(i)
    return np.random.SeedSequence(entropy=seed, spawn_key=tuple(key))


def stream(seed: int, purpose: str, *indices: int) -> np.random.Generator:
    """Generator for the logical stream ``(seed, purpose, *indices)``.

    Two calls with the same arguments return generators that produce identical draws;
    any change of the purpose or of an index gives an independent stream.
    """
    return np.random.Generator(np.random.Philox(seed_sequence(seed, purpose, *indices)))
