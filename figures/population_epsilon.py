"""Accuracy against ε on the cross-device population (``scenarios/matched_population.toml`` and its slices
``matched_population_eps8``, ``_eps2``, ``_eps1_4``, ``_seed1``, ``_seed2``, and capped FLORAS without server
momentum, ``matched_population_nomomentum``; the PLD slices and capped FLORAS at its retuned η,
``matched_population_pld_floras_tuned``; model §10), from stored results only.

The slices are separate sweep directories, each a subset of the whole sweep's points (tested in
tests/test_matched_population.py), so this figure merges them: every finished run of a directory named
``matched_population`` or ``matched_population_<slice>`` whose case is one of the whole sweep's (:data:`CASES`) or
:data:`VARIANTS` (the other probes' cases are not) counts once per (case, ε, seed), the first directory in name order
winning a duplicate (a tuning run, scored on the validation split, never counts); a case stored at two learning
rates gives a curve per η (``<case>~<η>``, legend "η = …"), never one merged curve; runs of another number of rounds
than the sweep's are left out and named in the caption. A variant is drawn dotted in its scheme's colour, and the
caption gives each case's η and server momentum as its runs stored them.
Final test accuracy per case against the target ε (log2 axis, ε = ∞ at the right), mean over seeds with the min–max
band, and ``population_accuracy_vs_epsilon.table.md`` with mean [min, max] (seeds) per point.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .common import MARKERS, SNR_DEFINITION, load_finished, NoFinishedRuns, save_figure
from .matched import COLORS, INF_X, curve_label, eps_value, eps_x, finish_single_panel

STEM = "population_accuracy_vs_epsilon"
#: the whole sweep's cases (scenarios/matched_population.toml), in its order
CASES = ("floras-none", "floras-none-capped", "central-gaussian", "analog-gaussian", "sqsgd", "ideal", "ddgauss")
#: cases outside the whole sweep drawn beside it: {case: (the sweep case whose colour it takes, legend text)}
VARIANTS = {"floras-none-capped-nomomentum": ("floras-none-capped", "FLORAS, no CSIT, capped receiver, no server momentum"),
            "central-gaussian-nomomentum": ("central-gaussian", "central Gaussian, no server momentum")}


#: the accountant the whole sweep is calibrated under; runs under another one form curves of their own
SWEEP_ACCOUNTANT = "rdp"


def _case(rs) -> str:
    """The curve a run set belongs to: its label, with ``@<accountant>`` when not calibrated under the sweep's."""
    acc = str(rs.value("privacy.accountant") or SWEEP_ACCOUNTANT)
    return rs.label if acc == SWEEP_ACCOUNTANT else f"{rs.label}@{acc}"


def _base(case: str) -> tuple[str, str | None]:
    """(label, accountant or None for the sweep's) of a curve key."""
    label, _, acc = case.partition("~")[0].partition("@")
    return label, acc or None


def _lr_of(case: str) -> str:
    """The η a curve key names ('' when its case ran at one η only)."""
    return case.partition("~")[2]


def _stored(rs, section: str, key: str, default=None):
    """``[section] key`` of the run set's stored configuration (its first run's ``config.json``)."""
    return rs.configs[0].get("config", {}).get(section, {}).get(key, default)


def _tuning(rs) -> bool:
    """A run of ``floras tune`` (scored on the validation split, ``data.evaluate_on = "validation"``): its accuracy
    is not a test accuracy, so it never enters this figure."""
    return _stored(rs, "data", "evaluate_on", "test") != "test"


def _stored_lr(rs):
    return _stored(rs, "training", "lr")


def _stored_rounds(rs):
    return _stored(rs, "run", "rounds")


def merged_points(dirs: list[Path]) -> tuple[dict, dict, dict, list[str]]:
    """{(case, ε): {seed: final test accuracy [%]}} over the directories, {case: one stored run configuration},
    {(case, ε): the calibration record its runs stored} and the run sets left out for their length. A case (label and
    accountant) stored at more than one learning rate (an η retuned later, in a slice of its own) gives one curve per
    η, keyed ``<case>~<η>``: its runs are never merged across η. Only runs of the sweep's number of rounds T (the
    most common among the runs) are drawn: a final accuracy after another T is another quantity; those are named
    (``"<label> at ε = …, T = …"``) for the caption."""
    points: dict = {}
    configs: dict = {}
    calibrated: dict = {}
    runsets = []
    for d in sorted(dirs, key=lambda p: p.name):
        try:
            res = load_finished(d)
        except NoFinishedRuns:
            continue
        runsets += [rs for rs in res.runsets if (rs.label in CASES or rs.label in VARIANTS) and not _tuning(rs)]
    lengths = [_stored_rounds(rs) for rs in runsets]
    sweep_T = max(set(lengths), key=lengths.count) if lengths else None
    left_out = sorted({f"{rs.label} at ε = {rs.value('privacy.target_epsilon')}, T = {_stored_rounds(rs)}"
                       for rs in runsets if _stored_rounds(rs) != sweep_T})
    runsets = [rs for rs in runsets if _stored_rounds(rs) == sweep_T]
    rates: dict = {}
    for rs in runsets:
        rates.setdefault(_case(rs), set()).add(_stored_lr(rs))
    for rs in runsets:
        case = _case(rs)
        if len(rates[case]) > 1:
            case = f"{case}~{_stored_lr(rs):g}"
        eps = eps_value(rs.value("privacy.target_epsilon"))
        acc = 100 * rs.final("test_accuracy")
        for seed, a in zip(rs.seeds, acc):
            points.setdefault((case, eps), {}).setdefault(int(seed), float(a))
        configs.setdefault(case, rs.configs[0])
        calibrated.setdefault((case, eps), _stored(rs, "privacy", "calibrated") or {})
    return points, configs, calibrated, left_out


def _text(case: str) -> str:
    label, acc = _base(case)
    text = VARIANTS[label][1] if label in VARIANTS else curve_label(label, "")
    text = f"{text}, {acc} accountant" if acc else text
    return f"{text}, η = {_lr_of(case)}" if _lr_of(case) else text


def _color(case: str):
    label = _base(case)[0]
    return COLORS.get(VARIANTS[label][0] if label in VARIANTS else label)


def _order(points: dict) -> list[str]:
    """Curves in the sweep's case order, the sweep's accountant first, then other accountants."""
    keys = {k[0] for k in points}
    rank = {c: i for i, c in enumerate((*CASES, *VARIANTS))}
    return sorted(keys, key=lambda c: (_base(c)[1] is not None, rank[_base(c)[0]], _base(c)[1] or "",
                                       float(_lr_of(c) or 0)))


def _accountants(calibrated: dict, cases: list[str]) -> str:
    """A sentence on the curves calibrated under another accountant, with the calibrated key of each at each ε, from
    the runs."""
    other = [c for c in cases if _base(c)[1]]
    if not other:
        return ""
    parts = []
    for case in other:
        at = sorted((eps, cal) for (c, eps), cal in calibrated.items() if c == case)
        values = [cal.get("value") for _, cal in at]
        if not at or not all(isinstance(v, (int, float)) for v in values):
            parts.append(f"{_text(case)} (its calibrated key)")
            continue
        name = at[0][1].get("parameter")
        eps = ", ".join(f"{e:g}" for e, _ in at)
        parts.append(f"{_text(case)} ({name} = {', '.join(f'{v:.4g}' for v in values)} at ε = {eps})")
    return " Dash-dotted: calibrated under another accountant: " + "; ".join(parts) + "."


def _training(configs: dict, cases: list[str]) -> str:
    """η and server momentum per group of cases that share them, from their stored runs."""
    groups: dict = {}
    for case in cases:
        tr = configs[case].get("config", {}).get("training", {})
        groups.setdefault((tr.get("lr"), tr.get("server_momentum")), []).append(_text(case))
    if len(groups) == 1:
        (lr, mom), = groups
        return f"η = {lr} with server momentum {mom} for every scheme"
    return "; ".join(f"η = {lr}, server momentum {mom}: {', '.join(names)}" for (lr, mom), names in groups.items())


def make(results_dirs: list[Path], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points, configs, calibrated, left_out = merged_points(list(results_dirs))
    if not points:
        raise NoFinishedRuns(f"no finished run of the population sweep's cases in {[str(d) for d in results_dirs]}")
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    cases = _order(points)
    for i, case in enumerate(cases):
        keys = sorted((k for k in points if k[0] == case), key=lambda k: eps_x(k[1]))
        x = np.array([eps_x(k[1]) for k in keys])
        vals = [np.array(list(points[k].values())) for k in keys]
        label, acc = _base(case)
        style = "--" if label == "ideal" else "-." if acc else ":" if label in VARIANTS else "-"
        color = _color(case)
        ax.plot(x, [v.mean() for v in vals], marker=MARKERS[i % len(MARKERS)], ls=style, color=color, label=_text(case))
        if max(v.size for v in vals) > 1:
            ax.fill_between(x, [v.min() for v in vals], [v.max() for v in vals], color=color, alpha=0.15, lw=0)
    ax.set_xscale("log", base=2)
    ticks = sorted({eps_x(k[1]) for k in points})
    ax.set_xticks(ticks, ["∞" if t == INF_X else f"{t:g}" for t in ticks])
    ax.minorticks_off()
    finish_single_panel(fig, ax, xlabel="target ε (δ = 10⁻⁵, client level, replace-one)",
                        title="Cross-device population: accuracy against ε")
    cfg = configs[cases[0]].get("config", {})  # K, M and the SNR are every case's
    seeds = sorted({s for v in points.values() for s in v})
    part, tr, phy = cfg.get("partition", {}), cfg.get("training", {}), cfg.get("phy", {})
    caption = (f"Final test accuracy against the target ε on the FedProx synthetic population: K = "
               f"{tr.get('clients_per_round')} of M = {part.get('clients')} clients per round, {phy.get('snr_db')} dB, "
               f"every scheme calibrated to ε at δ = 10⁻⁵ (RDP unless its curve names another accountant; client level, "
               f"replace-one, sampling without replacement), {_training(configs, cases)}. "
               f"Merged from the sweep's slices (seeds {seeds}; each point's seeds in the table); lines: mean over "
               f"its seeds, bands: min–max.{' Dashed: the noiseless ideal (ε = ∞).' if 'ideal' in cases else ''}"
               f"{' Dotted: a variant outside the whole sweep (its own η and momentum).' if any(_base(c)[0] in VARIANTS for c in cases) else ''}"
               f"{_accountants(calibrated, cases)} "
               + (f"Not drawn (another number of rounds than the {cfg.get('run', {}).get('rounds')} here): "
                  f"{'; '.join(left_out)}. " if left_out else "")
               + f"{SNR_DEFINITION}.")
    paths = save_figure(fig, out_dir, STEM, caption)
    paths.append(_table(points, cases, out_dir))
    return paths


def _table(points: dict, cases: list[str], out_dir: Path) -> Path:
    from scenarios.store import atomic_write_text

    eps_all = sorted({k[1] for k in points}, key=eps_x)
    head = [f"ε = {'∞' if math.isinf(e) else f'{e:g}'}" for e in eps_all]
    lines = [f"# {STEM}: final test accuracy [%] mean [min, max] (seeds) per case and target ε", "",
             "| case | " + " | ".join(head) + " |", "| --- |" + " --- |" * len(head)]
    for case in cases:
        cells = []
        for e in eps_all:
            got = points.get((case, e))
            if not got:
                cells.append("—")
                continue
            v = np.array(list(got.values()))
            cells.append(f"{v.mean():.1f} [{v.min():.1f}, {v.max():.1f}] ({', '.join(str(s) for s in sorted(got))})")
        lines.append(f"| {_text(case)} | " + " | ".join(cells) + " |")
    path = Path(out_dir) / f"{STEM}.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
