"""privacy.pir: the submodel-learning iterations, their counted costs and the source's totals (model §9.6)."""

from fractions import Fraction
from functools import partial

import numpy as np
import pytest

from privacy.pir.costs import client_multiplications, naive_symbols, scheme_symbols
from phy.randomness import stream
from privacy.pir.submodel import SubmodelPIRSystem, simulate


def beta(r, N):
    return sum((Fraction(1, N**k) for k in range(1, r)), Fraction(0))


def source_total(r, s, N):
    """model §9.6: 2r + (3 + β + rN)·s."""
    return 2 * r + (3 + beta(r, N) + r * N) * s


@pytest.mark.parametrize("exclusive", ["mds", "shared"])
@pytest.mark.parametrize("r,s,N", [(1, 3, 3), (2, 4, 2), (3, 16, 2), (2, 9, 3), (4, 16, 2)])
def test_iterations_recover_the_row_and_keep_databases_consistent(r, s, N, exclusive):
    system, recs = simulate(r=r, s=s, N=N, q=65537, iterations=7, streams=partial(stream, r + s), exclusive=exclusive)
    assert all(np.array_equal(rc.recovered, rc.true_row) for rc in recs)
    assert system.consistent()
    assert all(np.array_equal(system.stored[0], S) for S in system.stored)
    if r > 1:
        assert len({rc.d for rc in recs}) > 1  # several rows were trained
    # the stored matrix is not the true model once a nonzero update with a random α has been applied
    assert not np.array_equal(system.stored[0], system.B_true)


@pytest.mark.parametrize("r,s,N", [(2, 4, 2), (3, 16, 2), (2, 9, 3), (4, 16, 2), (3, 27, 3)])
def test_counted_symbols_match_the_formulas(r, s, N):
    _, recs = simulate(r=r, s=s, N=N, q=65537, iterations=3, streams=partial(stream, 0), exclusive="mds")
    rc = recs[-1]
    assert rc.download == {"exclusive": r + s, "pir": s * (1 + beta(r, N))}
    assert rc.upload == {"update": r * s * N, "exclusive": r + s}
    assert rc.total_symbols == source_total(r, s, N)
    assert rc.client_mults == 2 * (r + s) ** 2 + s + 2 * r * s
    assert rc.query_indices == r * s  # N^(r−1) indices of every row to every database, per segment of N^r
    _, recs = simulate(r=r, s=s, N=N, q=65537, iterations=2, streams=partial(stream, 0), exclusive="shared")
    assert recs[-1].total_symbols == source_total(r, s, N) + 2 * (N - 1) * r
    assert recs[-1].client_mults == 2 * s * s + s + 2 * r * s
    assert scheme_symbols(r=r, s=s, N=N)["total"] == source_total(r, s, N)
    assert client_multiplications(r=r, s=s) == 2 * (r + s) ** 2 + s + 2 * r * s


def test_reference_totals_of_the_source():
    ten = scheme_symbols(r=10, s=1000, N=2)["total"]
    assert ten == 2 * 10 + (3 + Fraction(511, 512) + 20) * 1000 and round(ten) == 24018
    assert naive_symbols(r=10, s=1000, N=2)["total"] == 30000
    assert scheme_symbols(r=3, s=1000, N=2)["total"] == 9756
    assert naive_symbols(r=3, s=1000, N=2)["total"] == 9000
    # the difference is 2r + (3 − r + β)s: the scheme loses for r ≤ 3 and wins from r = 4 (s = 1000, N = 2)
    for r in range(1, 12):
        diff = scheme_symbols(r=r, s=1000, N=2)["total"] - naive_symbols(r=r, s=1000, N=2)["total"]
        assert diff == 2 * r + (3 - r + beta(r, 2)) * 1000
        assert (diff > 0) == (r <= 3)


@pytest.mark.parametrize("kwargs,match", [
    (dict(r=0, s=4, N=2, q=7), "r must be"), (dict(r=2, s=4, N=1, q=7), "N must be"),
    (dict(r=2, s=0, N=2, q=7), "s must be"), (dict(r=2, s=8, N=2, q=7), "field too small"),
    (dict(r=2, s=6, N=2, q=11), "subpacketization"), (dict(r=2, s=4, N=2, q=8), "prime"),
])
def test_invalid_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SubmodelPIRSystem(**kwargs, streams=partial(stream, 0))
