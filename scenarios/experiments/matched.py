"""The matched comparison at equal (ε, δ) (model §10): plan, predict and record a sweep of calibrated schemes.

A matched sweep file is an ordinary sweep file (:mod:`scenarios.experiments.sweep_file`) whose grid sets
``privacy.target_epsilon``; every grid point is calibrated when it is loaded
(:mod:`scenarios.config.calibration`). :func:`plan_sweep` loads one seed of every point, applies the
tuned learning rate of its case (:mod:`scenarios.experiments.tune`), and splits the points into feasible
ones (run) and infeasible ones (a target the scheme cannot reach, or a finite ε for a scheme
without privacy noise), which are recorded with their reason in ``matched.json`` next to the
sweep's ``sweep.json`` and shown as "infeasible" in tables and figures, never dropped.

Schemes whose learning does not depend on the SNR (:func:`snr_independent`, from the wiring rows: the central
Gaussian on an ideal channel, the error-free digital schemes DDGauss and sqSGD, and the ideal
reference) run at the first SNR of the sweep's ``phy.snr_db`` grid only; their points at the
other SNRs are recorded as ``reused`` (with ``reuses``, the slug of the point that ran) and the
figures draw that run's accuracy there. Only their channel uses depend on the SNR (the digital
schemes' TDMA rate, model §5), which the tables state.

:func:`predict` gives the run count and the predicted wall time from the per-round table of
:mod:`scenarios.experiments.matched_timing`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from scenarios.config.calibration import InfeasibleTarget
from scenarios.experiments.matched_timing import Prediction, predict  # noqa: F401  (the planner's prediction)
from scenarios.experiments.sweep_file import Sweep
from scenarios.config.schemes import wiring, wirings
from scenarios.store.records import MATCHED_RECORD

__all__ = ["MATCHED_RECORD", "snr_independent", "reused_at_snr", "threat_model_of", "PlannedPoint", "plan_sweep", "predict", "Prediction", "matched_record",
           "format_plan", "count_identical"]

#: schemes whose final accuracy does not depend on phy.snr_db (ideal channel or error-free digital uplink)
def snr_independent(scheme: str) -> bool:
    """The scheme's wiring row says its learning does not depend on phy.snr_db."""
    return any(w.scheme == scheme and w.snr_independent for w in wirings())


def reused_at_snr(sweep: Sweep, point, scheme: str) -> bool:
    """The point only reuses the runs at the sweep's first SNR (an SNR-independent scheme at another SNR)."""
    snrs = [float(v) for v in sweep_grid(sweep).get("phy.snr_db", [])]
    return bool(snrs) and snr_independent(scheme) and float(point.grid["phy.snr_db"]) != snrs[0]


def threat_model_of(scheme: str) -> str:
    """The scheme's threat model (its wiring row), or "" for a name no row has (an infeasible point)."""
    return wiring(scheme).threat_model if any(w.scheme == scheme for w in wirings()) else ""


@dataclass(frozen=True)
class PlannedPoint:
    """One grid point of a matched sweep after calibration."""

    slug: str
    label: str | None
    grid: dict
    status: str  # "feasible", "infeasible" or "reused"
    reason: str = ""
    reuses: str = ""  # status "reused": the slug of the point whose runs stand for this one
    scheme: str = ""
    threat_model: str = ""
    calibration: dict | None = None
    lr: float | None = None
    dataset: str = ""
    rounds: int = 0
    K: int = 0
    M: int = 0
    batch_size: int = 0
    #: not empty when the point was planned without its calibration (``floras matched --predict-only --no-calibrate``)
    pending: str = ""
    #: the resolved configuration with ``run.seed`` left out (:func:`scenarios.experiments.identical.identity`);
    #: held in memory only (it may contain a key), never written
    identity: str = dataclasses.field(default="", repr=False, compare=False)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("identity")
        return d


def default_loader(base: Path, overrides: dict):
    from scenarios.config import load_scenario

    return load_scenario(base, overrides)


def tuned_for(label: str | None, tuned_lr: dict[str, float] | None) -> float | None:
    """The tuned η of a case: its own label, else the longest tuned label it extends with "-"
    (budget cases such as ``floras-none-L64`` reuse the η of ``floras-none``)."""
    if not tuned_lr or label is None:
        return None
    if label in tuned_lr:
        return float(tuned_lr[label])
    prefixes = [t for t in tuned_lr if label.startswith(t + "-")]
    return float(tuned_lr[max(prefixes, key=len)]) if prefixes else None


def with_tuned_lr(sweep: Sweep, tuned_lr: dict[str, float] | None) -> Sweep:
    """``sweep`` with each point's ``training.lr`` replaced by its tuned η (:func:`tuned_for`; points without one keep
    theirs): the points whose runs :func:`plan_sweep` names, so a stored sweep is recognised before calibration."""
    points = []
    for point in sweep.points:
        lr = tuned_for(point.label, tuned_lr)
        points.append(point if lr is None else dataclasses.replace(point, overrides={**point.overrides, "training.lr": lr}))
    return dataclasses.replace(sweep, points=tuple(points))


def plan_sweep(sweep: Sweep, *, tuned_lr: dict[str, float] | None = None,
               loader: Callable[[Path, dict], Any] | None = None, calibrate: bool = True) -> tuple[Sweep, list[PlannedPoint]]:
    """(the sweep restricted to its feasible points, every point planned).

    ``tuned_lr`` maps a case label to its chosen learning rate (``training.lr`` override; see :func:`tuned_for`);
    other ValueErrors than :class:`InfeasibleTarget` propagate (bad input is an error). ``calibrate`` False: a point
    whose noise key is not cached is built without it and planned as feasible with ``pending`` set (a prediction
    only: its feasibility is unknown)."""
    loader = loader or default_loader
    if not calibrate:
        loader = _uncalibrated_loader(loader)
    planned, feasible = [], []
    snr_grid = [float(v) for v in sweep_grid(sweep).get("phy.snr_db", [])]  # anchors: points at the first SNR
    anchors = {_without_snr(p): p.slug for p in sweep.points if snr_grid and float(p.grid["phy.snr_db"]) == snr_grid[0]}
    for point in with_tuned_lr(sweep, tuned_lr).points:
        over = dict(point.overrides)
        scheme = str(over.get("phy.scheme", ""))
        try:
            cfg = loader(sweep.base, {**over, "run.seed": sweep.seeds[0]})
        except InfeasibleTarget as exc:
            planned.append(PlannedPoint(point.slug, point.label, dict(point.grid), "infeasible", reason=str(exc),
                                        scheme=scheme, threat_model=threat_model_of(scheme),
                                        lr=over.get("training.lr")))
            continue
        except ValueError as exc:
            raise ValueError(f"{sweep.path}: grid point {point.slug}: {exc}") from None
        status, reuses, reason = "feasible", "", ""
        pending = getattr(cfg, "pending", "")
        cfg = getattr(cfg, "config", cfg)
        if reused_at_snr(sweep, point, cfg.phy.scheme):
            status, reuses = "reused", anchors[_without_snr(point)]
            reason = f"{cfg.phy.scheme} learns the same at every SNR: the runs at {snr_grid[0]:g} dB stand for this point"
        else:
            feasible.append(point)
        planned.append(PlannedPoint(
            point.slug, point.label, dict(point.grid), status, reason=reason, reuses=reuses, scheme=cfg.phy.scheme,
            threat_model=threat_model_of(cfg.phy.scheme), calibration=cfg.privacy.calibrated,
            lr=float(cfg.training.lr), dataset=cfg.data.name, rounds=cfg.run.rounds,
            K=cfg.training.clients_per_round, M=cfg.partition.clients, batch_size=cfg.training.batch_size,
            pending=pending, identity="" if pending else _seedless_identity(cfg),
        ))
    return dataclasses.replace(sweep, points=tuple(feasible)), planned


@dataclasses.dataclass(frozen=True)
class _Pending:
    """A point built without its calibration: its configuration and why."""

    config: Any
    pending: str


def _uncalibrated_loader(loader):
    """``loader`` for the points whose noise key is cached or needs no calculation (ε = ∞); the others built without
    it."""
    def load(base, overrides):
        from scenarios.config.loading import build_scenario_file
        from scenarios.config.targets import answered, request_of

        built = build_scenario_file(base, overrides)
        request = request_of(built)
        if request is None or answered(request) or math.isinf(float(request[1])):  # ε = ∞: no noise, nothing to compute
            return loader(base, overrides)
        return _Pending(built, f"not calibrated (ε = {request[1]:g}: its noise key is not in the calibration store)")
    return load


def _seedless_identity(cfg) -> str:
    from scenarios.experiments.identical import identity

    run = getattr(cfg, "run", None)
    if run is None:
        return ""
    return identity(dataclasses.replace(cfg, run=dataclasses.replace(run, seed=0))) or ""


def count_identical(plans: list[tuple[Sweep, list[PlannedPoint]]], finished: frozenset = frozenset()
                    ) -> list[tuple[int, float]]:
    """Per sweep, in order: (runs copied from an identical run of an earlier sweep or point, and
    their predicted seconds), the rule of :mod:`scenarios.experiments.identical` applied to the plans. A run in
    ``finished`` ((sweep name, slug, seed), ``scenarios.experiments.sweep_dirs.finished_runs``) is skipped, not
    copied, so it is not counted."""
    from scenarios.experiments.matched_timing import run_seconds

    seen: set = set()
    out = []
    for sweep, planned in plans:
        copies, seconds = 0, 0.0
        for p in planned:
            if p.status != "feasible":
                continue
            for seed in sweep.seeds:
                key = (p.identity, seed)
                if p.identity and key in seen and (sweep.name, p.slug, seed) not in finished:
                    copies += 1
                    seconds += run_seconds(dataset=p.dataset, scheme=p.scheme, rounds=p.rounds, K=p.K, M=p.M,
                                           batch_size=p.batch_size)
                seen.add(key)
        out.append((copies, seconds))
    return out


def sweep_grid(sweep: Sweep) -> dict[str, list]:
    """The sweep's ``[grid]`` values per key, in file order, as seen from its points."""
    grid: dict[str, list] = {k: [] for k in sweep.grid_keys}
    for p in sweep.points:
        for k in sweep.grid_keys:
            if p.grid[k] not in grid[k]:
                grid[k].append(p.grid[k])
    return grid


def _without_snr(point) -> tuple:
    return (point.label, tuple(sorted((k, str(v)) for k, v in point.grid.items() if k != "phy.snr_db")))


def matched_record(sweep: Sweep, planned: list[PlannedPoint], *, tuned: dict | None, prediction: Prediction) -> dict:
    """The ``matched.json`` record: every grid point with its status, calibration and learning rate."""
    return {
        "name": sweep.name,
        "sweep_file": sweep.path.name,
        "quick": sweep.quick,
        "seeds": list(sweep.seeds),
        "tuned_lr": tuned,
        "prediction": {"runs": prediction.runs, "copied": prediction.copied, "finished": prediction.finished,
                       "run_seconds": prediction.run_seconds,
                       "workers": prediction.workers, "wall_seconds": prediction.wall_seconds},
        "points": [p.to_dict() for p in planned],
    }


def _eps_text(eps) -> str:
    """ε to 4 significant digits (docs/fl.md: units); ∞ when absent or infinite."""
    if eps is None or (isinstance(eps, float) and math.isinf(eps)):
        return "∞"
    return f"{float(eps):.4g}" if isinstance(eps, (int, float)) else str(eps)


def format_plan(planned: list[PlannedPoint]) -> str:
    """One line per point: scheme, target ε, calibrated value (or the reason it is infeasible)."""
    lines = []
    for p in planned:
        if p.status == "feasible" and p.pending:
            lines.append(f"  {p.slug}: {p.pending}, planned as feasible, η = {p.lr:g}")
        elif p.status == "feasible":
            cal = p.calibration or {}
            value = cal.get("value")
            val = "—" if value is None else (f"{value:.4g}" if isinstance(value, float) and math.isfinite(value) else str(value))
            lines.append(f"  {p.slug}: {cal.get('parameter', 'none')} = {val} (ε = {_eps_text(cal.get('achieved_epsilon'))}), η = {p.lr:g}")
        elif p.status == "reused":
            lines.append(f"  {p.slug}: reused ({p.reuses}): {p.reason}")
        else:
            lines.append(f"  {p.slug}: infeasible: {p.reason}")
    return "\n".join(lines)
