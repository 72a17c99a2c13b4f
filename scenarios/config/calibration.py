"""Calibration: the noise parameter of a scheme that meets a target ε (model §10), and its symbolic use.

For each scheme one scenario key is searched so that the run's own accountant
(:meth:`scenarios.config.ScenarioConfig.privacy_accountant`, the same one that writes the run's
ε column) reports ε ≤ target after ``run.rounds`` rounds at ``privacy.delta``:

================= ================== ============================ =================================
scheme            key searched       direction                    ε = ∞ (no privacy noise)
================= ================== ============================ =================================
floras            ``phy.C`` (fixed N) largest C (S = 2C/b grows)   N = K (γ = 0)
floras (``N``)    ``phy.N`` (fixed C) smallest integer N ≥ K       N = K
central-gaussian  ``noise_multiplier`` smallest z                   z = 0
analog-gaussian   ``noise_multiplier`` smallest z                   z = 0
ddgauss           ``dd_local_std``    smallest σ (at bit width B)  σ = 0
sqsgd             ``epsilon0``        largest ε₀                    none: infeasible (ε₀ must be finite)
ideal, channel-…  —                   only ε = ∞                   the scheme itself
================= ================== ============================ =================================

Every bound used is monotone in the searched key, so ``privacy.calibration.calibrate`` (Brent's
method in log space with a safe-side check; an integer bisection for N) finds it to ``REL_TOL``;
the returned value is always on the feasible side (ε ≤ target). A
target that no value in the searched range reaches raises :class:`InfeasibleTarget` (a
ValueError), which sweeps record as "infeasible" instead of dropping the point.

Symbolic use: ``[privacy] target_epsilon = 8`` in a scenario (or ``"inf"``) is resolved by
:func:`scenarios.config.targets.resolve_privacy_target` when the scenario is loaded; the resolved key is written into
``[phy]`` and both appear in the run's ``config.json`` (``privacy.target_epsilon`` and the
``phy`` key), with the calibration record under ``privacy.calibrated``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from scenarios.config.tables import parse_target
from scenarios.store.records import THREAT_MODELS

__all__ = [
    "SCHEME_PARAMETER",
    "THREAT_MODELS",
    "NON_PRIVATE",
    "REL_TOL",
    "Calibration",
    "InfeasibleTarget",
    "parse_target",
    "model_dimension",
    "calibrate_config",
    "with_phy",
]

#: scheme → (phy key searched, ε increases with the key?, search range)
SCHEME_PARAMETER = {
    "floras": ("C", True, (1e-4, 1e4)),  # C [√W]; ε(C = 1e-4) ≈ 0.004 at K = 20 of M = 100, T = 200, γ = 12
    "central-gaussian": ("noise_multiplier", False, (1e-4, 1e5)),
    "analog-gaussian": ("noise_multiplier", False, (1e-4, 1e5)),
    "ddgauss": ("dd_local_std", False, (1e-9, 1e9)),
    "sqsgd": ("epsilon0", True, (1e-3, 50.0)),  # ε₀ per round; the RR curve overflows far beyond
}
FLORAS_N_RANGE = 2**14  # N ≤ L for orthonormal sequences; also keeps S/γ where the tight bound evaluates
NON_PRIVATE = ("ideal", "channel-inversion")
REL_TOL = 1e-5
#: input shape and classes of each data set (what :func:`fl.data.load_dataset` returns)
DATA_SHAPES = {"digits": ((8, 8, 1), 10), "fashion-mnist": ((28, 28, 1), 10), "mnist": ((28, 28, 1), 10)}
#: training examples before any validation split (digits: 1 797 less the stratified test share)
N_TRAIN = {"fashion-mnist": 60000, "mnist": 60000}


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
        if self.scheme in ("central-gaussian", "analog-gaussian"):
            out["noise_multiplier"] = num(self.noise_multiplier)
        return out




def model_dimension(config) -> int:
    """d of the scenario's model, from the data set's known input shape (no data loaded)."""
    from fl.models import build_model_spec

    name = config.data.name
    if name == "synthetic":
        shape, classes = (config.data.synthetic_features,), config.data.synthetic_classes
    else:
        shape, classes = DATA_SHAPES[name]
    m = config.model
    return build_model_spec(m.name, input_shape=shape, num_classes=classes, hidden=m.hidden,
                            channels=m.channels, kernel_size=m.kernel_size).d


def _local_dataset_size(config) -> int:
    """D (examples per client) as the run will have it, without loading the data (item level only)."""
    d = config.data
    if d.name == "digits":
        n = 1797 - round(1797 * d.test_fraction)
    elif d.name == "synthetic":
        n = d.synthetic_samples - max(1, round(d.test_fraction * d.synthetic_samples))
    else:
        n = N_TRAIN[d.name]
    n -= round(n * getattr(d, "validation_fraction", 0.0))
    return max(1, n // config.partition.clients)


#: the accountant mechanism (CONTRACT: privacy.SchemeRunAccountant) that covers each scheme
MECHANISMS = {"floras": "floras", "central-gaussian": "gaussian", "analog-gaussian": "gaussian", "ddgauss": "ddgauss", "sqsgd": "ldp"}


def _accountant(config, d: int, D: int):
    acc = config.privacy_accountant(d=d, D=D)
    mech = getattr(acc, "mechanism", "floras")
    if mech != MECHANISMS[config.phy.scheme]:  # e.g. a FLORAS accountant for another scheme: never calibrate on it
        raise ValueError(f"phy.scheme = {config.phy.scheme!r}: this build has no accountant for it "
                         f"(privacy_accountant gives the {mech!r} mechanism), so it cannot be calibrated")
    return acc


def _epsilon(acc, rounds: int) -> float:
    """ε only (no report: FLORAS reports also compute the slower link-level figure)."""
    return float(acc.epsilon(rounds=rounds)) if hasattr(acc, "epsilon") else float(acc.report(rounds=rounds).epsilon)


def with_phy(config, **phy):
    return dataclasses.replace(config, phy=dataclasses.replace(config.phy, **phy))


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


def calibrate_config(config, target_epsilon: float, *, d: int | None = None, floras_parameter: str = "C") -> Calibration:
    """Calibrate ``config``'s scheme to ``target_epsilon`` (see module table); raise InfeasibleTarget.

    ``config`` is a validated :class:`~scenarios.config.ScenarioConfig`; its other keys (K, M,
    T, δ, relation, clip norm, bit width, …) are held fixed. ``d`` defaults to the model's
    dimension (:func:`model_dimension`).
    """
    target = parse_target(target_epsilon)
    scheme = config.phy.scheme
    threat = THREAT_MODELS.get(scheme, "unknown")
    pr, K = config.privacy, config.training.clients_per_round
    common = dict(scheme=scheme, target_epsilon=target, threat_model=threat, delta=float(pr.delta), rounds=config.run.rounds)
    if scheme in NON_PRIVATE:
        if target != math.inf:
            raise InfeasibleTarget(f"privacy.target_epsilon = {target:g}: scheme {scheme!r} adds no privacy noise, so only ε = ∞ applies")
        return Calibration(parameter="none", value=None, achieved_epsilon=math.inf, accountant="none", **common)
    if scheme not in SCHEME_PARAMETER:
        raise ValueError(f"phy.scheme must be one of {{{', '.join([*SCHEME_PARAMETER, *NON_PRIVATE])}}} to calibrate (got {scheme!r})")
    if scheme == "floras" and floras_parameter not in ("C", "N"):
        raise ValueError(f"privacy.floras_parameter must be one of {{C, N}} (got {floras_parameter!r})")
    key, increasing, (lo, hi) = SCHEME_PARAMETER[scheme]
    if scheme == "floras" and floras_parameter == "N":
        key = "N"
    if target == math.inf:
        if scheme == "sqsgd":
            raise InfeasibleTarget("privacy.target_epsilon = inf: sqSGD has no noiseless setting (ε₀ must be finite)")
        value = K if key in ("C", "N") else 0.0
        cand = with_phy(config, N=K) if key in ("C", "N") else with_phy(config, **{key: 0.0})
        return Calibration(parameter="N" if key in ("C", "N") else key, value=value, achieved_epsilon=math.inf,
                           accountant=_accountant_name(config, None), noise_multiplier=0.0 if key == "noise_multiplier" else None,
                           assumptions=("ε = ∞: the scheme runs without privacy noise",), **common)
    d = model_dimension(config) if d is None else int(d)
    D = _local_dataset_size(config)
    def at(v):
        return _accountant(with_phy(config, **{key: int(v) if key == "N" else float(v)}), d, D)

    def eps_at(v):
        return _epsilon(at(v), config.run.rounds)

    if key == "N":
        found = _smallest_integer(eps_at, K, FLORAS_N_RANGE, target)
    else:
        found = _search(eps_at, lo, hi, increasing, target, config.run.rounds)
    if found is None:
        best = (hi if not increasing else lo) if key != "N" else FLORAS_N_RANGE
        span = f"[{K}, {FLORAS_N_RANGE}]" if key == "N" else f"[{lo:g}, {hi:g}]"
        hint = ""
        if scheme == "floras" and key == "C" and config.phy.N - K <= 0:
            hint = (f"; γ = N − K = {config.phy.N} − {K} = 0: with no inactive sequences FLORAS adds no privacy "
                    f"noise, so no C reaches a finite ε; raise phy.N above training.clients_per_round = {K} "
                    "(or search N: privacy.floras_parameter = \"N\", floras calibrate --floras-parameter N)")
        raise InfeasibleTarget(
            f"privacy.target_epsilon = {target:g}: no phy.{key} in {span} reaches it for "
            f"scheme {scheme!r} after {config.run.rounds} rounds (ε = {eps_at(best):.4g} at phy.{key} = {best:g})"
            + hint
        )
    value, achieved = found
    rep = at(value).report(rounds=config.run.rounds)
    return Calibration(
        parameter=key, value=int(value) if key == "N" else float(value), achieved_epsilon=achieved,
        accountant=_accountant_name(config, rep), noise_multiplier=float(value) if key == "noise_multiplier" else None,
        assumptions=tuple(getattr(rep, "assumptions", ()) or ()), **common,
    )


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
