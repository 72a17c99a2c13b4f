"""Seeds, keyed streams and the logical noise blocks (phy.randomness, phy.blocks): exact expectations.

Written while triaging mutation-testing survivors (docs/testing.md): each assertion states the
documented contract with numbers computed here, not by the module.
"""

import hashlib

import numpy as np
import pytest

from phy.blocks import BLOCK, block_noise, block_ranges, chunk_ranges, fill_block_noise
from phy.randomness import check_seed, purpose_id, seed_sequence, stream


def test_seed_range_is_exactly_zero_to_two_to_the_63():
    for ok in (0, 1, 126, 10**6, 2**62, 2**63 - 1, np.int64(2**63 - 1)):
        assert check_seed(ok) == int(ok)
    for bad in (-1, 2**63, 2**64, True, 1.0, "3", None):
        with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, 2\*\*63\)"):
            check_seed(bad)
    with pytest.raises(ValueError, match="^run.seed"):
        check_seed(-5, name="run.seed")


def test_purpose_id_is_the_first_four_bytes_of_sha256():
    for purpose in ("fading", "data-order", "floras-despread-noise"):
        assert purpose_id(purpose) == int.from_bytes(hashlib.sha256(purpose.encode()).digest()[:4], "big")
    with pytest.raises(ValueError, match="^purpose"):
        purpose_id("")


def test_stream_is_philox_on_the_documented_seed_sequence():
    ss = np.random.SeedSequence(entropy=9, spawn_key=(purpose_id("x"), 3, 4))
    assert seed_sequence(9, "x", 3, 4).spawn_key == ss.spawn_key
    expected = np.random.Generator(np.random.Philox(ss)).standard_normal(6)
    np.testing.assert_array_equal(stream(9, "x", 3, 4).standard_normal(6), expected)
    with pytest.raises(ValueError, match="non-negative"):
        stream(9, "x", -1)


@pytest.mark.parametrize("d, chunk, expected", [
    (10000, 5000, [(0, 8192), (8192, 10000)]),
    (10000, 1, [(0, 4096), (4096, 8192), (8192, 10000)]),
    (4096, 4096, [(0, 4096)]),
    (3, 65536, [(0, 3)]),
    (20000, 9000, [(0, 12288), (12288, 20000)]),
])
def test_chunk_ranges_are_whole_blocks(d, chunk, expected):
    """Chunks hold ⌈chunk_size/BLOCK⌉·BLOCK slots (BLOCK = 4096), the last one the remainder."""
    assert BLOCK == 4096
    assert list(chunk_ranges(d, chunk)) == expected


def test_block_ranges_cover_the_chunk_by_logical_block():
    assert list(block_ranges(8192, 8192 + 5000)) == [(8192, 12288, 2), (12288, 13192, 3)]
    assert list(block_ranges(0, 10)) == [(0, 10, 0)]
    with pytest.raises(ValueError, match="multiple of 4096"):
        list(block_ranges(100, 200))


@pytest.mark.parametrize("start, c", [(0, 5000), (4096, 5000), (8192, 4096), (4096, 1)])
def test_fill_block_noise_is_the_logical_blocks_side_by_side(start, c):
    """Slots start..start+c−1 hold block m's draw (seed, purpose, round, m) at offset slot − m·BLOCK, scaled by std."""
    out = fill_block_noise(np.empty((2, c)), seed=4, purpose="p", round_index=6, start=start, std=0.25)
    for j in (0, c // 2, c - 1):
        slot = start + j
        m, off = divmod(slot, BLOCK)
        n = min(BLOCK, start + c - m * BLOCK)  # the block's length in this call (the last one may be cut)
        z = stream(4, "p", 6, m).standard_normal((2, n))
        np.testing.assert_allclose(out[:, j], 0.25 * z[:, off], rtol=0, atol=0)
    np.testing.assert_array_equal(block_noise((2,), 3, seed=4, purpose="p", round_index=6, block=1, std=2.0),
                                  2.0 * stream(4, "p", 6, 1).standard_normal((2, 3)))
