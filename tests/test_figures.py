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


def test_a_sweep_without_a_figure_of_its_own_gets_its_table(results, tmp_path, capsys):
    """A results folder holding only a sweep that no figure module draws (a slice of a registered sweep, or a user's
    own sweep file) is summarized in the tables and named once, not refused."""
    import shutil

    root = tmp_path / "res"
    shutil.copytree(results / "fig4", root / "my_slice")
    capsys.readouterr()
    assert main(["figures", "--results", str(root), "--out", str(tmp_path / "figs")]) == 0
    out = capsys.readouterr().out
    assert "tables only (no figure of their own): my_slice" in out
    assert "### `my_slice`" in (tmp_path / "figs" / "summary_tables.md").read_text()
    assert not list((tmp_path / "figs").glob("*.png"))


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


# --- paper-ready figures: legends, labels, markers, medians, captions, ε = ∞ -------------------------------


def _display_points(ax) -> np.ndarray:
    """Every line of ``ax`` in display coordinates: vertices plus points every pixel along each segment
    (written here, not taken from figures.layout, so that a wrong check there cannot hide a covered line)."""
    pts = [np.empty((0, 2))]
    for line in ax.get_lines():
        if line.get_gid() == "decoration":
            continue
        xy = line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        pts.append(xy)
        if line.get_linestyle() not in ("None", "none", ""):
            for a, b in zip(xy[:-1], xy[1:]):
                n = max(2, int(np.hypot(*(b - a))))
                pts.append(a + np.linspace(0, 1, n)[:, None] * (b - a))
    return np.concatenate(pts)


def _covered(legend, axes, renderer) -> int:
    box = legend.get_window_extent(renderer)
    return sum(int(np.count_nonzero((p[:, 0] > box.x0) & (p[:, 0] < box.x1) & (p[:, 1] > box.y0) & (p[:, 1] < box.y1)))
               for p in (_display_points(ax) for ax in axes))


def _renderer(fig):
    """A renderer of a figure that save_figure has closed (pyplot detaches its canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _saved_figures(monkeypatch, module):
    """Call-through spy on ``module.save_figure``: the figures it wrote, after their final layout."""
    drawn = []
    real = module.save_figure

    def spy(fig, *args, **kw):
        paths = real(fig, *args, **kw)
        drawn.append(fig)
        return paths

    monkeypatch.setattr(module, "save_figure", spy)
    return drawn


DRAWN = (("fig4", "fig4"), ("snr_sweep", "snr_sweep"), ("privacy_utility", "privacy_sweep"), ("matched_snr", "snr_sweep"))


@pytest.fixture(scope="module")
def drawn(results, tmp_path_factory):
    """{module name: the figure it wrote} for :data:`DRAWN`, each drawn once from the fake results.
    matched_accuracy_vs_snr is drawn from the SNR sweep's runs, one case per scheme (no matched.json:
    every point as run)."""
    import importlib

    from figures.common import load_finished

    def by_scheme(path):  # the matched sweep's cases are schemes: label each run by its scheme
        res = load_finished(path)
        return replace(res, runsets=[replace(rs, point={**rs.point, "label": rs.value("phy.scheme")}) for rs in res.runsets])

    out = tmp_path_factory.mktemp("drawn")
    figs = {}
    with pytest.MonkeyPatch.context() as mp:
        for name, sweep in DRAWN:
            module = importlib.import_module(f"figures.{name}")
            saved = _saved_figures(mp, module)
            if name == "matched_snr":
                mp.setattr(module, "load_finished", by_scheme)
            module.make(results / sweep, out)
            (figs[name],) = saved
    return figs


@pytest.mark.parametrize("name", [name for name, _ in DRAWN])
def test_no_legend_covers_a_data_line(drawn, name):
    """In the written figure, no legend box holds a point of any line (measured with the renderer)."""
    fig = drawn[name]
    renderer = _renderer(fig)
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(leg, fig.axes) for leg in fig.legends]
    assert legends
    for legend, axes in legends:
        assert _covered(legend, axes, renderer) == 0, f"{name}: a legend covers data"


def test_a_crowded_panel_gets_its_legend_outside_the_axes(tmp_path):
    """Lines through every part of the panel leave no free spot inside: the legend goes beside the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures.common import save_figure
    from figures.layout import request_legend

    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.linspace(0, 1, 50)
    for level in np.linspace(0, 1, 12):  # horizontal lines every 1/11 of the height cross every location
        ax.plot(x, np.full_like(x, level), label=f"level {level:.2f}")
    request_legend(ax, fontsize=7)
    save_figure(fig, tmp_path, "crowded", "caption")
    renderer = _renderer(fig)
    assert ax.get_legend() is None and len(fig.legends) == 1
    assert _covered(fig.legends[0], [ax], renderer) == 0
    assert fig.legends[0].get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1


def test_learning_curves_that_fill_every_panel_get_their_legend_beside_the_panels(tmp_path):
    """Twelve accuracy curves flat at levels spread over the whole panel (and losses spread over the log
    axis) leave no free corner: the written learning-curve figure has no legend inside a panel and one
    beside the panels that covers no line (a legend at matplotlib's "best" spot would cover some)."""
    import matplotlib

    matplotlib.use("Agg")
    from figures.common import RunSet, SweepResults, learning_curves, save_figure

    rounds = np.arange(1.0, 31.0)
    runsets = []
    for i, level in enumerate(np.linspace(0.0, 1.0, 12)):
        metrics = {"round": rounds[None, :], "test_accuracy": np.full((1, 30), level),
                   "train_loss": np.full((1, 30), 10.0 ** (2 * level - 1))}
        runsets.append(RunSet(point={"label": "iid", "overrides": {}, "slug": f"c{i}"}, seeds=[0], metrics=metrics,
                              configs=[], run_dirs=[]))
    res = SweepResults(name="t", directory=Path("."), manifest={}, runsets=runsets)
    fig = learning_curves(res, curve_label=lambda r: r.point["slug"], curve_style=lambda r: {}, title="t", row_title=str)
    save_figure(fig, tmp_path, "full", "caption")
    renderer = _renderer(fig)
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    assert _covered(fig.legends[0], fig.axes, renderer) == 0
    assert len(fig.legends[0].get_texts()) == 12  # the two panels' legends merged, each curve once


def test_paper_style_puts_a_crowded_legend_below_and_keeps_the_column_width(tmp_path):
    """In the paper style a one-column figure's homeless legend goes under the axis label, and the
    written PNG stays 3.5 in wide (300 dpi, plus the 0.04 in pad on both sides)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from figures.common import save_figure
    from figures.layout import request_legend
    from figures.style import figure_style

    with figure_style("paper"):
        fig, ax = plt.subplots(figsize=(6, 4))
        x = np.linspace(0, 1, 50)
        for level in np.linspace(0, 1, 12):
            ax.plot(x, np.full_like(x, level), label=f"level {level:.2f}")
        ax.set_xlabel("x label")
        request_legend(ax, fontsize=7)
        save_figure(fig, tmp_path, "crowded", "caption")
    renderer = _renderer(fig)
    (legend,) = fig.legends
    assert _covered(legend, [ax], renderer) == 0
    assert legend.get_window_extent(renderer).y1 <= ax.xaxis.label.get_window_extent(renderer).y0
    assert Image.open(tmp_path / "crowded.png").size[0] <= round(300 * (3.5 + 2 * 0.04)) + 1


def test_privacy_utility_point_labels_do_not_overlap(drawn):
    """The fake privacy sweep puts both SNRs' points at the same place (accuracy does not depend on the
    SNR there), so their "N=…" labels start on top of each other; in the written figure no two overlap."""
    fig = drawn["privacy_utility"]
    renderer = _renderer(fig)
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text().startswith("N=")]
        assert len(boxes) == 8  # 4 finite-ε values of N × 2 SNRs
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                assert not boxes[i].overlaps(boxes[j]), (ax.texts[i].get_text(), ax.texts[j].get_text())


def test_coinciding_curves_keep_distinct_markers(drawn):
    """Fig. 4's FLORAS curves coincide with channel inversion's at 15 dB in the fake results: every curve
    carries markers, at rounds no other curve of its panel marks, so that a hidden line still shows."""
    for ax in drawn["fig4"].axes:
        marked = []
        for line in ax.get_lines():
            assert line.get_marker() not in (None, "None", "", " ")
            start, step = line.get_markevery()
            marked.append(set(np.asarray(line.get_xdata())[start::step].tolist()))
        assert len(marked) == 4 and all(marked)
        for i in range(len(marked)):
            for j in range(i + 1, len(marked)):
                assert not marked[i] & marked[j]


def test_training_loss_is_the_median_over_seeds_and_a_diverged_seed_does_not_set_it():
    """Three seeds: losses 1 and 2 (per round) and a diverged seed (1e6, then NaN). The log-axis loss line is
    the median of the finite values: 2 while all three are finite, (1 + 2)/2 once the third is NaN;
    the accuracy line stays the mean."""
    import matplotlib

    matplotlib.use("Agg")
    from figures.common import RunSet, SweepResults, learning_curves

    rounds = np.arange(1.0, 5.0)
    loss = np.array([[1.0] * 4, [2.0] * 4, [1e6, 1e6, np.nan, np.nan]])
    acc = np.array([[0.5] * 4, [0.6] * 4, [0.1] * 4])
    rs = RunSet(point={"label": "iid", "overrides": {}}, seeds=[0, 1, 2],
                metrics={"round": np.stack([rounds] * 3), "train_loss": loss, "test_accuracy": acc}, configs=[], run_dirs=[])
    res = SweepResults(name="t", directory=Path("."), manifest={}, runsets=[rs])
    fig = learning_curves(res, curve_label=lambda r: "c", curve_style=lambda r: {}, title="t", row_title=str)
    loss_ax, acc_ax = fig.axes
    assert loss_ax.get_yscale() == "log"
    np.testing.assert_allclose(loss_ax.get_lines()[0].get_ydata(), [2.0, 2.0, 1.5, 1.5])
    np.testing.assert_allclose(acc_ax.get_lines()[0].get_ydata(), [40.0] * 4)  # mean of 50, 60, 10


@pytest.fixture(scope="module")
def one_seed(tmp_path_factory):
    root = tmp_path_factory.mktemp("one_seed")
    sweep = load_sweep(ROOT / "scenarios" / "snr_sweep.toml", quick=True)
    run_sweep([(replace(sweep, seeds=(0,)), root / sweep.name)], runner=fake_runner, progress=False, echo=None)
    return root / sweep.name


def test_one_seed_captions_claim_no_bands(one_seed, results, tmp_path, monkeypatch):
    """A one-seed SNR sweep draws no band and its caption says so; two seeds keep the min–max sentence."""
    from matplotlib.collections import PolyCollection

    from figures import snr_sweep

    drawn = _saved_figures(monkeypatch, snr_sweep)
    snr_sweep.make(one_seed, tmp_path / "one")
    caption = (tmp_path / "one" / "snr_sweep_accuracy.caption.txt").read_text()
    assert "band" not in caption.replace("no bands", "") and "one seed per curve" in caption
    assert not [c for ax in drawn[0].axes for c in ax.collections if isinstance(c, PolyCollection)]
    snr_sweep.make(results / "snr_sweep", tmp_path / "two")
    assert "bands: min–max over seeds" in (tmp_path / "two" / "snr_sweep_accuracy.caption.txt").read_text()


def _audit(threat: str, gamma: int, lower: float, upper) -> dict:
    return {"threat": threat, "gamma": gamma, "empirical_epsilon_lower": lower, "epsilon_upper": upper, "delta": 1e-5,
            "confidence": 0.95, "config": {"K": 20, "L": 64, "d": 10, "snr_db": 20.0, "csit": "none", "C": None},
            "game": {"max_reportable": 3.0, "saturated": False, "trials_per_world": 200, "neighbour": "replace"},
            "epsilon_upper_report": {"accountant": "rdp", "conversion": "standard", "relation": "replace"}}


def test_audit_epsilon_has_a_title_and_never_draws_infinity_at_a_finite_height(tmp_path, monkeypatch):
    """γ = 0 has accountant ε = ∞: it is drawn on a strip whose only y tick reads "∞", not on the log ε axis."""
    from figures import audit_epsilon

    for gamma, upper in ((0, "inf"), (1, 40.0), (5, 8.0)):
        (tmp_path / f"t1_{gamma}.json").write_text(json.dumps(_audit("T1", gamma, 0.5 / (gamma + 1), upper)))
    drawn = _saved_figures(monkeypatch, audit_epsilon)
    audit_epsilon.make(tmp_path, tmp_path / "fig")
    (fig,) = drawn
    axes = [ax for top in fig.axes for ax in [top, *top.child_axes]]
    assert any("ε" in ax.get_title() for ax in axes)  # the title sits above the ∞ strip
    log_axes = [ax for ax in axes if ax.get_yscale() == "log"]
    assert len(log_axes) == 1
    upper = next(l for l in log_axes[0].get_lines() if l.get_label().startswith("accountant ε upper bound"))
    assert list(upper.get_xdata()) == [1.0, 5.0] and list(upper.get_ydata()) == [40.0, 8.0]
    inf_lines = [(ax, l) for ax in axes for l in ax.get_lines() if "∞" in l.get_label()]
    assert len(inf_lines) == 1
    ax, line = inf_lines[0]
    assert ax is not log_axes[0] and list(line.get_xdata()) == [0.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["∞"]


def test_paper_style_is_column_wide_with_small_fonts_and_no_caption_in_the_image(results, tmp_path, monkeypatch):
    """`floras figures --style paper`: a one-panel figure is 3.5 in wide (300 dpi, ≤ the width plus the
    0.04 in pad on both sides), a two-column one 7.16 in; every text 6–8 pt; the caption only in the side
    file; no figure title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text
    from PIL import Image

    from figures import snr_sweep
    from figures.common import save_figure
    from figures.style import figure_style

    spied = _saved_figures(monkeypatch, snr_sweep)
    root = tmp_path / "res"
    root.mkdir()
    (root / "snr_sweep").symlink_to(results / "snr_sweep")
    out = tmp_path / "paper"
    assert main(["figures", "--results", str(root), "--out", str(out), "--style", "paper"]) == 0
    with figure_style("paper"):  # two columns of panels
        two, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax in axes:
            ax.plot([0, 1], [0, 1], label="a line")
        two.suptitle("a figure title", fontsize=11)
        save_figure(two, out, "two", "Data set: none.")
    pad = 2 * 0.04
    for fig, stem, width in ((spied[0], "snr_sweep_accuracy", 3.5), (two, "two", 7.16)):
        assert fig.get_figwidth() == pytest.approx(width)
        px = Image.open(out / f"{stem}.png").size[0]
        assert 0.8 * width * 300 < px <= (width + pad) * 300 + 1
        sizes = {t.get_fontsize() for t in fig.findobj(Text) if t.get_text()}
        assert min(sizes) >= 6.0 and max(sizes) <= 8.0
        assert "Data set:" in (out / f"{stem}.caption.txt").read_text()
        assert not any("Data set:" in t.get_text() for t in fig.findobj(Text)) and fig._suptitle is None


def test_population_slices_are_merged_into_one_accuracy_against_epsilon(tmp_path, capsys):
    """`floras figures` on a folder of matched_population slices (figures/population_epsilon.py): every finished run
    of the whole sweep's cases counts once per (case, ε, seed) across the slices (a seed stored in two slices is not
    counted twice), each point lists its seeds, and a slice is drawn, not 'tables only'."""
    sweep = load_sweep(ROOT / "scenarios" / "matched_population.toml", quick=True)
    infeasible = {("sqsgd", "inf"), ("ideal", 4)}  # what `floras matched` records and does not run
    sweep = replace(sweep, points=tuple(p for p in sweep.points if p.label in ("central-gaussian", "ideal")
                                        and (p.label, p.overrides["privacy.target_epsilon"]) not in infeasible))
    full = load_sweep(ROOT / "scenarios" / "matched_population.toml", quick=True)
    capped = next(p for p in full.points if p.label == "floras-none-capped" and p.overrides["privacy.target_epsilon"] == 4)
    variant = replace(capped, slug=capped.slug + "-nomomentum", label="floras-none-capped-nomomentum",
                      overrides={**capped.overrides, "training.server_momentum": 0.0, "training.lr": 0.2})
    retuned = replace(variant, overrides={**variant.overrides, "training.lr": 0.05})  # the same case at another η
    central = next(p for p in sweep.points if p.label == "central-gaussian")
    # a `floras tune` run (scored on the validation split) at yet another η: never in the figure
    tuning = replace(central, slug=central.slug + "-tune", overrides={**central.overrides, "training.lr": 0.3,
                                                                      "data.validation_fraction": 0.1,
                                                                      "data.evaluate_on": "validation"})
    longer = replace(central, slug=central.slug + "-long",  # the same case run twice as long: never merged
                     overrides={**central.overrides, "run.rounds": 2 * int(central.overrides.get("run.rounds", 30))})
    under_pld = replace(central, slug=central.slug + "-pld", overrides={**central.overrides, "privacy.accountant": "pld"})
    pld_at_8 = replace(under_pld, slug=central.slug + "-pld-8",
                       overrides={**under_pld.overrides, "privacy.target_epsilon": 8})
    root = tmp_path / "population"
    run_sweep([(replace(sweep, seeds=(0, 1)), root / "matched_population_a"),
               (replace(sweep, seeds=(1, 2)), root / "matched_population_b"),
               (replace(sweep, name="matched_population_nomomentum", points=(variant,), seeds=(0,)),
                root / "matched_population_nomomentum"),
               (replace(sweep, name="matched_population_pld", points=(pld_at_8, under_pld), seeds=(0,)),
                root / "matched_population_pld"),
               (replace(sweep, name="matched_population_retuned", points=(retuned,), seeds=(0,)),
                root / "matched_population_retuned"),
               (replace(sweep, name="matched_population_tune", points=(tuning,), seeds=(0,)),
                root / "matched_population_tune"),
               (replace(sweep, name="matched_population_0longer", points=(longer,), seeds=(0,)),  # sorts first
                root / "matched_population_0longer")],
              runner=fake_runner, progress=False, echo=None)
    capsys.readouterr()
    assert main(["figures", "--results", str(root), "--out", str(tmp_path / "figs")]) == 0
    out = capsys.readouterr().out
    assert "population_epsilon:" in out and "tables only" not in out
    table = (tmp_path / "figs" / "population_accuracy_vs_epsilon.table.md").read_text()
    assert "| case | ε = 4 | ε = 8 | ε = ∞ |" in table  # ε = 8: the second pld point's
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| ")}
    central = rows["central Gaussian"]
    # fake accuracy at the last round: 0.9·(1 − e^(−0.15·T)) − penalty + 0.01·seed, seeds 0, 1, 2 once each
    from scenarios.config.loading import scenario_from_dict

    cfg = scenario_from_dict(json.loads(next((root / "matched_population_a").glob("central-gaussian_*seed0*/config.json"))
                                        .read_text())["config"], resolve=False)
    accs = [100 * fake_curve(replace(cfg, run=replace(cfg.run, seed=s)), cfg.run.rounds)[1] for s in (0, 1, 2)]
    expected = f"{np.mean(accs):.1f} [{min(accs):.1f}, {max(accs):.1f}] (0, 1, 2)"
    assert expected in central, (expected, central)
    assert (tmp_path / "figs" / "population_accuracy_vs_epsilon.png").stat().st_size > 10_000
    caption = (tmp_path / "figs" / "population_accuracy_vs_epsilon.caption.txt").read_text()
    assert "seeds [0, 1, 2]" in caption and "Dashed: the noiseless ideal" in caption  # the ideal ran at ε = ∞
    # the no-momentum variant: its own row and curve, and the caption gives each group's η and momentum
    lr = cfg.training.lr
    # stored at η = 0.2 and, in another slice, 0.05: a row and curve per η, seed 0 in each (never one merged row)
    assert rows["FLORAS, no CSIT, capped receiver, no server momentum, η = 0.2"].count("(0)") == 1
    assert rows["FLORAS, no CSIT, capped receiver, no server momentum, η = 0.05"].count("(0)") == 1
    assert "FLORAS, no CSIT, capped receiver, no server momentum" not in rows
    assert not any("η = 0.3" in name for name in rows) and "0.3" not in caption.split("SNR")[0]  # the tuning run
    assert "Dotted: a variant" in caption
    # the run twice as long is left out of the curves (seed 0 counted once, from the sweep's length) and named
    assert f"Not drawn (another number of rounds than the {cfg.run.rounds} here): central-gaussian at ε = " in caption
    assert f"T = {2 * cfg.run.rounds}" in caption
    assert (f"η = {lr}, server momentum {cfg.training.server_momentum}: central Gaussian, ideal (no privacy)") in caption
    assert "η = 0.2, server momentum 0.0: FLORAS, no CSIT, capped receiver, no server momentum, η = 0.2" in caption
    assert "η = 0.05, server momentum 0.0: FLORAS, no CSIT, capped receiver, no server momentum, η = 0.05" in caption
    # a run calibrated under another accountant is its own curve, never merged into the sweep's seeds
    assert rows["central Gaussian, pld accountant"].count("(0)") == 2 and expected in central  # ε = 4 and 8
    z = {}  # each ε's own key, in ε order (the caption once gave the first run's key for every ε)
    for path in (root / "matched_population_pld").glob("central-gaussian_*seed0*/config.json"):
        stored = json.loads(path.read_text())["config"]["privacy"]
        z[float(stored["target_epsilon"])] = stored["calibrated"]["value"]
    assert sorted(z) == [4.0, 8.0] and z[4.0] > z[8.0]
    assert (f"central Gaussian, pld accountant (central-gaussian.noise_multiplier = {z[4.0]:.4g}, {z[8.0]:.4g} at "
            "ε = 4, 8)") in caption, caption


def test_a_column_only_some_runs_of_a_point_have_reads_as_nan_for_the_others(results, tmp_path):
    """A sweep resumed across versions holds finished runs with and without a later column (worst_class_accuracy):
    every column is [n_seeds, T] with NaN rows for the runs that lack it, in either order."""
    import shutil

    from figures.common import load_results
    from scenarios.store import read_manifest

    sweep = tmp_path / "fig4"
    shutil.copytree(results / "fig4", sweep)
    points = read_manifest(sweep)["points"]
    for point, which in zip(points[:2], (0, 1)):  # the first run has it, then the second
        run = sweep / point["runs"][which]["dir"]
        lines = (run / "metrics.csv").read_text().splitlines()
        lines = [lines[0] + ",worst_class_accuracy"] + [f"{line},0.25" for line in lines[1:]]
        (run / "metrics.csv").write_text("\n".join(lines) + "\n")
    res = load_results(sweep)
    for rs, which in zip(res.runsets[:2], (0, 1)):
        worst = rs.metrics["worst_class_accuracy"]
        assert worst.shape == rs.metrics["test_accuracy"].shape == (2, 40)
        assert np.all(worst[which] == 0.25) and np.all(np.isnan(worst[1 - which]))
    assert "worst_class_accuracy" not in res.runsets[2].metrics


def test_budget_families_keep_capped_floras_apart_and_legends_shorten_long_threat_models():
    """A budget case ``floras-none-capped-L32`` is its own curve, not a point of plain FLORAS (the prefix
    ``floras-none`` matched it first); a legend keeps a short threat model whole and cuts a long one at its first
    ";" and then its parenthesis (analog Gaussian's runs state the whole assumption, 180 characters)."""
    from figures.matched import short_threat
    from figures.matched_budget import family

    assert family("floras-none-capped-L32") == "floras-none-capped" and family("floras-none-L128") == "floras-none"
    assert family("analog-gaussian-L8") == "analog-gaussian" and family("ddgauss-B16") == "ddgauss"
    analog = ("T1 and a single-antenna base station (it sees only the superposition; the receiver noise counts as "
              "privacy noise; client-sampling amplification assumes it does not learn who was sampled)")
    assert short_threat(analog) == "T1 and a single-antenna base station"
    for short in ("T1 only (output observer)", "trusted server; outputs only", "any observer (T1 and T2)"):
        assert short_threat(short) == short
    from figures.matched import curve_label

    assert curve_label("analog-gaussian", analog).endswith(f"[{analog}]")  # tables keep the whole assumption
    assert curve_label("analog-gaussian", analog, short=True) == "analog Gaussian [T1 and a single-antenna base station]"
