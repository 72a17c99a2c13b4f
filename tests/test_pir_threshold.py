"""The size threshold of the PIR submodel scheme (Kim & Lee §IV; model §9.6), against brute force.

The reference is a direct comparison of the two cost formulas at every s (scheme_symbols and
naive_symbols, exact Fractions), not the closed form under test.
"""

from fractions import Fraction

import pytest

from privacy.pir.costs import naive_symbols, scheme_symbols, smallest_winning_s, winning_threshold


@pytest.mark.parametrize("exclusive", ["mds", "shared"])
@pytest.mark.parametrize("r,N", [(4, 2), (4, 3), (5, 2), (6, 4), (3, 2), (2, 5), (8, 2)])
def test_threshold_matches_brute_force_comparison(r, N, exclusive):
    wins, ties = [], []
    for s in range(1, 601):
        diff = naive_symbols(r=r, s=s, N=N)["total"] - scheme_symbols(r=r, s=s, N=N, exclusive=exclusive)["total"]
        (wins if diff > 0 else ties if diff == 0 else []).append(s)
    t = winning_threshold(r=r, N=N, exclusive=exclusive)
    if t is None:
        assert wins == [] and ties == []
        assert smallest_winning_s(r=r, N=N, exclusive=exclusive) is None
        return
    assert t < 600  # every case above has its threshold inside the brute-force range
    assert wins == list(range(int(t) + 1, 601))  # the scheme wins exactly for s > s*
    assert ties == ([int(t)] if t.denominator == 1 else [])
    assert smallest_winning_s(r=r, N=N, exclusive=exclusive) == wins[0]


def test_the_documented_values():
    # r = 4, N = 2: β = 1/2 + 1/4 + 1/8 = 7/8, r − 3 − β = 1/8: s* = 2·4·8 = 64, shared 2·8·8 = 128
    assert winning_threshold(r=4, N=2) == Fraction(64)
    assert winning_threshold(r=4, N=2, exclusive="shared") == Fraction(128)
    assert winning_threshold(r=3, N=7) is None


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="N"):
        winning_threshold(r=4, N=1)
    with pytest.raises(ValueError, match="exclusive"):
        winning_threshold(r=4, N=2, exclusive="other")
