"""Figures regenerate from stored results alone.

A small results set is generated here: the project's four sweep files (their ``--quick``
variants, two seeds) expanded and validated by the real scenario loader, with a fake runner
that writes deterministic ``metrics.csv`` / ``config.json`` / ``DONE`` instead of training.
``floras figures`` must then draw every figure from those files, with the documented
conventions (mean line, min–max band over seeds, captions with the SNR definition and the ε
assumptions).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from scenarios.cli.main import main
from scenarios.experiments.sweep import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ("fig4", "fig5", "snr_sweep", "privacy_sweep", "fig4_tuned")
HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"
ASSUMPTIONS = "threat model T1 (fake accountant for figure tests)"


def fake_curve(cfg, rnd: int) -> tuple[float, float]:
    """(train loss, test accuracy): depends on scheme, SNR, N, partition and seed."""
    phy = cfg.phy
    rate = 0.15 if cfg.partition.kind == "iid" else 0.08
    penalty = 0.02 * (phy.of("floras").N - cfg.training.clients_per_round) + (0.1 if phy.scheme == "channel-inversion" and phy.snr_db < 5 else 0)
    acc = 0.9 * (1 - math.exp(-rate * rnd)) - penalty + 0.01 * cfg.run.seed
    return 2.3 * math.exp(-rate * rnd) + 0.1 + penalty, acc


def fake_runner(cfg, out_dir, *, resume, progress):
    out_dir = Path(out_dir)
    gamma = cfg.phy.of("floras").N - cfg.training.clients_per_round
    report = {"assumptions": [ASSUMPTIONS, f"noise scale γ = {gamma}"], "best_order": 1.5 + gamma, "warnings": []}
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict(), "privacy_report": report}))
    rows = [HEADER]
    for rnd in range(1, cfg.run.rounds + 1):
        loss, acc = fake_curve(cfg, rnd)
        eps = math.inf if gamma == 0 or cfg.phy.scheme != "floras" else 40.0 / gamma * math.sqrt(rnd / 40)
        rows.append(f"{rnd},{loss!r},{loss * 1.1!r},{acc!r},0.01,,,{eps!r},{0.1 * rnd!r}")
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    jobs = []
    for name in SWEEPS:
        sweep = load_sweep(ROOT / "scenarios" / f"{name}.toml", quick=True)
        jobs.append((replace(sweep, seeds=(0, 1)), root / sweep.name))
    run_sweep(jobs, runner=fake_runner, progress=False, echo=None)
    return root


def test_every_figure_regenerates_from_stored_results(results, tmp_path, capsys):
    out = tmp_path / "figs"
    assert main(["figures", "--results", str(results), "--out", str(out)]) == 0
    stems = ["fig4_floras_vs_channel_inversion", "fig5_privacy_cost", "snr_sweep_accuracy", "privacy_utility", "fig4_tuned_lr"]
    for stem in stems:
        for ext in ("png", "pdf"):
            assert (out / f"{stem}.{ext}").stat().st_size > 10_000
        caption = (out / f"{stem}.caption.txt").read_text()
        assert "SNR = P/σ²" in caption and "min–max over seeds" in caption and "digits" in caption
    for stem in ("fig5_privacy_cost", "privacy_utility"):
        text = (out / f"{stem}.caption.txt").read_text()
        assert f"ε assumptions (all curves): {ASSUMPTIONS}." in text
        assert "noise scale γ = 5" in text and "noise scale γ = 0" in text  # per-curve clauses kept
    tables = (out / "summary_tables.md").read_text()
    assert "### `fig5`" in tables and "| `iid_N-25` | 2 |" in tables
    # regenerating gives the same pixels
    first = (out / f"{stems[0]}.png").read_bytes()
    assert main(["figures", "--results", str(results), "--out", str(out)]) == 0
    assert (out / f"{stems[0]}.png").read_bytes() == first


def test_learning_curve_panels_show_mean_and_min_max_band(results):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.collections import PolyCollection

    from figures.common import case_title, learning_curves, load_results

    res = load_results(results / "fig4")
    fig = learning_curves(res, curve_label=lambda rs: rs.point["slug"], curve_style=lambda rs: {},
                          title="t", row_title=case_title)
    axes = fig.axes
    assert len(axes) == 4  # (a) loss IID, (b) accuracy IID, (c) loss non-IID, (d) accuracy non-IID
    assert [a.get_title()[:3] for a in axes] == ["(a)", "(b)", "(c)", "(d)"]
    assert "IID" in axes[0].get_title() and "non-IID" in axes[2].get_title()
    assert axes[1].get_ylabel() == "test accuracy [%]" and axes[0].get_xlabel() == "communication round t"
    rs = next(r for r in res.runsets if r.label == "iid")
    line = next(l for l in axes[1].get_lines() if l.get_label() == rs.point["slug"])
    acc = 100 * rs.metrics["test_accuracy"]
    assert acc.shape == (2, 40)
    np.testing.assert_allclose(line.get_ydata(), acc.mean(axis=0))
    np.testing.assert_allclose(line.get_xdata(), np.arange(1, 41))
    bands = [c for c in axes[1].collections if isinstance(c, PolyCollection)]
    assert len(bands) == 4
    ys = np.concatenate([b.get_paths()[0].vertices[:, 1] for b in bands])
    assert ys.min() == pytest.approx(100 * min(r.metrics["test_accuracy"].min() for r in res.runsets if r.label == "iid"))
    assert ys.max() == pytest.approx(100 * max(r.metrics["test_accuracy"].max() for r in res.runsets if r.label == "iid"))


def test_fig5_legend_carries_gamma_and_epsilon(results):
    from figures.common import load_results
    from figures.fig5 import final_epsilon, format_epsilon, gamma

    res = load_results(results / "fig5")
    gammas = sorted({gamma(rs) for rs in res.runsets})
    assert gammas == [0, 1, 5, 10]
    eps = {gamma(rs): final_epsilon(rs) for rs in res.runsets}
    assert math.isinf(eps[0]) and eps[1] > eps[5] > eps[10]
    assert format_epsilon(eps[0]) == "ε = ∞" and format_epsilon(eps[5], 6.5) == f"ε = {40 / 5:.3g} (α = 6.5)"


def test_figures_need_results(tmp_path, capsys):
    assert main(["figures", "--results", str(tmp_path)]) == 2
    assert "--results must contain at least one sweep directory" in capsys.readouterr().err
    assert main(["figures", "--results", str(tmp_path / "absent")]) == 2


def test_fig4_tuned_row_groups_cases_by_partition_and_names_each_eta(results, tmp_path, monkeypatch):
    """The tuned-η sweep's four (partition, scheme) cases are drawn as Fig. 4's two rows, each curve
    the mean of its own case's runs, labelled with the η stored in that case's configuration."""
    from figures import fig4, fig4_tuned
    from figures.common import load_finished

    res = fig4_tuned.regroup_by_partition(load_finished(results / "fig4_tuned"))
    assert res.labels == ["iid", "non-iid"]
    assert sorted(rs.point["label"] for rs in load_finished(results / "fig4_tuned").runsets if rs.label.startswith("non-iid")) == [
        "non-iid-channel-inversion", "non-iid-channel-inversion", "non-iid-floras", "non-iid-floras"]
    drawn = {}
    monkeypatch.setattr(fig4, "save_figure", lambda fig, out_dir, stem, caption, **kw: drawn.update(fig=fig, stem=stem) or [])
    fig4_tuned.make(results / "fig4_tuned", tmp_path)
    assert drawn["stem"] == "fig4_tuned_lr"
    axes = drawn["fig"].axes
    assert len(axes) == 4 and "non-IID" in axes[3].get_title() and "IID" in axes[1].get_title()
    lines = {l.get_label(): l for l in axes[3].get_lines()}
    assert sorted(lines) == sorted(f"{name}, SNR {snr} dB, η = 0.005" for name in ("FLORAS", "channel inversion") for snr in (15, 0))
    rs = next(r for r in res.runsets if r.label == "non-iid" and r.value("phy.scheme") == "floras" and float(r.value("phy.snr_db")) == 0)
    np.testing.assert_allclose(lines["FLORAS, SNR 0 dB, η = 0.005"].get_ydata(), 100 * rs.metrics["test_accuracy"].mean(axis=0))


def test_a_sweep_without_finished_runs_is_listed_not_fatal(results, tmp_path, capsys):
    """While a sweep is still running its directory holds only sweep.json: the other figures are drawn."""
    import shutil

    root = tmp_path / "res"
    shutil.copytree(results / "fig4", root / "fig4")
    (root / "fig5").mkdir()
    shutil.copy(results / "fig5" / "sweep.json", root / "fig5" / "sweep.json")  # no run finished
    assert main(["figures", "--results", str(root), "--out", str(tmp_path / "figs")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "figs" / "fig4_floras_vs_channel_inversion.png").is_file()
    assert not (tmp_path / "figs" / "fig5_privacy_cost.png").exists()
    assert f"fig5 (no finished run yet in {root / 'fig5'})" in out


def test_curves_join_the_rounds_that_were_evaluated():
    """With training.eval_every = 10 the skipped rounds hold no value; the line joins rounds 10, 20, …
    and the last, and a NaN in an evaluated round (divergence) is kept."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.common import RunSet, evaluated_rounds, plot_band

    rounds = np.arange(1.0, 26.0)
    acc = np.full((2, 25), np.nan)
    acc[:, 9::10] = [[0.5, 0.6], [0.7, 0.8]]
    acc[:, -1] = [0.65, 0.85]
    rs = RunSet(point={"overrides": {"training.eval_every": 10}}, seeds=[0, 1],
                metrics={"round": np.stack([rounds, rounds]), "test_accuracy": acc}, configs=[], run_dirs=[])
    keep = evaluated_rounds(rs)
    assert np.flatnonzero(keep).tolist() == [9, 19, 24]
    fig, ax = plt.subplots()
    plot_band(ax, rs.rounds, acc, scale=100.0, keep=keep)
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), [10, 20, 25])
    np.testing.assert_allclose(line.get_ydata(), [60, 70, 75])
    plt.close(fig)


@pytest.mark.faults
def test_foreign_entries_of_the_results_tree_are_listed_once_and_the_rest_drawn(results, tmp_path, capsys):
    """A README, a stray folder, a file named like a sweep and a folder whose sweep.json is a folder."""
    import shutil

    root = tmp_path / "res"
    shutil.copytree(results / "fig4", root / "fig4")
    (root / "README.md").write_text("my notes\n")
    (root / "stray").mkdir()
    (root / "stray" / "notes.txt").write_text("x")
    (root / "fig5").write_text("not a sweep\n")  # a file named like a sweep
    (root / "odd" / "sweep.json").mkdir(parents=True)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "fig4" not in p.parts}
    assert main(["figures", "--results", str(root), "--out", str(root / "figures")]) == 0
    out = capsys.readouterr().out
    line = f"--results {root}: ignored 4 entries that hold no sweep results (no sweep.json, not audit/ or privacy/): " \
           "README.md, fig5, odd/, stray/"
    assert out.count("ignored 4 entries") == 1 and line in out
    assert (root / "figures" / "fig4_floras_vs_channel_inversion.png").is_file()
    tables = (root / "figures" / "summary_tables.md").read_text()
    assert "### `fig4`" in tables and "odd" not in tables and "stray" not in tables
    assert {p: p.read_bytes() for p in before} == before  # never touched
