"""Property-based tests (hypothesis) of the scenario validator and the command-line parsers (issue 16, item 4).

For every key of every scenario table: generated invalid values raise one ValueError, on one line,
that names the dotted key; generated valid values are accepted, stored as given, and survive the
``config.json`` form (``to_dict`` → JSON → :func:`scenario_from_dict`) unchanged. The same for the
options of ``floras link`` and ``floras privacy``: invalid values exit with status 2 and one line
naming the option, valid ones run and are echoed in the JSON they write.

Examples are bounded and deterministic (profile ``ci`` in ``tests/conftest.py``: 30 examples,
derandomized, no deadline); ``FLORAS_HYPOTHESIS_PROFILE=thorough`` runs 1000 random examples.
"""

import contextlib
import io
import json
import math

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from phy.config import RESOURCES, RHO_RULES  # noqa: E402
from phy.floras_params import CSIT_MODES, NOISE_ESTIMATES, PATHS, RECEIVERS, SEQUENCE_FAMILIES  # noqa: E402
from phy.schemes import scheme_names  # noqa: E402

SCHEMES = scheme_names()
from scenarios.cli.main import main  # noqa: E402
from scenarios.config import DATASETS, MODELS, PARTITIONS, PLACEMENTS, scenario_from_dict  # noqa: E402

# ------------------------------------------------------------------ building blocks
NOT_NUMBER = st.one_of(st.text(max_size=4), st.booleans(), st.none(), st.lists(st.integers(), max_size=2))
NOT_INT = st.one_of(NOT_NUMBER, st.floats(allow_nan=True, allow_infinity=True))
NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
FINITE = st.floats(allow_nan=False, allow_infinity=False)


def below(low):
    """Integers < low, or values that are not integers at all."""
    return st.one_of(st.integers(max_value=low - 1), NOT_INT)


def not_in(allowed):
    return st.one_of(st.text(max_size=12).filter(lambda s: s not in allowed), st.integers(), st.none())


def not_positive():
    """Numbers ≤ 0, non-finite numbers, non-numbers."""
    return st.one_of(st.floats(max_value=0.0, allow_nan=False), st.integers(max_value=0), NON_FINITE, NOT_NUMBER)


def outside_open_unit():
    return st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0, allow_nan=False), NON_FINITE,
                     NOT_NUMBER)


def positive(hi=1e12):
    return st.floats(min_value=1e-12, max_value=hi, allow_nan=False)


def is_power_of_two(n):
    return n >= 1 and n & (n - 1) == 0


def bad_int_list():
    return st.one_of(st.lists(st.one_of(st.integers(max_value=0), st.booleans(), st.text(max_size=2)), min_size=1, max_size=3)
                     .map(lambda xs: [2] + xs), st.integers(), st.text(max_size=3))


# Defaults: K = 20 of M = 100 clients, FLORAS with N = 30 ≤ L = 32 (Walsh–Hadamard), paper normalization.
INVALID = {
    "data.name": not_in(DATASETS),
    "data.dir": st.one_of(st.just(""), st.integers(), st.lists(st.text(), max_size=2)),
    "data.test_fraction": outside_open_unit(),
    "data.synthetic_samples": below(2),
    "data.synthetic_features": below(1),
    "data.synthetic_classes": below(2),
    "partition.kind": not_in(PARTITIONS),
    "partition.clients": below(1),  # 1 ≤ clients < K is named as training.clients_per_round's range
    "partition.shards_per_client": below(1),
    "partition.alpha": not_positive(),
    "partition.placement": not_in(PLACEMENTS),
    "model.name": not_in(MODELS),
    "model.hidden": bad_int_list(),
    "model.channels": bad_int_list(),
    "model.kernel_size": below(1),
    "training.clients_per_round": st.one_of(below(1), st.integers(min_value=101)),
    "training.lr": not_positive(),
    "training.batch_size": below(1),
    "training.local_epochs": below(1),
    "training.local_steps": below(1).filter(lambda v: v is not None),
    "training.eval_every": below(1),
    "training.train_eval_size": below(1),
    "training.client_chunk": below(1).filter(lambda v: v is not None),  # absent (None) = all K at once
    "training.server_momentum": st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=1.0, allow_nan=False),
                                          NON_FINITE, NOT_NUMBER),
    "training.mode": not_in(("fedavg", "prifedsync")),
    "training.sampling": not_in(("without-replacement", "poisson")),
    "phy.scheme": not_in(SCHEMES),
    "phy.floras.N": st.one_of(st.integers(max_value=19), st.integers(min_value=33), NOT_INT),
    "phy.L": st.one_of(st.integers(max_value=0), st.integers(min_value=1, max_value=10**6).filter(lambda n: not is_power_of_two(n)),
                       NOT_INT),
    "phy.snr_db": st.one_of(NON_FINITE, NOT_NUMBER),
    "phy.floras.sequences": not_in(SEQUENCE_FAMILIES),
    "phy.floras.csit": not_in(CSIT_MODES),
    "phy.floras.path": not_in(PATHS),
    "phy.floras.receiver": not_in(RECEIVERS),
    "phy.floras.receiver_cap": not_positive(),
    "phy.floras.noise_estimate": not_in(NOISE_ESTIMATES),
    "phy.normalization": not_in(("paper", "clip")),
    "phy.C": not_positive().filter(lambda v: v is not None),
    "phy.clip_norm": not_positive().filter(lambda v: v is not None),
    "phy.power": not_positive(),
    "phy.g_th": not_positive(),
    "phy.rho_rule": not_in(RHO_RULES),
    "phy.resource": not_in(RESOURCES),
    "phy.chunk_size": below(1),
    "phy.pathloss": not_in(("none", "log-distance", "umi", "uma", "rma")),
    "phy.cell_radius": st.one_of(st.floats(max_value=10.0, allow_nan=False), st.floats(min_value=1e5, exclude_min=True,
                                                                                       allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.cell_min_distance": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=250.0, allow_nan=False),
                                       NON_FINITE, NOT_NUMBER),
    "phy.redrop": st.one_of(st.integers(), st.text(max_size=4), st.none()),
    "phy.carrier_ghz": st.one_of(not_positive(), st.floats(min_value=100.0, exclude_min=True, allow_nan=False)),
    "phy.bs_height": st.one_of(st.floats(max_value=1.5, allow_nan=False), st.floats(min_value=1000.0, exclude_min=True,
                                                                                     allow_nan=False), NON_FINITE),
    "phy.ut_height": st.one_of(not_positive(), st.floats(min_value=100.0, exclude_min=True, allow_nan=False)),
    "phy.pathloss_exponent": st.one_of(not_positive(), st.floats(min_value=10.0, exclude_min=True, allow_nan=False)),
    "phy.shadowing_db": st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=30.0, exclude_min=True,
                                                                                           allow_nan=False), NON_FINITE),
    "phy.snr_reference": not_in(("cell-edge", "median-distance")),
    "phy.power_control": not_in(("full-power", "pathloss-inversion")),
    "phy.pc_target_db": st.one_of(st.floats(max_value=-100.0, exclude_max=True, allow_nan=False),
                                  st.floats(min_value=100.0, exclude_min=True, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.coherence_symbols": st.one_of(below(2).filter(lambda v: v is not None)),
    "phy.fading_correlation": not_in(("iid", "jakes", "jakes-exact", "tdl")),
    "phy.tdl_model": not_in(("A", "B", "C")),
    "phy.delay_spread": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1e-5, exclude_min=True,
                                                                                        allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.subcarrier_spacing": st.one_of(st.floats(max_value=0.0, allow_nan=False),
                                        st.floats(min_value=1e7, exclude_min=True, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.doppler": st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=0.5, exclude_min=True,
                                                                                      allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.rician_k": st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=1e4, exclude_min=True,
                                                                                       allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.tdl_time_blocks": below(1),
    "phy.los_doppler": st.one_of(st.floats(max_value=-1.0, exclude_max=True, allow_nan=False),
                                 st.floats(min_value=1.0, exclude_min=True, allow_nan=False), NON_FINITE,
                                 st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2)),
    "phy.floras.pilots": not_in(("per-block", "stale")),
    "phy.floras.receiver_scope": not_in(("round", "block")),
    "phy.floras.privacy_bound": not_in(("auto", "idealised", "law")),
    "phy.rx_antennas": below(1),
    "phy.timing_offset": st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=1.0, allow_nan=False),
                                   NON_FINITE, NOT_NUMBER),
    "phy.csi_error": st.one_of(st.floats(max_value=-1e-9, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.inversion_csit": not_in(("stale", "per-block", "per-subcarrier")),
    "privacy.delta": outside_open_unit(),
    "privacy.level": not_in(("client", "item")),
    "privacy.relation": not_in(("replace", "add-remove")),
    "run.rounds": below(1),
    "run.seed": st.one_of(st.integers(max_value=-1), st.integers(min_value=2**63), NOT_INT),
    "run.key_hex": st.one_of(st.binary(max_size=15).map(bytes.hex), st.text(min_size=1, max_size=40).filter(lambda s: not all(c in "0123456789abcdefABCDEF" for c in s)),
                             st.integers(), st.lists(st.text(), max_size=1)),
    "run.checkpoint_every": below(1),
    # keys of the calibration, the validation split and the model §9 schemes (validated whatever the scheme)
    "data.evaluate_on": not_in(("test", "validation")),
    "data.validation_fraction": st.one_of(st.floats(max_value=0.0, exclude_max=True, allow_nan=False),
                                          st.floats(min_value=1.0, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.ddgauss.beta": st.one_of(st.floats(max_value=0.0, exclude_max=True, allow_nan=False),
                                  st.floats(min_value=1.0, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.ddgauss.dropout": st.one_of(st.floats(max_value=0.0, exclude_max=True, allow_nan=False),
                                     st.floats(min_value=1.0, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.ddgauss.norm_bound": not_in(("general", "optimistic")),
    "phy.ddgauss.bits": st.one_of(below(2), st.integers(min_value=49)),
    "phy.ddgauss.grid": not_positive().filter(lambda v: v is not None),
    "phy.ddgauss.k_stddevs": not_positive(),
    "phy.ddgauss.local_std": st.one_of(st.floats(max_value=-1e-12, allow_nan=False), st.integers(max_value=-1), NON_FINITE,
                                  NOT_NUMBER),
    "phy.sqsgd.epsilon0": not_positive(),
    "phy.sqsgd.kappa": st.one_of(st.floats(allow_nan=True), st.booleans(), st.text(max_size=4)),
    "phy.central-gaussian.noise_multiplier": st.one_of(st.floats(max_value=-1e-12, allow_nan=False), st.integers(max_value=-1),
                                      NON_FINITE, NOT_NUMBER.filter(lambda v: v is not None)),
    "phy.sqsgd.estimator": not_in(("unbiased", "sparse")),
    "phy.sqsgd.levels": below(2),
    "phy.sqsgd.ratio": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0, exclude_min=True,
                              allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.sqsgd.norm_bound": not_in(("fixed", "adaptive")),
    "phy.sqsgd.epsilon_s": not_positive(),
    "phy.sqsgd.norm_levels": below(1),
    "phy.sqsgd.accumulation": st.one_of(st.integers(), st.floats(), st.text(max_size=4), st.none()),
    "phy.sqsgd.momentum": st.one_of(st.floats(max_value=0.0, exclude_max=True, allow_nan=False),
                                    st.floats(min_value=1.0, allow_nan=False), NON_FINITE, NOT_NUMBER),
    "phy.sqsgd.mechanism": not_in(("privquant", "pm")),
    "privacy.accountant": not_in(("rdp", "rdp-generic", "pld", "gdp")),
    "privacy.calibrated": st.one_of(st.text(max_size=4), st.integers(), st.floats(), st.lists(st.integers(), max_size=2)),
    "privacy.calibrate_key": not_in(("C", "N")).filter(lambda v: v is not None),
    "privacy.target_epsilon": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.integers(max_value=0),
                                        st.text(max_size=4).filter(lambda v: v != "inf")),
}

VALID = {
    "data.name": st.sampled_from([n for n in DATASETS if n != "fedprox"]),  # fedprox needs training.local_steps
    # and a batch ≤ data.fedprox.min_size (tests/test_synthetic.py)
    "data.dir": st.text(min_size=1, max_size=20),
    "data.test_fraction": st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True),
    "data.synthetic_samples": st.integers(2, 10**7),
    "data.synthetic_features": st.integers(1, 10**4),
    "data.synthetic_classes": st.integers(2, 1000),
    "partition.kind": st.sampled_from(PARTITIONS),
    "partition.clients": st.integers(20, 10**7),
    "partition.shards_per_client": st.integers(1, 1000),
    "partition.alpha": positive(),
    "partition.placement": st.just("random"),  # by-distance needs a cell (tests/test_placement.py)
    "model.name": st.sampled_from(MODELS),
    "model.hidden": st.lists(st.integers(1, 4096), max_size=4),
    "model.channels": st.lists(st.integers(1, 512), min_size=1, max_size=4),
    "model.kernel_size": st.integers(1, 15),
    "training.clients_per_round": st.integers(1, 30),
    "training.lr": positive(1e3),
    "training.batch_size": st.integers(1, 10**5),
    "training.local_epochs": st.integers(1, 1000),
    "training.local_steps": st.integers(1, 10**5),
    "training.eval_every": st.integers(1, 10**6),
    "training.train_eval_size": st.integers(1, 10**7),
    "training.client_chunk": st.one_of(st.none(), st.integers(1, 10**6)),
    "training.server_momentum": st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    "training.mode": st.just("fedavg"),  # prifedsync needs phy.scheme = "ideal" and item level (tests/test_prifedsync.py)
    "training.sampling": st.just("without-replacement"),  # poisson needs add-remove and no FLORAS (the default
    # scheme): tests/test_poisson_sampling.py
    "phy.scheme": st.sampled_from([sc for sc in SCHEMES if sc in ("floras", "channel-inversion", "ideal")]),  # the
    # private baselines and sqSGD need phy.normalization = "clip" (tests/test_baseline_runs.py)
    "phy.floras.N": st.integers(20, 32),
    "phy.L": st.integers(5, 16).map(lambda k: 2**k),
    "phy.snr_db": st.floats(min_value=-100.0, max_value=200.0),
    "phy.floras.sequences": st.sampled_from(SEQUENCE_FAMILIES),
    "phy.floras.csit": st.sampled_from(CSIT_MODES),
    "phy.floras.path": st.sampled_from(("auto", "fast", "chip")),
    "phy.floras.receiver": st.sampled_from(RECEIVERS),
    "phy.floras.receiver_cap": positive(1e6),
    "phy.floras.noise_estimate": st.sampled_from(NOISE_ESTIMATES),
    "phy.normalization": st.just("paper"),
    "phy.C": positive(1e6),
    "phy.clip_norm": positive(1e6),
    "phy.power": positive(1e6),
    "phy.g_th": positive(1e3),
    "phy.rho_rule": st.sampled_from(RHO_RULES),
    "phy.resource": st.sampled_from(RESOURCES),
    "phy.chunk_size": st.integers(1, 10**9),
    "phy.pathloss": st.just("none"),  # the cell with FLORAS: tests/test_cell.py, tests/test_floras_cell_privacy.py
    "phy.cell_radius": st.floats(min_value=10.0, max_value=1e5, exclude_min=True),
    "phy.cell_min_distance": st.floats(min_value=0.0, max_value=250.0, exclude_min=True, exclude_max=True),
    "phy.redrop": st.booleans(),
    "phy.carrier_ghz": st.floats(min_value=1e-3, max_value=100.0),
    "phy.bs_height": st.floats(min_value=1.5, max_value=1000.0, exclude_min=True),
    "phy.ut_height": st.floats(min_value=1e-3, max_value=100.0),
    "phy.pathloss_exponent": st.floats(min_value=1e-3, max_value=10.0),
    "phy.shadowing_db": st.floats(min_value=0.0, max_value=30.0),
    "phy.snr_reference": st.sampled_from(("cell-edge", "median-distance")),
    "phy.power_control": st.sampled_from(("full-power", "pathloss-inversion")),
    "phy.pc_target_db": st.floats(min_value=-100.0, max_value=100.0),
    "phy.coherence_symbols": st.none(),  # likewise coherence blocks (tests/test_cell.py)
    "phy.fading_correlation": st.sampled_from(("iid", "jakes", "jakes-exact")),  # "tdl" needs coherence blocks
    "phy.tdl_model": st.sampled_from(("A", "B", "C")),
    "phy.delay_spread": st.floats(min_value=1e-12, max_value=1e-5),
    "phy.subcarrier_spacing": st.floats(min_value=1e-3, max_value=1e7),
    "phy.doppler": st.floats(min_value=0.0, max_value=0.5),
    "phy.rician_k": st.just(0.0),  # likewise Rician fading (tests/test_cell.py)
    "phy.tdl_time_blocks": st.just(1),  # > 1 needs fading_correlation = "tdl" (tests/test_tdl_doppler.py)
    "phy.los_doppler": st.none(),  # a value needs a line of sight and blocks in time (tests/test_los_doppler.py)
    "phy.floras.pilots": st.sampled_from(("per-block", "stale")),
    "phy.floras.receiver_scope": st.sampled_from(("round", "block")),
    "phy.floras.privacy_bound": st.sampled_from(("auto", "idealised")),  # "law" needs pld: tests/test_floras_timing_law.py
    "phy.timing_offset": st.just(0.0),  # FLORAS (the default scheme) has no ε with offsets: tests/test_cell.py
    "phy.rx_antennas": st.just(1),  # likewise several receive antennas (tests/test_antennas.py)
    "phy.csi_error": st.just(0.0),  # > 0 for channel inversion only (tests/test_csi_error.py)
    "phy.inversion_csit": st.just("stale"),  # the default scheme is FLORAS; the other modes: tests/test_csit_blocks.py
    "privacy.delta": st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True),
    "privacy.level": st.sampled_from(("client", "item")),
    "privacy.relation": st.just("replace"),  # add-remove needs level = item at client sampling without replacement
    "run.rounds": st.integers(1, 10**6),
    "run.seed": st.integers(0, 2**63 - 1),
    "run.key_hex": st.binary(min_size=16, max_size=40).map(bytes.hex),
    "run.checkpoint_every": st.integers(1, 10**6),
    "data.evaluate_on": st.just("test"),  # "validation" needs data.validation_fraction > 0
    "data.validation_fraction": st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    "phy.ddgauss.beta": st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    "phy.ddgauss.dropout": st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    "phy.ddgauss.norm_bound": st.sampled_from(("general", "optimistic")),
    "phy.ddgauss.bits": st.integers(2, 48),
    "phy.ddgauss.grid": positive(1e6),
    "phy.ddgauss.k_stddevs": positive(1e6),
    "phy.ddgauss.local_std": st.floats(min_value=0.0, max_value=1e6),
    "phy.sqsgd.epsilon0": positive(1e3),
    "phy.sqsgd.kappa": st.integers(-10**6, 10**6),  # its range [−n, n − 1] is checked once d is known
    "phy.central-gaussian.noise_multiplier": st.floats(min_value=0.0, max_value=1e6),
    "phy.sqsgd.estimator": st.sampled_from(("unbiased", "sparse")),
    "phy.sqsgd.levels": st.integers(2, 2**16),
    "phy.sqsgd.ratio": st.floats(min_value=0.0, max_value=1.0, exclude_min=True),
    "phy.sqsgd.norm_bound": st.sampled_from(("fixed", "adaptive")),
    "phy.sqsgd.epsilon_s": positive(1e3),
    "phy.sqsgd.norm_levels": st.integers(1, 10**6),
    "phy.sqsgd.accumulation": st.booleans(),  # true needs estimator = "sparse": checked for the configured scheme only
    "phy.sqsgd.momentum": st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    "phy.sqsgd.mechanism": st.sampled_from(("privquant", "pm")),
    "privacy.accountant": st.sampled_from(("rdp", "rdp-generic")),  # gdp refuses FLORAS; pld calibrations take seconds each
    "privacy.calibrated": st.just({}),
    "privacy.calibrate_key": st.sampled_from(("C", "N")),
    "privacy.target_epsilon": st.just(8.0),  # a valid target calibrates the scheme (seconds): one example
}


def _scheme_keys() -> set[str]:
    """``phy.<scheme>.<key>`` of every built-in scheme's sub-table (phy.schemes.BUILTIN_MODULES)."""
    from dataclasses import fields

    from phy.schemes import BUILTIN_MODULES, scheme_spec

    out = set()
    for name in SCHEMES:
        spec = scheme_spec(name)
        if spec.params is not None and spec.aggregator.__module__ in BUILTIN_MODULES:
            out |= {f"phy.{name}.{f.name}" for f in fields(spec.params)}
    return out


def test_every_key_has_both_strategies():
    cfg = scenario_from_dict({}).to_dict()
    keys = {f"{table}.{key}" for table, values in cfg.items() for key, v in values.items() if not isinstance(v, dict)}
    keys |= _scheme_keys()
    # the analog Gaussian's noise multiplier has the central one's law (the same parameter class)
    assert keys - {"phy.analog-gaussian.noise_multiplier"} == set(INVALID) == set(VALID)


def _set(dotted, value):
    parts = dotted.split(".")
    if len(parts) == 3:
        return {parts[0]: {parts[1]: {parts[2]: value}}}
    return {parts[0]: {parts[1]: value}}


def _get(cfg, dotted):
    parts = dotted.split(".")
    if len(parts) == 3:
        return getattr(cfg.phy.of(parts[1]), parts[2])
    return getattr(getattr(cfg, parts[0]), parts[1])


@pytest.mark.parametrize("dotted", sorted(INVALID))
def test_invalid_value_gives_one_clean_error_naming_the_key(dotted):
    @given(INVALID[dotted])
    def check(value):
        with pytest.raises(ValueError) as info:
            scenario_from_dict(_set(dotted, value))
        msg = str(info.value)
        assert dotted in msg, msg
        assert "\n" not in msg

    check()


@pytest.mark.parametrize("dotted", sorted(VALID))
def test_valid_value_is_accepted_and_round_trips_through_config_json(dotted):
    @given(VALID[dotted])
    def check(value):
        cfg = scenario_from_dict(_set(dotted, value))
        stored = _get(cfg, dotted)
        assert stored == (tuple(value) if isinstance(value, list) else value)
        again = scenario_from_dict(json.loads(json.dumps(cfg.to_dict())))
        assert again == cfg

    check()


def _scheme_field_names() -> set[str]:
    return {d.split(".")[2] for d in _scheme_keys()} | {"floras", "ddgauss", "sqsgd", "central-gaussian", "analog-gaussian"}


@given(st.sampled_from(["replace", "add-remove"]), st.integers(1, 50), st.integers(1, 100))
def test_item_level_relations_and_local_steps_are_accepted(relation, steps, batch):
    cfg = scenario_from_dict({"privacy": {"level": "item", "relation": relation},
                              "training": {"local_steps": steps, "batch_size": batch}})
    assert cfg.training.local_epochs is None and cfg.training.local_steps == steps
    assert scenario_from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


@given(st.sampled_from(sorted(VALID)), st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10))
def test_unknown_keys_are_named(dotted, extra):
    table = dotted.split(".")[0]
    if extra in {d.split(".")[1] for d in VALID if d.startswith(table + ".")} or extra in _scheme_field_names():
        return
    with pytest.raises(ValueError, match=f"unknown key {table}.{extra}"):
        scenario_from_dict({table: {extra: 1}})


# ------------------------------------------------------------------ command-line parsers
def _cli(argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(argv)
    return rc, err.getvalue().strip(), out.getvalue()


def _text(v):
    return repr(v) if isinstance(v, float) else str(v)


def _names(option):
    bare = option.lstrip("-")
    return (bare, bare.replace("-", "_"))


LINK_INVALID = {
    "--K": st.one_of(st.integers(max_value=0), st.text(min_size=1, max_size=3).filter(lambda s: not s.strip().lstrip("-+").isdigit())),
    "--N": st.one_of(st.integers(max_value=19), st.integers(33, 10**6)),
    "--L": st.one_of(st.integers(max_value=0), st.integers(33, 10**5).filter(lambda n: not is_power_of_two(n))),
    "--d": st.integers(max_value=0),
    "--snr-db": st.sampled_from(["nan", "inf", "-inf", "abc"]),
    "--rounds": st.integers(max_value=0),
    "--seed": st.one_of(st.integers(max_value=-1), st.integers(min_value=2**63)),
    "--g-th": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.sampled_from(["nan", "inf"])),
    "--chunk-size": st.integers(max_value=0),
    "--clip-norm": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.sampled_from(["nan", "inf"])),
    "--key-hex": st.one_of(st.binary(max_size=15).map(bytes.hex), st.just("zz" * 16)),
}


@pytest.mark.parametrize("option", sorted(LINK_INVALID))
def test_link_invalid_option_exits_2_with_one_line_naming_it(option):
    @settings(max_examples=15)
    @given(LINK_INVALID[option])
    def check(value):
        rc, err, _ = _cli(["link", "--rounds", "1", "--d", "4", f"{option}={_text(value)}"] if option != "--rounds"
                          else ["link", "--d", "4", f"{option}={_text(value)}"])
        assert rc == 2
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert any(name in err for name in _names(option)), err

    check()


LINK_VALID = {
    "--K": st.integers(1, 30),
    "--N": st.integers(20, 32),
    "--L": st.integers(5, 9).map(lambda k: 2**k),
    "--snr-db": st.floats(min_value=-30.0, max_value=100.0),
    "--seed": st.integers(0, 2**63 - 1),
    "--chunk-size": st.integers(1, 10**7),
}


@pytest.mark.parametrize("option", sorted(LINK_VALID))
def test_link_valid_option_runs_and_is_echoed_in_the_json(option, tmp_path):
    path = tmp_path / "link.json"

    @settings(max_examples=6)
    @given(LINK_VALID[option])
    def check(value):
        rc, err, _ = _cli(["link", "--scheme", "floras", "--rounds", "1", "--d", "4", f"{option}={_text(value)}",
                           "--json", str(path)])
        assert rc == 0, err
        params = json.loads(path.read_text())["parameters"]
        assert params[option.lstrip("-").replace("-", "_")] == value

    check()


PRIVACY_INVALID = {
    "--K": st.integers(max_value=0),
    "--N": st.integers(0, 19),  # N < K = 20
    "--M": st.integers(max_value=0),
    "--rounds": st.integers(max_value=-1),
    "--delta": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0, allow_nan=False),
                         st.sampled_from(["nan"])),
    "--d": st.integers(max_value=0),
    "--C": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.sampled_from(["nan", "inf"])),
    "--power": st.one_of(st.floats(max_value=0.0, allow_nan=False), st.sampled_from(["nan", "inf"])),
    "--sensitivity": st.one_of(st.floats(max_value=-1e-300, allow_nan=False), st.sampled_from(["nan", "inf"])),
    "--local-steps": st.integers(max_value=0),
}


@pytest.mark.parametrize("option", sorted(PRIVACY_INVALID))
def test_privacy_invalid_option_exits_2_with_one_line_naming_it(option):
    @settings(max_examples=15)
    @given(PRIVACY_INVALID[option])
    def check(value):
        argv = ["privacy", f"{option}={_text(value)}"]
        if option != "--d":
            argv += ["--d", "10"]
        rc, err, _ = _cli(argv)
        assert rc == 2
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert any(name in err for name in _names(option)), err

    check()


@settings(max_examples=20)
@given(K=st.integers(1, 30), extra=st.integers(0, 10**6), M_extra=st.integers(0, 10**6), rounds=st.integers(0, 10**4),
       delta=st.floats(min_value=1e-300, max_value=1.0, exclude_max=True), d=st.integers(1, 10**8))
def test_privacy_valid_options_run_and_round_trip(K, extra, M_extra, rounds, delta, d, tmp_path_factory):
    path = tmp_path_factory.mktemp("privacy") / "report.json"
    rc, err, out = _cli(["privacy", f"--K={K}", f"--N={K + extra}", f"--M={K + M_extra}", f"--rounds={rounds}",
                         f"--delta={delta!r}", f"--d={d}", "--json", str(path)])
    assert rc == 0, err
    rep = json.loads(path.read_text())
    assert rep["delta"] == delta and rep["rounds"] == rounds and rep["gamma"] == extra
    eps = rep["epsilon"]
    assert eps == "inf" or eps >= 0.0
    assert "assumptions:" in out
