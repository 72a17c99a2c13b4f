"""The Python API: the few entry points a research script calls (docs/api.md).

Example::

    from scenarios import api

    api.link_study(["floras", "ideal"], K=10, d=200, rounds=20, snr_db=20, floras={"N": 16})
    api.account("gaussian", rounds=100, K=20, M=100, clip_norm=1.0, noise_std=2.0).epsilon
    cal = api.calibrate({"phy": {"scheme": "central-gaussian", "normalization": "clip"}}, 8.0)
    rows = api.run("scenarios/examples/digits_quick.toml", out="runs/q", overrides={"run.rounds": 3})

Units and conventions are those of docs/model.md ("model §N"): SNR = P/σ² in dB (model §5),
NMSE = ‖x̂ − Σx‖² / ‖Σx‖² per round (model §6), ε at δ under threat model T1 (model §7).
Importing this module imports no numpy, scipy or TensorFlow; each function imports what it needs.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from scenarios.cli.version import __version__

# before any TensorFlow import (run, calibrate, link_study): 3 also hides the CUDA-probe error line on
# CPU-only machines, as the command line does (scenarios.cli.main)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

__all__ = ["__version__", "account", "calibrate", "link_study", "read_run_metrics", "run"]


def link_study(schemes, *, K: int, d: int, rounds: int, snr_db: float, seed: int = 0, key: bytes | None = None,
               relation: str = "replace", **phy) -> dict:
    """Monte-Carlo link-level comparison of aggregation schemes (model §5, §6).

    Parameters
    ----------
    schemes : a scheme name or a list of registered schemes ("floras", "channel-inversion", "ideal",
        "central-gaussian", "analog-gaussian", "ddgauss", "sqsgd", ...).
    K : clients transmitting per round (≥ 1); d : model dimension, real entries per update (≥ 1).
    rounds : Monte-Carlo rounds (≥ 1); each draws fresh x_k ~ N(0, I_d), fading and noise.
    snr_db : SNR = P/σ² in dB, P the per-symbol transmit power, σ²/L the noise variance per chip (model §5).
    seed : master seed in [0, 2**63).
    key : the clients' 32-byte permutation key (model §4); default
        :func:`phy.assignment.simulation_key` of ``seed`` (reproducible, NOT secret).
    relation : "replace" or "add-remove", the sensitivity a noise multiplier scales (model §9.1).
    **phy : any ``[phy]`` key of a scenario (``L``, ``normalization``, ``clip_norm``, ``g_th``,
        ``resource``, ...) and a scheme's sub-table as a dict, e.g. ``floras={"N": 30}`` or
        ``central_gaussian={"noise_multiplier": 1.0}`` (underscores stand for hyphens).

    Returns
    -------
    dict: scheme → summary, with ``nmse`` (mean, median, ... — dimensionless), ``nmse_db``
    (10·log10 of the mean), ``clipped_nmse`` where the scheme clips, ``channel_uses`` (real channel
    uses per round, model §5) and ``seconds_per_round`` (fields: docs/physics.md).
    """
    from phy.assignment import simulation_key
    from phy.config import PhyConfig
    from phy.link_simulation import simulate_link

    names = [schemes] if isinstance(schemes, str) else list(schemes)
    table = {"scheme": "ideal", "snr_db": float(snr_db)}
    for name, value in phy.items():
        table[name.replace("_", "-") if isinstance(value, dict) else name] = value
    base = PhyConfig.from_dict(table)
    return simulate_link(base, schemes=names, K=K, d=d, rounds=rounds, seed=seed,
                         key=simulation_key(seed) if key is None else key, relation=relation)


def account(mechanism: str, *, rounds: int, K: int = 20, M: int = 100, delta: float = 1e-5, accountant: str = "rdp",
            relation: str = "replace", sampling: str = "without-replacement", level: str = "client", **params):
    """ε of a federated run of a registered privacy mechanism after ``rounds`` rounds (model §7.3, §7.4).

    Parameters
    ----------
    mechanism : "floras" (Cauchy noise of the unused sequences, model §7.2), "gaussian" (model §9.1),
        "ddgauss" (model §9.2) or "ldp" (sqSGD, model §9.3); see ``privacy.mechanism_names()``.
    rounds : rounds T composed (≥ 0).
    K, M : clients sampled per round of a population of M (K = M: no sampling amplification).
    delta : δ in (0, 1); accountant : "rdp", "rdp-generic", "pld", "gdp", "fdp" or "tightest" (docs/privacy.md).
    relation, sampling, level : neighbouring relation, client sampling, client- or item-level DP.
    **params : the mechanism's own parameters, e.g. gaussian ``clip_norm`` (model units) and
        ``noise_std`` (same units, std of the total noise); floras ``N``, ``C``, ``d``, ...

    Returns
    -------
    :class:`privacy.PrivacyReport`: ``epsilon`` (math.inf allowed), ``delta``, ``best_order`` and
    every assumption as text (``assumptions``).
    """
    from privacy import RunAccountant

    acc = RunAccountant(mechanism, K=K, M=M, level=level, relation=relation, sampling=sampling, delta=delta,
                        accountant=accountant, **params)
    return acc.report(rounds=rounds)


def _scenario(scenario, overrides: dict | None = None, *, resolve: bool = True):
    from scenarios.config import load_scenario, scenario_from_dict
    from scenarios.config.scenario import ScenarioConfig

    if isinstance(scenario, ScenarioConfig):
        if overrides:
            return scenario_from_dict(scenario.to_dict(), overrides, resolve=resolve)
        return scenario.validate()
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(scenario, overrides)
    return scenario_from_dict(dict(scenario), overrides, resolve=resolve)


def read_run_metrics(out) -> list[dict]:
    """The rows of a run directory's ``metrics.csv``, one dict per round, numbers as floats.

    Columns (docs/fl.md): round, train_loss, test_loss, test_accuracy (fraction in [0, 1]),
    agg_error (NMSE of the aggregate, model §6), V, admitted, epsilon (cumulative ε at δ, model §7),
    wall_time_s (seconds), channel_uses, ... Empty cells are None.
    """
    rows = []
    with (Path(out) / "metrics.csv").open(newline="") as fh:
        for raw in csv.DictReader(fh):
            row = {}
            for name, text in raw.items():
                try:
                    row[name] = None if text in ("", None) else float(text)
                except ValueError:
                    row[name] = text
            if row.get("round") is not None:
                row["round"] = int(row["round"])
            rows.append(row)
    return rows


def run(scenario, *, out, overrides: dict | None = None, resume: bool = False, progress: bool = False) -> list[dict]:
    """Run one federated-learning scenario into the directory ``out`` and return its metrics (model §1, §8).

    Parameters
    ----------
    scenario : a TOML file path, a mapping shaped like one (``{"data": {...}, "phy": {...}, ...}``,
        every key: docs/fl.md) or a ``ScenarioConfig``.
    out : run directory (must be empty or absent unless ``resume``); config.json, metrics.csv,
        checkpoints and DONE are written there (docs/fl.md).
    overrides : dotted keys, e.g. ``{"run.rounds": 5, "phy.snr_db": 10.0}`` (as ``--set``).
    resume : continue an interrupted run (same metrics as an uninterrupted one).
    progress : print a progress line per round.

    Returns
    -------
    list of dicts, one per round, as :func:`read_run_metrics`: test_accuracy (fraction),
    losses (cross-entropy, nats), epsilon (cumulative ε at the scenario's δ, model §7), ...
    """
    from scenarios.runs.run import run_scenario

    config = _scenario(scenario, overrides)
    run_scenario(config, Path(out), resume=resume, progress=progress)
    return read_run_metrics(out)


def _calibration_mapping(data: dict) -> dict:
    """``data`` with what ``floras calibrate`` fills in: clip normalization (R = 1), the scheme's defaults, a
    placeholder for the searched key."""
    from scenarios.config.calibration import with_search_placeholder
    from scenarios.config.schemes import wiring

    data = {name: dict(table) if isinstance(table, dict) else table for name, table in data.items()}
    phy = {"normalization": "clip", "clip_norm": 1.0, **data.get("phy", {})}
    row = wiring(phy.get("scheme", "floras"))
    K = data.get("training", {}).get("clients_per_round", 20)
    if row.scenario_defaults is not None:
        phy = row.scenario_defaults(phy, K=K)
    data["phy"] = phy
    return with_search_placeholder(data)


def calibrate(scenario, target_epsilon: float, *, overrides: dict | None = None, d: int | None = None) -> dict:
    """The value of the scheme's noise parameter that meets ``target_epsilon`` at the scenario's δ (model §10).

    Parameters
    ----------
    scenario : TOML path, mapping or ``ScenarioConfig`` (its ``phy.scheme``, ``privacy`` table,
        ``training.clients_per_round`` K, ``partition.clients`` M and ``run.rounds`` T are used).
        A mapping without ``phy.normalization`` gets ``"clip"`` (the private schemes need it).
    target_epsilon : ε > 0 (math.inf: no privacy noise).
    d : model dimension (default: from the scenario's data set and model, no data loaded).

    Returns
    -------
    dict as ``floras calibrate --json``: scheme, parameter (e.g. "C" — the norm bound of s_k in
    model units, model §2 — or "central-gaussian.noise_multiplier", dimensionless), value,
    target_epsilon, achieved_epsilon, accountant, threat_model, delta, rounds, assumptions; for
    FLORAS's C also ``back_off_db`` = 20·log10(C/√(d·P)) (dB below full power, model §2).
    Raises :class:`scenarios.config.calibration.InfeasibleTarget` when no value reaches the target.
    """
    from scenarios.config.calibration import calibrate_config, model_dimension

    if isinstance(scenario, dict):
        scenario = _calibration_mapping(scenario)
    config = _scenario(scenario, overrides, resolve=False)
    dim = model_dimension(config) if d is None else d
    from scenarios.cli.calibrate import back_off_db

    cal = calibrate_config(config, float(target_epsilon), d=dim)
    out = cal.to_dict()
    back_off = back_off_db(cal, d=dim, power=float(config.phy.power))
    if back_off is not None:
        out["back_off_db"] = back_off
    return out
