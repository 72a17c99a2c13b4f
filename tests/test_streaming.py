"""Streaming aggregation: ``aggregate_stream`` over a round's chunks equals ``aggregate`` on their concatenation.

Every scheme keeps running sums over the chunks in client order (phy.aggregation, streaming), so the result must be
the same bit for bit (np.array_equal, equal diagnostics) for chunks of 1, 3 and K clients; a wrong row offset, a
chunk-local mean, a sum over the wrong clients or a per-chunk partial sum combined in another order breaks it.
"""

import csv
import math

import numpy as np
import pytest

from fl.federated import FederatedAveraging, NonFiniteModelError
from fl.training import ClientChunk
from phy.aggregation import AggregationResult, concatenate_chunks, stream_chunks, supports_streaming
from phy.config import PhyConfig
from phy.schemes import make_aggregator, scheme_names, scheme_spec

K, D, ROUNDS = 7, 40, 3
KEY = b"streaming-test-key"

CASES = [
    ("ideal", {}),
    ("ideal", {"normalization": "paper"}),  # C_max over all K: the explicit concatenating fallback
    ("central-gaussian", {}),
    ("channel-inversion", {"g_th": 0.6}),  # e^{-0.6} ≈ 55 % admitted: the admitted subset is a proper one
    ("channel-inversion", {"g_th": 0.6, "rho_rule": "min-admitted"}),
    ("analog-gaussian", {"g_th": 0.6}),
    # receive antennas (model §5.2): the combiner's effective channel decides admission; FLORAS combines per antenna
    ("channel-inversion", {"g_th": 0.6, "rx_antennas": 4}),
    ("analog-gaussian", {"g_th": 0.6, "rx_antennas": 3}),
    ("floras", {"floras": {"N": 10}, "rx_antennas": 4}),
    ("floras", {"floras": {"N": 10}}),  # sufficient path (orthonormal, untraced)
    ("floras", {"floras": {"N": 10, "path": "fast"}}),  # needs every s_k: concatenated
    ("floras", {"normalization": "paper", "floras": {"N": 10}}),
    ("ddgauss", {"ddgauss": {"bits": 20, "local_std": 0.05, "dropout": 0.3}}),
    ("sqsgd", {}),
    ("sqsgd", {"sqsgd": {"levels": 4, "epsilon0": 4.0, "accumulation": True, "estimator": "sparse",
                        "norm_bound": "adaptive"}}),
    ("sqsgd", {"sqsgd": {"mechanism": "pm", "epsilon0": 4.0}}),
]


def _config(scheme, extra):
    base = {"normalization": "clip", "clip_norm": 1.0, "snr_db": 5.0, "L": 16, **scheme_spec(scheme).example}
    for k, v in extra.items():
        base[k] = {**base.get(k, {}), **v} if isinstance(v, dict) else v
    return PhyConfig.make(scheme=scheme, **base)


def _chunks(x, c):
    return [(np.arange(a, min(a + c, len(x))), x[a:a + c].copy()) for a in range(0, len(x), c)]


def _same(a: AggregationResult, b: AggregationResult) -> bool:
    diag_a, diag_b = dict(a.diagnostics), dict(b.diagnostics)
    return (np.array_equal(a.sum_estimate, b.sum_estimate) and a.contributors == b.contributors
            and (a.error == b.error or (math.isnan(a.error) and math.isnan(b.error)))
            and diag_a.keys() == diag_b.keys()
            and all(diag_a[k] == diag_b[k] or (math.isnan(diag_a[k]) and math.isnan(diag_b[k])) for k in diag_a))


def _rounds(seed=11):
    rng = np.random.default_rng(seed)
    for t in range(ROUNDS):
        # norms from 0.1 to 3 around clip_norm 1: some rows clipped, some not; a common offset makes μ_k matter
        x = rng.standard_normal((K, D)) * rng.uniform(0.02, 0.5, (K, 1)) + rng.normal(0, 0.3, (K, 1))
        yield t, x, rng.choice(10_000, size=K, replace=False)


@pytest.mark.parametrize("scheme, extra", CASES, ids=[f"{s}-{i}" for i, (s, _) in enumerate(CASES)])
def test_stream_equals_aggregate_on_the_concatenation_bit_for_bit(scheme, extra):
    cfg = _config(scheme, extra)
    ref = make_aggregator(cfg, K=K, d=D, seed=4, key=KEY)
    streams = {c: make_aggregator(cfg, K=K, d=D, seed=4, key=KEY) for c in (1, 3, K)}  # stateful schemes: own rounds
    contributors = []
    for t, x, ids in _rounds():
        want = ref.aggregate(x, round_index=t, clients=ids)
        contributors.append(want.contributors)
        for c, agg in streams.items():
            got = agg.aggregate_stream(_chunks(x, c), round_index=t, clients=ids)
            assert _same(got, want), (scheme, extra, t, c)
    if scheme in ("channel-inversion", "analog-gaussian"):
        assert 0 < min(contributors) and max(contributors) < K or len(set(contributors)) > 1, contributors


def test_every_built_in_scheme_streams():
    # a built-in scheme without the streaming form would silently be gathered into K×d in a run
    built_in = [n for n in scheme_names() if scheme_spec(n).aggregator.__module__.startswith("phy.")]
    assert {"ideal", "floras", "channel-inversion", "analog-gaussian", "central-gaussian", "ddgauss", "sqsgd"} <= set(built_in)
    for name in built_in:
        assert supports_streaming(make_aggregator(_config(name, {}), K=K, d=D, seed=0, key=KEY)), name
    assert {s for s, _ in CASES} == set(built_in)  # and every one is compared above


def test_chunks_must_be_the_sampled_order_and_complete():
    x = np.arange(K * D, dtype=float).reshape(K, D)
    np.testing.assert_array_equal(concatenate_chunks(_chunks(x, 3), K=K, d=D), x)
    swapped = _chunks(x, 3)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    with pytest.raises(ValueError, match="consecutive positions 0..2"):
        list(stream_chunks(swapped, K=K, d=D))
    with pytest.raises(ValueError, match="the chunks hold 6 clients; the round has K = 7"):
        list(stream_chunks(_chunks(x, 3)[:2], K=K, d=D))
    bad = _chunks(x, 3)
    bad[1][1][0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        list(stream_chunks(bad, K=K, d=D))


@pytest.mark.parametrize("scheme, extra", [c for c in CASES  # every streaming form (paper and fast concatenate)
                                            if "normalization" not in c[1] and "path" not in c[1].get("floras", {})])
def test_streams_do_not_depend_on_the_chunk_size_at_the_mlp_dimension(scheme, extra):
    """At d = 159 010 (the Fashion-MNIST MLP) numpy's kernels take paths they do not take at d = 40: a row's norm
    must not depend on the rows it shares a chunk with (a 2-D einsum's does: its buffering crosses rows), so chunks
    of 1, 3 and K give the concatenation's numbers bit for bit (issue: results independent of the chunk size)."""
    d = 159_010
    cfg = _config(scheme, extra)
    rng = np.random.default_rng(3)
    # norms from 0.2 to 5 around clip_norm 1 and an offset below the norm (d·μ_k² < ‖x_k − μ_k‖²): clipped and
    # unclipped rows, μ_k matters
    x = rng.standard_normal((K, d)) * rng.uniform(0.2, 5.0, (K, 1)) / np.sqrt(d) + rng.normal(0, 0.5, (K, 1)) / np.sqrt(d)
    ids = rng.choice(10_000, size=K, replace=False)
    want = make_aggregator(cfg, K=K, d=d, seed=4, key=KEY).aggregate(x, round_index=0, clients=ids)
    for c in (1, 3, K):
        got = make_aggregator(cfg, K=K, d=d, seed=4, key=KEY).aggregate_stream(_chunks(x, c), round_index=0, clients=ids)
        assert _same(got, want), (scheme, extra, c)


@pytest.mark.parametrize("scheme, extra", CASES, ids=[f"{s}-{i}" for i, (s, _) in enumerate(CASES)])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_every_stream_refuses_a_non_finite_update_wherever_it_is(scheme, extra, bad):
    """The clip consumers check finiteness through their first pass (stream_chunks(finite=False)): a NaN or ±∞ in
    any row, first, middle or last element, of any chunk is still refused with the stream's message, and an
    admitted or dropped client makes no difference (channel inversion reads every row's mean)."""
    cfg = _config(scheme, extra)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((K, D)) * 0.3
    for row, col in [(0, 0), (3, D // 2), (K - 1, D - 1)]:
        y = x.copy()
        y[row, col] = bad
        agg = make_aggregator(cfg, K=K, d=D, seed=4, key=KEY)
        with pytest.raises(ValueError, match="updates must be finite"):
            agg.aggregate_stream(_chunks(y, 3), round_index=0, clients=np.arange(K))


def test_finite_updates_whose_row_sums_overflow_are_not_refused():
    """Every element finite but a row's sum ±∞ (the mean check's only false alarm): the full check clears it, as
    the stream's own check did."""
    x = np.full((K, D), 1e307)
    agg = make_aggregator(_config("ideal", {}), K=K, d=D, seed=4, key=KEY)
    with np.errstate(over="ignore", invalid="ignore"):
        agg.aggregate_stream(_chunks(x, 3), round_index=0)


class _ChunkTrainer:
    """Yields fixed updates in chunks of c (and counts how many were produced)."""

    def __init__(self, x, c):
        self.x, self.c, self.yielded = x, c, 0

    def train_chunks(self, w, clients, round_index):
        for a in range(0, len(clients), self.c):
            self.yielded += 1
            upd = self.x[a:a + self.c]
            yield ClientChunk(clients[a:a + self.c], upd, np.full(len(upd), float(a)))


def test_fedavg_streams_chunks_and_stops_at_a_non_finite_chunk():
    x = next(_rounds())[1]
    cfg = _config("ideal", {})
    outcomes = []
    for c in (1, 3, K):
        fed = FederatedAveraging(trainer=_ChunkTrainer(x, c), aggregator=make_aggregator(cfg, K=K, d=D, seed=0),
                                 M=50, K=K, seed=2)
        w, out = fed.step(np.zeros(D), 0)
        outcomes.append((w, out.local_loss))
    for w, loss in outcomes[1:]:
        assert np.array_equal(w, outcomes[0][0])
    # the loss of client k is the start index of its chunk: mean over the 7 clients
    assert outcomes[1][1] == pytest.approx(np.mean([0, 0, 0, 3, 3, 3, 6]))
    bad = x.copy()
    bad[4, 2] = np.inf
    trainer = _ChunkTrainer(bad, 3)
    fed = FederatedAveraging(trainer=trainer, aggregator=make_aggregator(cfg, K=K, d=D, seed=0), M=50, K=K, seed=2)
    with pytest.raises(NonFiniteModelError, match="round 1: local training of client"):
        fed.step(np.zeros(D), 0)
    assert trainer.yielded == 2  # stopped at the chunk holding row 4, before training the third


def _metrics(run_dir):
    with open(run_dir / "metrics.csv", newline="") as fh:
        return [{k: v for k, v in row.items() if k != "wall_time_s"} for row in csv.DictReader(fh)]


@pytest.mark.parametrize("scheme, extra", [
    ("floras", {}),
    ("channel-inversion", {"phy.snr_db": 10.0}),
    ("ddgauss", {"phy.ddgauss.bits": 20, "phy.ddgauss.local_std": 0.05}),
])
def test_a_run_in_chunks_of_three_streams_to_the_metrics_of_the_concatenating_path(tmp_path, monkeypatch, scheme, extra):
    # The run's aggregation path alone is compared (the same trained updates either way): client_chunk = 3 streamed
    # chunk by chunk against the same chunks gathered into one K×d array. (client_chunk = 3 against unset also
    # changes the trainer's batched calls, whose float32 results are not chunk-invariant for every configuration;
    # see docs/fl.md "Streaming aggregation".)
    from pathlib import Path

    import fl.federated
    from scenarios.config import load_scenario
    from scenarios.runs.run import run_scenario

    toml = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "digits_quick.toml"
    cfg = load_scenario(toml, {"phy.scheme": scheme, "phy.normalization": "clip", "phy.clip_norm": 1.0, "run.rounds": 2,
                               "training.client_chunk": 3, **extra})
    run_scenario(cfg, tmp_path / "stream", progress=False)
    monkeypatch.setattr(fl.federated, "supports_streaming", lambda aggregator: False)
    run_scenario(cfg, tmp_path / "whole", progress=False)
    rows = [_metrics(tmp_path / "stream"), _metrics(tmp_path / "whole")]
    assert len(rows[0]) == 2 and rows[0] == rows[1]


@pytest.mark.parametrize("d", [40, 1000, 32_768, 32_769, 65_545, 159_010])
def test_clipped_rows_give_normalize_bit_for_bit_at_every_length(d):
    # the streaming receivers normalize row by row (phy.normalization.clipped_rows); above 8 and 128 entries numpy's
    # pairwise sums take other paths, so lengths of both sides are checked, with clipped, unclipped and zero rows
    from phy.normalization import clipped_rows, normalize

    rng = np.random.default_rng(d)
    spread = np.array([[0.5], [2.5], [0.8], [3.0], [1.0], [0.6]])  # centred norms ≈ these around R = 1
    x = rng.standard_normal((6, d)) * spread / np.sqrt(d) + rng.normal(0, 0.2, (6, 1))
    x[4] = 0.7  # a constant row: centred to zero, factor 1
    C = float(np.sqrt(d))
    want = normalize(x, rule="clip", C=C, clip_norm=1.0)
    for rows in (None, np.array([0, 2, 4, 5])):
        got = clipped_rows(x, C=C, clip_norm=1.0, rows=rows)
        seen = [(j, s.copy()) for j, s in got]
        assert [j for j, _ in seen] == (list(range(6)) if rows is None else rows.tolist())
        assert all(np.array_equal(s, want.s[j]) for j, s in seen)
        assert np.array_equal(got.mu, want.mu) and got.scale == want.scale
    norms = np.linalg.norm(want.s, axis=1)
    clipped = np.isclose(norms, C, rtol=1e-12)
    assert norms.max() <= C * (1 + 1e-12) and clipped.any() and (norms[[0, 2, 5]] < C * 0.9).all()


@pytest.mark.parametrize("leaf", [128, 1000, 32_768])
def test_the_pairwise_plan_sums_as_numpy_does(leaf):
    """clipped_rows sums each centred norm leaf by leaf of numpy's pairwise tree (phy.normalization.pairwise_plan):
    the same double as np.add.reduce of the whole vector at lengths around the split points and the leaf size, for
    values of mixed magnitude and sign (where another order, e.g. leaves summed left to right, loses other bits)."""
    from phy.normalization import _centred_square_sum, pairwise_plan

    rng = np.random.default_rng(leaf)
    lengths = [129, 255, 256, 257, 1000, 1001, 4810, 8192, 8193, 32_767, 32_768, 32_769, 65_536 + 9, 159_010]
    differs = 0
    for n in lengths:
        for _ in range(5):
            v = rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))
            mu = float(rng.normal())
            want = np.add.reduce((v - mu) * (v - mu))
            got = _centred_square_sum(v, mu, pairwise_plan(n, leaf), np.empty(min(n, leaf)))
            assert got == want, (n, leaf)
            sq = (v - mu) * (v - mu)
            differs += sum(np.add.reduce(sq[a:a + leaf]) for a in range(0, n, leaf)) != want
    assert differs > 0 or leaf >= 159_010  # the tree's order matters: summing plain blocks would not pass
    with pytest.raises(ValueError, match="leaf must be ≥ 128"):
        pairwise_plan(1000, 64)
