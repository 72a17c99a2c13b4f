"""Calibration: the noise parameter of a scheme that meets a target ε (model §10), and its symbolic use.

For each scheme one scenario key — its wiring row's ``calibrated`` key
(:mod:`scenarios.config.schemes`, whose table lists them) — is searched so that the run's own
accountant (:meth:`scenarios.config.ScenarioConfig.privacy_accountant`, the same one that writes the
run's ε column) reports ε ≤ target after ``run.rounds`` rounds at ``privacy.delta``. A scheme with
several (FLORAS: C at fixed N, or N at fixed C) takes ``privacy.calibrate_key``, default the first.
A scheme without privacy noise admits only ε = ∞.

Every bound used is monotone in the searched key, so ``privacy.calibration.calibrate`` (Brent's
method in log space with a safe-side check; an integer bisection for integer keys) finds it to
``REL_TOL``; the returned value is always on the feasible side (ε ≤ target). A target that no
value in the searched range reaches raises :class:`InfeasibleTarget` (a ValueError), which sweeps
record as "infeasible" instead of dropping the point.

Symbolic use: ``[privacy] target_epsilon = 8`` in a scenario (or ``"inf"``) is resolved by
:func:`scenarios.config.targets.resolve_privacy_target` when the scenario is loaded; the resolved key is written into
``[phy]`` and both appear in the run's ``config.json`` (``privacy.target_epsilon`` and the
``phy`` key), with the calibration record under ``privacy.calibrated``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from scenarios.config.schemes import get_phy_key, set_phy_key, wiring
from scenarios.config.tables import parse_target

__all__ = [
    "REL_TOL",
    "Calibration",
    "InfeasibleTarget",
    "parse_target",
    "model_dimension",
    "calibrate_config",
    "with_phy",
    "with_search_placeholder",
]

REL_TOL = 1e-5
#: input shape and classes of each data set (what :func:`fl.data.load_dataset` returns)
DATA_SHAPES = {"digits": ((8, 8, 1), 10), "fashion-mnist": ((28, 28, 1), 10), "mnist": ((28, 28, 1), 10)}


class InfeasibleTarget(ValueError):
    """No value of the scheme's noise parameter in the searched range reaches the target ε."""


@dataclass(frozen=True)
class Calibration:
    """The outcome of one calibration (JSON keys of ``floras calibrate``)."""

    scheme: str
    parameter: str
    value: float | int | None
    target_epsilon: float
    achieved_epsilon: float
    accountant: str
    threat_model: str
    delta: float
    rounds: int
    noise_multiplier: float | None = None
    assumptions: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        def num(x):
            return "inf" if isinstance(x, float) and math.isinf(x) else x

        out = {
            "scheme": self.scheme,
            "parameter": self.parameter,
            "value": num(self.value),
            "target_epsilon": num(self.target_epsilon),
            "achieved_epsilon": num(self.achieved_epsilon),
            "accountant": self.accountant,
            "threat_model": self.threat_model,
            "delta": self.delta,
            "rounds": self.rounds,
            "assumptions": list(self.assumptions),
        }
        if self.parameter.rsplit(".", 1)[-1] == "noise_multiplier":
            out["noise_multiplier"] = num(self.noise_multiplier)
        return out




def model_dimension(config) -> int:
    """d of the scenario's model, from the data set's known input shape (no data loaded)."""
    from fl.models import build_model_spec

    name = config.data.name
    if name == "synthetic":
        shape, classes = (config.data.synthetic_features,), config.data.synthetic_classes
    elif name == "fedprox":
        shape, classes = (config.data.fedprox.features,), config.data.fedprox.classes
    else:
        shape, classes = DATA_SHAPES[name]
    m = config.model
    return build_model_spec(m.name, input_shape=shape, num_classes=classes, hidden=m.hidden,
                            channels=m.channels, kernel_size=m.kernel_size).d


def _local_dataset_size(config) -> int:
    """D (examples per client) as the run will have it, without loading the data (item level only)."""
    from fl.sizes import examples_per_client, train_size

    p = config.partition
    if config.data.name == "fedprox":  # a population: the smallest client's training rows bound D (worst case q = B/D)
        from fl.sizes import client_train_rows

        return client_train_rows(config.data.fedprox.min_size, config.data.validation_fraction)
    n = train_size(config.data, seed=config.run.seed)
    return max(1, examples_per_client(n, p.clients, kind=p.kind, shards_per_client=p.shards_per_client))


def calibrated_key(config):
    """The scheme's :class:`~scenarios.config.schemes.Calibrated` key (``privacy.calibrate_key`` or the first)."""
    row = wiring(config.phy.scheme)
    name = config.privacy.calibrate_key
    if name is None:
        return next(iter(row.calibrated.values()), None)
    if name not in row.calibrated:
        raise ValueError(f"privacy.calibrate_key must be one of {{{', '.join(row.calibrated)}}} for scheme "
                         f"{config.phy.scheme!r} (got {name!r})")
    return row.calibrated[name]


def with_search_placeholder(data: dict) -> dict:
    """The scenario mapping ``data`` with any valid value at its searched sub-table key if unset (a noise
    multiplier must be set to validate; the calibration replaces it). Integer keys get K. ``data`` unchanged."""
    phy = dict(data.get("phy", {}))
    row = wiring(phy.get("scheme", "floras"))
    name = data.get("privacy", {}).get("calibrate_key")
    key = row.calibrated.get(name) if name else next(iter(row.calibrated.values()), None)
    if key is None or "." not in key.key:
        return data
    scheme, field = key.key.split(".", 1)
    own = dict(phy.get(scheme, {}))
    own.setdefault(field, data.get("training", {}).get("clients_per_round", 20) if key.integer else 1.0)
    return {**data, "phy": {**phy, scheme: own}}


def _epsilon(acc, rounds: int) -> float:
    """ε only (no report: FLORAS reports also compute the slower link-level figure)."""
    return float(acc.epsilon(rounds=rounds)) if hasattr(acc, "epsilon") else float(acc.report(rounds=rounds).epsilon)


def with_phy(config, key: str, value):
    """``config`` with the dotted ``[phy]`` key set (``"C"``, ``"floras.N"``)."""
    return dataclasses.replace(config, phy=set_phy_key(config.phy, key, value))


def _accountant_name(config, report) -> str:
    from privacy.engines import ACCOUNTANT_TEXT

    name = config.privacy.accountant
    return ACCOUNTANT_TEXT.get(name, name)


def _search(eps_at, lo: float, hi: float, increasing: bool, target: float, rounds: int) -> tuple[float, float] | None:
    """The value on the feasible side of ε(v) = target in [lo, hi] (``privacy.calibration.calibrate``), with its ε."""
    from privacy.calibration import calibrate

    safe = lo if increasing else hi
    if eps_at(safe) > target:  # also checks the configuration: its errors propagate as they are
        return None

    class _At:  # the accountant interface calibrate() asks for
        def __init__(self, v):
            self.v = v

        def epsilon(self, *, rounds):
            return eps_at(self.v)

    value = calibrate(_At, target_epsilon=target, rounds=rounds, lower=lo, upper=hi, increasing=increasing, rel_tol=REL_TOL)
    return value, eps_at(value)


def _bound(v, K: int):
    return K if v == "K" else v


def calibrate_config(config, target_epsilon: float, *, d: int | None = None) -> Calibration:
    """Calibrate ``config``'s scheme to ``target_epsilon`` (see the module text); raise InfeasibleTarget.

    ``config`` is a validated :class:`~scenarios.config.ScenarioConfig`; its other keys (K, M,
    T, δ, relation, clip norm, bit width, …) are held fixed. ``d`` defaults to the model's
    dimension (:func:`model_dimension`).
    """
    target = parse_target(target_epsilon)
    scheme = config.phy.scheme
    row = wiring(scheme)
    pr, K = config.privacy, config.training.clients_per_round
    common = dict(scheme=scheme, target_epsilon=target, threat_model=row.threat_model, delta=float(pr.delta),
                  rounds=config.run.rounds)
    if row.accountant is None:
        if target != math.inf:
            raise InfeasibleTarget(f"privacy.target_epsilon = {target:g}: scheme {scheme!r} adds no privacy noise, so only ε = ∞ applies")
        return Calibration(parameter="none", value=None, achieved_epsilon=math.inf, accountant="none", **common)
    cal = calibrated_key(config)
    if cal is None:
        raise ValueError(f"phy.scheme = {scheme!r} has no calibrated key in its wiring row, so it cannot be calibrated")
    key = cal.key
    if target == math.inf:
        if cal.noiseless is None:
            raise InfeasibleTarget(f"privacy.target_epsilon = inf: scheme {scheme!r} has no noiseless setting "
                                   f"(phy.{key} cannot remove its privacy noise)")
        nkey, nvalue = cal.noiseless[0], _bound(cal.noiseless[1], K)
        return Calibration(parameter=nkey, value=nvalue, achieved_epsilon=math.inf,
                           accountant=_accountant_name(config, None),
                           noise_multiplier=0.0 if nkey.rsplit(".", 1)[-1] == "noise_multiplier" else None,
                           assumptions=("ε = ∞: the scheme runs without privacy noise",), **common)
    d = model_dimension(config) if d is None else int(d)
    D = _local_dataset_size(config)
    lo, hi = (_bound(b, K) for b in cal.bracket)

    def at(v, base=config):
        return with_phy(base, key, int(v) if cal.integer else float(v)).privacy_accountant(d=d, D=D)

    def eps_at(v, base=config):
        return _epsilon(at(v, base), config.run.rounds)

    def search(eps):
        if cal.integer:
            return _smallest_integer(eps, lo, hi, target) if not cal.increasing else None
        return _search(eps, lo, hi, cal.increasing, target, config.run.rounds)

    if config.privacy.accountant == "tightest":  # the better of the parts' values (privacy.calibration.tightest_value)
        from privacy.calibration import tightest_value

        def part(name):
            alone = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, accountant=name))
            hit = search(lambda v: eps_at(v, alone))
            return None if hit is None else hit[0]

        value = tightest_value(part, increasing=cal.increasing)
        found = None if value is None else (value, eps_at(value))
    else:
        found = search(eps_at)
    if found is None:
        best = (lo if cal.increasing else hi)
        span = f"[{lo:g}, {hi:g}]"
        raise InfeasibleTarget(
            f"privacy.target_epsilon = {target:g}: no phy.{key} in {span} reaches it for "
            f"scheme {scheme!r} after {config.run.rounds} rounds (ε = {eps_at(best):.4g} at phy.{key} = {best:g})"
            + _hint(config, key)
        )
    value, achieved = found
    acc = at(value)
    rep = acc.report(rounds=config.run.rounds)
    # the run's own threat model (e.g. T1 only with several antennas or timing offsets), not the scheme's default line
    common["threat_model"] = getattr(acc, "threat_model", None) or getattr(rep, "threat_model", None) or row.threat_model
    return Calibration(
        parameter=key, value=int(value) if cal.integer else float(value), achieved_epsilon=achieved,
        accountant=_accountant_name(config, rep),
        noise_multiplier=float(value) if key.rsplit(".", 1)[-1] == "noise_multiplier" else None,
        assumptions=tuple(getattr(rep, "assumptions", ()) or ()), **common,
    )


def _hint(config, key: str) -> str:
    """Why a search found nothing, when the reason is that the other keys leave no privacy noise."""
    row = wiring(config.phy.scheme)
    K = config.training.clients_per_round
    for other in row.calibrated.values():
        if other.key != key and other.noiseless is not None:
            nkey, nvalue = other.noiseless[0], _bound(other.noiseless[1], K)
            if nkey != key and get_phy_key(config.phy, nkey) == nvalue:
                return (f"; phy.{nkey} = {nvalue} leaves the scheme without privacy noise, so no phy.{key} reaches a "
                        f"finite ε; change phy.{nkey} (or search it: privacy.calibrate_key = "
                        f"{next(n for n, c in row.calibrated.items() if c is other)!r})")
    return ""


def _smallest_integer(eps_at, lo: int, hi: int, target: float):
    if eps_at(lo) <= target:
        return lo, eps_at(lo)
    if eps_at(hi) > target:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if eps_at(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi, eps_at(hi)
