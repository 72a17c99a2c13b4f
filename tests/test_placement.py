"""Labels tied to position: ``partition.placement = "by-distance"`` (model §8, fl.partition.place_by_order)."""

import numpy as np
import pytest

from fl.partition import make_partition, place_by_order
from phy.cell import CellChannel
from phy.randomness import stream
from scenarios.config import scenario_from_dict
from scenarios.runs.setup import client_data

R, R0 = 500.0, 10.0
CELL = {"pathloss": "log-distance", "cell_radius": R, "cell_min_distance": R0, "scheme": "channel-inversion"}


def _config(placement="by-distance", *, kind="shards", S=1, M=20, seed=4, **phy):
    return scenario_from_dict({"data": {"name": "digits"}, "partition": {"kind": kind, "clients": M, "shards_per_client": S,
                                                                          "placement": placement},
                               "training": {"clients_per_round": 5}, "phy": {**CELL, **phy}, "run": {"seed": seed}})


def test_place_by_order_gives_the_kth_nearest_client_the_kth_lowest_mean_label():
    labels = np.array([3, 0, 2, 1, 0, 3, 1, 2])
    part = np.array([[0, 5], [1, 4], [2, 7], [3, 6]])  # mean labels 3, 0, 2, 1
    key = np.array([7.0, 1.0, 9.0, 4.0])  # client order by key: 1, 3, 0, 2
    out = place_by_order(labels, part, key)
    # client 1 (nearest) gets row 1 (mean 0), client 3 row 3 (mean 1), client 0 row 2 (mean 2), client 2 row 0 (mean 3)
    np.testing.assert_array_equal(out, part[[2, 1, 0, 3]])
    tied = place_by_order(np.array([0, 0, 1, 1]), np.array([[0, 2], [1, 3]]), np.array([2.0, 1.0]))  # equal means
    np.testing.assert_array_equal(tied, [[1, 3], [0, 2]])  # the lower row goes to the nearer client
    with pytest.raises(ValueError, match="one finite key per client"):
        place_by_order(labels, part, key[:3])


def test_by_distance_orders_the_run_clients_labels_along_the_documented_drop():
    """One shard per client: the clients' mean labels, read in the order of the distances computed from the model's
    drop formula d_c = √(r₀² + u_c(R² − r₀²)), u_c the first draw of stream (seed, "cell-drop", c), never
    decrease; the nearest client holds label 0 only and the farthest the top label. Fails if the placement used
    another seed's drop, the reverse order, or left the rows where they were."""
    cfg = _config()
    data, part, _, _ = client_data(cfg)
    M = part.shape[0]
    u = np.array([stream(4, "cell-drop", c).random(3)[0] for c in range(M)])
    d = np.sqrt(R0**2 + u * (R**2 - R0**2))
    order = np.argsort(d)
    means = data.y_train[part].mean(axis=1)[order]
    assert np.all(np.diff(means) >= 0) and means[-1] > means[0]
    assert set(data.y_train[part[order[0]]]) == {0} and set(data.y_train[part[order[-1]]]) == {data.num_classes - 1}
    np.testing.assert_allclose(CellChannel(cfg.phy, seed=4).large_scale(np.arange(M), K=M, round_index=3).distance, d,
                               rtol=1e-14)  # the channel the uplink uses has the same distances
    random = make_partition(data.y_train, M, kind="shards", seed=4, shards_per_client=1)
    assert sorted(map(tuple, part.tolist())) == sorted(map(tuple, random.tolist()))  # the same rows, re-placed
    again, rand_part, _, _ = client_data(_config("random"))
    np.testing.assert_array_equal(rand_part, random)  # "random" keeps client m on row m, bit for bit


@pytest.mark.parametrize("overrides, message", [
    ({"pathloss": "none"}, r"partition\.placement must be 'random' without a cell"),
    ({"redrop": True}, r"partition\.placement must be 'random' with phy\.redrop = true"),
])
def test_by_distance_is_refused_where_there_is_no_fixed_distance(overrides, message):
    with pytest.raises(ValueError, match=message):
        _config(**overrides)
    assert _config("random", **overrides).partition.placement == "random"


def test_by_distance_is_refused_for_a_population():
    with pytest.raises(ValueError, match=r"partition\.placement must be 'random' for data\.name = 'fedprox'"):
        scenario_from_dict({"data": {"name": "fedprox"}, "partition": {"placement": "by-distance"},
                            "training": {"local_steps": 2, "local_epochs": None, "batch_size": 10}, "phy": CELL})


def test_the_figure_heard_share_of_a_label_follows_the_drop_law():
    """figures.cell_placement.heard_shares: h_ℓ = Σ_c n_c,ℓ·e^(−g_th/β_eff,c) / Σ_c n_c,ℓ (model §8), with β_eff,c =
    (d_ref/d_c)ⁿ for a log-distance cell without shadowing (model §5.1), d_c from the documented drop stream and d_ref
    the median distance; the predicted admitted mean is K·mean_c e^(−g_th/β_eff,c). A histogram read by label
    instead of by client, or a gain taken as 1/β, fails."""
    from figures.cell_placement import heard_shares, predicted_admitted

    n, g_th, M, seed = 3.0, 0.7, 30, 2
    cfg = _config(M=M, seed=seed, pathloss_exponent=n, shadowing_db=0.0, g_th=g_th, snr_reference="median-distance")
    hist = stream(9, "test-hist").integers(0, 5, size=(M, 4))
    hist[:, 3] = 0  # a label nobody holds: NaN
    record = {"config": cfg.to_dict(), "seed": seed, "derived": {"partition": {"histograms": hist.tolist()}}}
    u = np.array([stream(seed, "cell-drop", c).random(3)[0] for c in range(M)])
    d = np.sqrt(R0**2 + u * (R**2 - R0**2))
    p = np.exp(-g_th / (np.sqrt((R**2 + R0**2) / 2) / d) ** n)
    want = [(p @ hist[:, j]) / hist[:, j].sum() for j in range(3)] + [np.nan]
    np.testing.assert_allclose(heard_shares(record), want, rtol=1e-9)
    assert predicted_admitted(record) == pytest.approx(5 * p.mean(), rel=1e-9)
    record["config"]["phy"]["scheme"] = "floras"
    assert heard_shares(record) is None  # FLORAS without CSIT hears every sampled client


def test_the_configuration_offers_exactly_the_placements_fl_implements():
    from fl.partition import PLACEMENTS as IMPLEMENTED
    from scenarios.config import PLACEMENTS as OFFERED

    assert IMPLEMENTED == OFFERED
