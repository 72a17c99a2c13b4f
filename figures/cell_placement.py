"""Labels placed at random or by distance in a cell (``scenarios/cell_placement.toml``; model §5.1, §6.2, §8), from
stored results only: per case, the test accuracy and the least accurate label's test accuracy (``worst_class_accuracy``)
for both placements, each the mean over the evaluations in the last fifth of training (rounds > 0.8·T; a single
round's value moves by points between evaluations), mean over seeds with min–max bars.

Its ``.table.md`` adds, per case and placement, the final-round accuracy, the mean admitted clients per round
against the model's prediction, and the heard share of each label (model §8):

    h_ℓ = Σ_c n_{c,ℓ}·e^(−g_th/β_eff,c) / Σ_c n_{c,ℓ},

n_{c,ℓ} client c's examples of label ℓ (the run's stored partition histograms, after placement) and β_eff,c the
client's large-scale gain recomputed from the stored configuration (:func:`figures.cell_drop.client_drop`); the
predicted admitted mean per round is K·mean_c e^(−g_th/β_eff,c) (uniform sampling of K of M, Rayleigh |h̃|² ~ Exp(1)).
Both are given only for a scheme that truncates by β_eff·|h̃|² ≥ g_th with one antenna, Rayleigh fading and exact
CSI (channel inversion and analog Gaussian, model §6.2, §9.1); FLORAS without CSIT hears every sampled client.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .common import SNR_DEFINITION
from .matched import COLORS, SCHEME_TEXT

SWEEP = "cell_placement"
STEM = "cell_placement_accuracy"
KEY = "partition.placement"
PLACEMENTS = ("random", "by-distance")
MARK = {"random": "o", "by-distance": "s"}
TRUNCATING = ("channel-inversion", "analog-gaussian")
LATE = 0.8  # the last fifth of the rounds
SCENARIO = {"umi": "UMi street canyon", "uma": "UMa", "rma": "RMa"}


def late_mean(rs, column: str) -> np.ndarray:
    """Per seed, the mean of ``column`` over its evaluated rounds t > LATE·T, ``[n_seeds]``."""
    rounds = rs.rounds
    values = rs.metrics[column][:, rounds > LATE * rounds[-1]]
    return np.nanmean(values, axis=1)


def admission(config_record: dict) -> np.ndarray | None:
    """[M] each client's admission probability e^(−g_th/β_eff,c) in the stored run's drop, or None where that law
    does not apply (module docstring). Cached per (configuration, seed): the figure asks for the same drop often."""
    phy = config_record["config"]["phy"]
    if (phy.get("scheme") not in TRUNCATING or int(phy.get("rx_antennas", 1)) != 1 or float(phy.get("rician_k", 0.0))
            or float(phy.get("csi_error", 0.0)) or phy.get("pathloss", "none") == "none"):
        return None
    key = json.dumps([config_record["config"], config_record["seed"],
                      (config_record.get("aggregator") or {}).get("cell")], sort_keys=True, default=str)
    if key not in _ADMISSION:
        from .cell_drop import client_drop

        beta = 10.0 ** (client_drop(config_record)["beta_eff_db"] / 10.0)
        _ADMISSION[key] = np.exp(-float(phy["g_th"]) / beta)
    return _ADMISSION[key]


_ADMISSION: dict[str, np.ndarray] = {}


def heard_shares(config_record: dict) -> np.ndarray | None:
    """h_ℓ for every label (module docstring) of a stored run, or None where the admission law does not apply."""
    admit = admission(config_record)
    if admit is None:
        return None
    hist = np.asarray(config_record["derived"]["partition"]["histograms"], dtype=np.float64)  # [M, C]
    if hist.shape[0] != admit.size:
        raise ValueError(f"the stored partition has {hist.shape[0]} clients, the drop {admit.size}")
    held = hist.sum(axis=0)
    return np.where(held > 0, admit @ hist / np.maximum(held, 1.0), np.nan)


def late_label_accuracy(run_dir) -> np.ndarray | None:
    """[C] each label's test accuracy averaged over the evaluations in rounds > LATE·T (``class_accuracy.csv``);
    None for a run written before the file existed."""
    from scenarios.store import read_class_accuracy

    rec = read_class_accuracy(run_dir)
    if rec is None or not rec["round"].size:
        return None
    late = rec["round"] > LATE * rec["round"].max()
    return np.nanmean(rec["accuracy"][late], axis=0)


def heard_gap(rs, n: int = 3) -> tuple[np.ndarray, np.ndarray] | None:
    """Per seed, the late accuracy of its ``n`` least-heard labels and of its ``n`` most-heard ones (by that seed's
    h_ℓ), ``([n_seeds], [n_seeds])``; None where h_ℓ or the per-label record is missing."""
    low, high = [], []
    for cfg, run_dir in zip(rs.configs, rs.run_dirs):
        h, acc = heard_shares(cfg), late_label_accuracy(run_dir)
        if h is None or acc is None:
            return None
        order = np.argsort(h, kind="stable")
        low.append(np.nanmean(acc[order[:n]]))
        high.append(np.nanmean(acc[order[-n:]]))
    return np.array(low), np.array(high)


def predicted_admitted(config_record: dict) -> float:
    """K·mean_c e^(−g_th/β_eff,c) over the M clients of the stored run's drop (module docstring)."""
    admit = admission(config_record)
    if admit is None:
        raise ValueError("the run's scheme does not truncate by β_eff·|h̃|² ≥ g_th with one antenna and exact CSI")
    return int(config_record["config"]["training"]["clients_per_round"]) * float(np.mean(admit))


def _labels(res) -> list:
    return list(dict.fromkeys(rs.label for rs in res.runsets))


def _text(label: str) -> str:
    if label.startswith("channel-inversion-gth"):
        return f"channel inversion (no privacy), g_th = {label.removeprefix('channel-inversion-gth')}"
    return SCHEME_TEXT.get(label, label)


def _tick(label: str) -> str:
    if label.startswith("channel-inversion-gth"):
        return f"channel\ninversion\ng_th = {label.removeprefix('channel-inversion-gth')}"
    return {"analog-gaussian": "analog\nGaussian", "floras-none-capped": "FLORAS, no CSIT,\ncapped receiver"}.get(
        label, SCHEME_TEXT.get(label, label))


def _fmt(a: np.ndarray) -> str:
    a = 100.0 * np.asarray(a)
    return f"{a.mean():.1f} [{a.min():.1f}, {a.max():.1f}]"


def write_table(res, out_dir: Path, cost: dict | None = None) -> Path:
    from scenarios.store import atomic_write_text

    lines = [f"# {res.name}: accuracy [%] mean [min, max] over seeds, by label placement", "",
             f"Late: mean over the evaluations in rounds > {LATE:g}·T. Heard share h_ℓ per label ℓ = 0, 1, … (model §8): "
             "mean over seeds of Σ_c n_c,ℓ·e^(−g_th/β_eff,c) / Σ_c n_c,ℓ; predicted admitted: K·mean_c e^(−g_th/β_eff,c).",
             "Least / most heard: the late accuracy of each seed's three labels of smallest / largest h_ℓ.",
             "", "| case | placement | final accuracy | late accuracy | late worst label | late, 3 least heard labels | "
             "late, 3 most heard labels | admitted (predicted) | heard share h_ℓ, min … max |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label in _labels(res):
        for placement in PLACEMENTS:
            rs = next((r for r in res.runsets if r.label == label and r.value(KEY) == placement), None)
            if rs is None:
                continue
            shares = [heard_shares(c) for c in rs.configs]
            adm = rs.metrics.get("admitted")
            if adm is not None and np.isfinite(adm).any() and shares[0] is not None:
                pred = np.mean([predicted_admitted(c) for c in rs.configs])
                admitted = f"{float(np.nanmean(adm)):.2f} ({pred:.2f})"
            else:
                admitted = "all sampled"
            if shares[0] is None:
                heard = "1 (no truncation)"
            else:
                h = np.nanmean(np.array(shares), axis=0)
                heard = " ".join(f"{v:.2f}" for v in h) + f" (min {np.nanmin(h):.2f}, max {np.nanmax(h):.2f})"
            worst = late_mean(rs, "worst_class_accuracy") if "worst_class_accuracy" in rs.metrics else None
            gap = heard_gap(rs)
            lo, hi = (_fmt(gap[0]), _fmt(gap[1])) if gap is not None else ("—", "—")
            lines.append(f"| {_text(label)} | {placement} | {_fmt(rs.final('test_accuracy'))} | "
                         f"{_fmt(late_mean(rs, 'test_accuracy'))} | {_fmt(worst) if worst is not None else '—'} | "
                         f"{lo} | {hi} | {admitted} | {heard} |")
    lines += cost_lines(cost or {})
    path = Path(out_dir) / f"{res.directory.name}_accuracy.table.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def _caption(res, record, cfg) -> str:
    phy, part, pr = cfg.get("phy", {}), cfg.get("partition", {}), cfg.get("privacy", {})
    tr = cfg.get("training", {})
    used = {p["label"]: p["lr"] for p in record.get("points", []) if p.get("lr") is not None}
    seeds = sorted({s for rs in res.runsets for s in rs.seeds})
    rounds = max(int(rs.metrics["round"].shape[1]) for rs in res.runsets)
    quick = " (--quick variant)" if res.manifest.get("quick") else ""
    targets = sorted({str(rs.value("privacy.target_epsilon")) for rs in res.runsets
                      if not str(rs.label).startswith("channel-inversion")})
    return (f"Left: test accuracy; middle: the least accurate label's test accuracy; each the mean over the evaluations "
            f"in the last fifth of training, mean over seeds with min–max bars. Right: what truncation costs each label, "
            f"its accuracy (same late mean) at the highest threshold minus at the lowest (same placement and seed, so "
            f"the label's own difficulty cancels), against its heard share h_ℓ = Σ_c n_c,ℓ·e^(−g_th/β_eff,c)/Σ_c "
            f"n_c,ℓ at the highest threshold; every label of every seed. Circles: partition rows placed at random; "
            f"squares: placed by distance (the k-th nearest client holds the row with the k-th smallest mean label, "
            f"model §8). Partition {part.get('kind')} ({part.get('shards_per_client')} per client), "
            f"{phy.get('cell_radius'):g} m TR 38.901 {SCENARIO.get(phy.get('pathloss'), phy.get('pathloss'))} cell, "
            f"one fixed drop per seed, SNR {phy.get('snr_db')} dB referred to the {phy.get('snr_reference')} (model "
            f"§5.1). Channel inversion releases without privacy noise (ε = ∞)"
            + (f"; the other schemes are calibrated to ε = {', '.join(targets)} at δ = {pr.get('delta')} (T1, accountant "
               f"{pr.get('accountant')}, {pr.get('level')}-level {pr.get('relation')} relation)" if targets else "")
            + f"; K = {tr.get('clients_per_round')} of M = "
            f"{part.get('clients')} clients sampled uniformly without replacement each round; η per case: "
            + ", ".join(f"{k} {v:g}" for k, v in used.items())
            + f". {SNR_DEFINITION}. Data set: {cfg.get('data', {}).get('name')}{quick}; seeds {seeds}; {rounds} rounds.")


def truncation_cost(res) -> dict:
    """{placement: (h [n], cost [n], (g_lo, g_hi))}: for every label and seed, its heard share h_ℓ at the highest
    threshold g_hi of the sweep's truncating scheme and its late accuracy at g_hi minus at the lowest g_lo (same
    scheme, placement and seed: the label's own difficulty cancels). Empty when the sweep has no such pair."""
    out = {}
    sets = [rs for rs in res.runsets if rs.configs and heard_shares(rs.configs[0]) is not None]
    for placement in PLACEMENTS:
        for scheme in dict.fromkeys(str(rs.value("phy.scheme")) for rs in sets):
            mine = [rs for rs in sets if rs.value(KEY) == placement and str(rs.value("phy.scheme")) == scheme]
            if len({float(rs.value("phy.g_th")) for rs in mine}) < 2:
                continue
            lo = min(mine, key=lambda rs: float(rs.value("phy.g_th")))
            hi = max(mine, key=lambda rs: float(rs.value("phy.g_th")))
            hs, costs = [], []
            for seed, cfg, run_dir in zip(hi.seeds, hi.configs, hi.run_dirs):
                if seed not in lo.seeds:
                    continue
                a_hi, a_lo = late_label_accuracy(run_dir), late_label_accuracy(lo.run_dirs[lo.seeds.index(seed)])
                if a_hi is None or a_lo is None:
                    continue
                hs.append(heard_shares(cfg))
                costs.append(a_hi - a_lo)
            if hs:
                out[placement] = (np.concatenate(hs), np.concatenate(costs),
                                  (float(lo.value("phy.g_th")), float(hi.value("phy.g_th"))))
            break  # one truncating scheme per placement: the first listed
    return out


def cost_lines(cost: dict) -> list[str]:
    """Markdown: per placement, the correlation of h_ℓ with the truncation's cost and the mean cost of the labels
    in the lowest and highest 30 % of h_ℓ."""
    if not cost:
        return []
    (g_lo, g_hi) = next(iter(cost.values()))[2]
    lines = ["", f"Truncation's cost per label: late accuracy at g_th = {g_hi:g} minus at g_th = {g_lo:g} [points], "
             "same placement and seed, every label of every seed, against the label's heard share at the higher "
             "threshold.", "", "| placement | labels × seeds | h_ℓ range | correlation of h_ℓ and cost | mean cost | "
             "cost, h_ℓ in the lowest 30 % | cost, h_ℓ in the highest 30 % |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for placement, (h, c, _) in cost.items():
        ok = np.isfinite(h) & np.isfinite(c)
        h, c = h[ok], 100.0 * c[ok]
        low, high = c[h <= np.quantile(h, 0.3)], c[h >= np.quantile(h, 0.7)]
        lines.append(f"| {placement} | {h.size} | {h.min():.2f} … {h.max():.2f} | {np.corrcoef(h, c)[0, 1]:.2f} | "
                     f"{c.mean():+.1f} | {low.mean():+.1f} ({low.size}) | {high.mean():+.1f} ({high.size}) |")
    return lines


def draw_labels(ax, res, cost: dict) -> None:
    """Each label's truncation cost against its heard share (:func:`truncation_cost`), every seed."""
    if not cost:
        ax.set_axis_off()
        return
    for placement, (h, c, (g_lo, g_hi)) in cost.items():
        ax.plot(h, 100.0 * c, ls="", marker=MARK[placement], ms=5, alpha=0.7, color="tab:orange",
                mfc="white" if placement == "random" else None)
    ax.axhline(0.0, color="0.4", lw=0.8)
    ax.set_xlabel(f"the label's heard share h_ℓ at g_th = {g_hi:g} (model §8)")
    ax.set_ylabel(f"the label's accuracy, g_th = {g_hi:g} − g_th = {g_lo:g} [points]")
    ax.grid(True, alpha=0.3)
    ax.set_title("what truncation costs each label (every label and seed)", fontsize=9)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .common import load_finished, save_figure
    from .layout import request_legend
    from .matched import read_matched

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    cfg = res.config().get("config", {})
    labels = _labels(res)
    fig, axes = plt.subplots(1, 3, figsize=(14.0, 4.8), gridspec_kw={"width_ratios": [1, 1, 0.9]})
    for ax, column, name in zip(axes[:2], ("test_accuracy", "worst_class_accuracy"),
                                ("test accuracy [%]", "least accurate label's test accuracy [%]")):
        for i, label in enumerate(labels):
            for j, placement in enumerate(PLACEMENTS):
                rs = next((r for r in res.runsets if r.label == label and r.value(KEY) == placement), None)
                if rs is None or column not in rs.metrics:
                    continue
                v = 100.0 * late_mean(rs, column)
                x = i + (j - 0.5) * 0.3
                ax.errorbar([x], [v.mean()], yerr=[[v.mean() - v.min()], [v.max() - v.mean()]], marker=MARK[placement],
                            color=COLORS.get(label, COLORS.get(label.rsplit("-", 1)[0], "tab:gray")), capsize=3, ls="",
                            mfc="white" if placement == "random" else None)
        ax.set_xticks(range(len(labels)), [_tick(lab) for lab in labels], fontsize=7)
        ax.tick_params(axis="y", labelleft=True)
        ax.set_ylabel(name)
        ax.set_ylim(0, 100)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_xlim(-0.6, len(labels) - 0.4)
    cost = truncation_cost(res)
    draw_labels(axes[2], res, cost)
    for placement in PLACEMENTS:  # legend proxies in grey: the colour is the case's
        axes[0].plot([], [], marker=MARK[placement], ls="", color="0.3", mfc="white" if placement == "random" else None,
                     label=placement)
    request_legend(axes[0], fontsize=8, framealpha=0.85, title="label placement")
    fig.suptitle(f"Labels tied to position in a {cfg.get('phy', {}).get('cell_radius', math.nan):g} m cell", fontsize=11)
    paths = save_figure(fig, out_dir, f"{Path(results_dir).name}_accuracy", _caption(res, record, cfg))  # STEM for SWEEP
    paths.append(write_table(res, out_dir, cost))
    return paths
