"""Reading stored sweep results and the shared figure conventions.

Figures are drawn from stored results only: a sweep directory (written by ``floras sweep``)
holds ``sweep.json`` (the grid points, their overrides and run directories) and one
directory per finished run with ``metrics.csv`` (one row per round) and ``config.json``. No
training happens here, and nothing is imported from TensorFlow.

Conventions shared by every figure:

* the line is the mean over seeds; the band is the **min–max range over seeds** (with one
  seed there is no band, and the caption says so: :func:`band_note`);
* training losses, drawn on a log axis, are the **median** over seeds instead (a seed whose
  loss is not finite is left out of that round's median and band), so that one diverged seed
  does not set the curve;
* curves carry markers at staggered rounds, so that curves that coincide stay visible;
  legends never cover data (:mod:`figures.layout`);
* only finished runs (``DONE``) are used; if seeds stopped at different rounds, curves are
  cut to the shortest;
* each figure is saved as PNG (150 dpi) and PDF, with its caption in the figure and in a
  ``.caption.txt`` side file; the ``paper`` style (:mod:`figures.style`) leaves the caption
  out of the image;
* the caption states the SNR definition (model §5), the data set, seeds, rounds and, where ε
  appears, its assumptions (model §7.4).
"""

from __future__ import annotations

import io
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from scenarios.store import StorageError, atomic_write_bytes, atomic_write_text, read_config, read_manifest, read_metrics, run_status, storage_error, verify_run

from .captions import (BAND_NOTE, LOSS_MEDIAN_NOTE, ONE_SEED_NOTE, SNR_DEFINITION, band_note,  # noqa: F401  (re-exported)
                       dataset_name, epsilon_caption, run_facts)

__all__ = [
    "RunSet",
    "SweepResults",
    "load_results",
    "load_finished",
    "case_panels",
    "title_case_panel",
    "SNR_DEFINITION",
    "BAND_NOTE",
    "band_note",
    "save_figure",
    "lookup",
    "mean_band",
    "pilot_blocks",
]

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


@dataclass
class RunSet:
    """The finished runs of one grid point: per-seed metric columns cut to a common length."""

    point: dict
    seeds: list[int]
    metrics: dict[str, np.ndarray]  # column → [n_seeds, T] float64
    configs: list[dict]
    run_dirs: list[Path]

    @property
    def label(self) -> str | None:
        return self.point.get("label")

    @property
    def overrides(self) -> dict:
        return self.point.get("overrides", {})

    def value(self, key: str, default: Any = None) -> Any:
        """A scenario value: the point's override, else the stored resolved configuration."""
        if key in self.overrides:
            return self.overrides[key]
        if self.configs:
            found = lookup(self.configs[0], key)
            if found is not None:
                return found
        return default

    def final(self, column: str) -> np.ndarray:
        """The last round's value of ``column`` for every seed, ``[n_seeds]``."""
        return self.metrics[column][:, -1]

    @property
    def rounds(self) -> np.ndarray:
        """Round numbers on the x axis, as stored (round t = 1, 2, …: the model after t rounds)."""
        return self.metrics["round"][0]


@dataclass
class SweepResults:
    name: str
    directory: Path
    manifest: dict
    runsets: list[RunSet] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # run directories not finished

    @property
    def labels(self) -> list[str | None]:
        seen: list[str | None] = []
        for rs in self.runsets:
            if rs.label not in seen:
                seen.append(rs.label)
        return seen

    def config(self) -> dict:
        for rs in self.runsets:
            if rs.configs:
                return rs.configs[0]
        return {}


def lookup(config: dict, dotted: str) -> Any:
    """Find ``a.b`` in a resolved configuration (nested tables, possibly under "scenario"/"config")."""
    for root in (config, config.get("scenario"), config.get("config"), config.get("resolved")):
        if not isinstance(root, dict):
            continue
        node: Any = root
        for part in dotted.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            else:
                node = None
                break
        if node is not None:
            return node
        if dotted in root:  # flat dotted keys
            return root[dotted]
    return None


def load_results(directory: str | Path) -> SweepResults:
    """Read a sweep directory: manifest, then every finished run's metrics and configuration."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    res = SweepResults(name=manifest["name"], directory=directory, manifest=manifest)
    for point in manifest["points"]:
        cols: dict[str, list[list[float]]] = {}
        seeds, configs, dirs = [], [], []
        for run in point["runs"]:
            run_dir = directory / run["dir"]
            status = run_status(directory, run["dir"])
            if status == "corrupt":
                raise StorageError(f"run {run_dir} is marked finished but incomplete ({'; '.join(verify_run(run_dir))}); "
                                   f"rerun the sweep that wrote {directory} to redo it")
            if status != "done":
                res.missing.append(run["dir"])
                continue
            m = read_metrics(run_dir)
            n_before = len(seeds)
            for key, values in m.items():  # a column an earlier run lacks (an older version's): NaN there
                cols.setdefault(key, [[math.nan] * len(values)] * n_before).append(values)
            for key, vs in cols.items():  # a column this run lacks: NaN here
                if key not in m:
                    vs.append([math.nan] * len(m.get("round", [])))
            seeds.append(run["seed"])
            dirs.append(run_dir)
            configs.append(read_config(run_dir))
        if not seeds:
            continue
        length = min(len(v) for vs in cols.values() for v in vs)
        metrics = {k: np.array([v[:length] for v in vs], dtype=np.float64) for k, vs in cols.items()}
        res.runsets.append(RunSet(point=point, seeds=seeds, metrics=metrics, configs=configs, run_dirs=dirs))
    return res


class NoFinishedRuns(ValueError):
    """A sweep directory exists but none of its runs has finished yet."""


def load_finished(results_dir: str | Path) -> SweepResults:
    """:func:`load_results`, refusing a directory that holds no finished run (:class:`NoFinishedRuns`)."""
    res = load_results(results_dir)
    if not res.runsets:
        raise NoFinishedRuns(f"results directory {results_dir} has no finished runs")
    return res


def case_panels(res: SweepResults, *, width: float, height: float):
    """A figure (Agg backend) with one panel per case label in a row, each ``width`` × ``height`` inches.

    Returns ``(fig, axes)`` with ``axes[i]`` the panel of ``res.labels[i]``; see :func:`title_case_panel`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(res.labels)
    fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    return fig, axes[0]


def title_case_panel(ax, res: SweepResults, case: str | None, index: int) -> None:
    """Title a :func:`case_panels` panel: the case (else its partition kinds), lettered when there are several."""
    kinds = sorted({str(rs.value("partition.kind")) for rs in res.runsets if rs.label == case})
    head = case_title(case) if case is not None else f"partition: {', '.join(kinds)}"
    ax.set_title(head if len(res.labels) == 1 else f"({'abcdefgh'[index]}) {head}", fontsize=10)


def mean_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, min and max over axis 0 (seeds)."""
    return values.mean(axis=0), values.min(axis=0), values.max(axis=0)


def pilot_blocks(rs: RunSet) -> int:
    """FLORAS's pilot blocks per update B as the run's privacy report states them (1 without blocks, model §5.1)."""
    link = (rs.configs[0].get("privacy_report") or {}).get("link") or {} if rs.configs else {}
    return int(link.get("blocks", 1) or 1)


def evaluated_rounds(rs: RunSet) -> np.ndarray:
    """Mask of the rounds whose losses and accuracy were computed: every ``training.eval_every``-th
    round and the last (the others hold no value, see docs/fl.md)."""
    every = int(rs.value("training.eval_every", 1) or 1)
    rounds = np.asarray(rs.rounds, dtype=np.int64)
    return (rounds % every == 0) | (rounds == rounds[-1])


def median_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median, min and max over axis 0 (seeds) of the finite values; NaN where no seed is finite."""
    v = np.where(np.isfinite(values), values, np.nan)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rounds where every seed diverged
            return np.nanmedian(v, axis=0), np.nanmin(v, axis=0), np.nanmax(v, axis=0)


def plot_band(ax, x, values: np.ndarray, *, scale: float = 1.0, keep: np.ndarray | None = None,
              center: str = "mean", **style) -> None:
    """Line (mean over seeds, or ``center="median"``: :func:`median_band`) and min–max band of
    ``values`` [n_seeds, T] against ``x``.

    ``keep`` (a mask over T, :func:`evaluated_rounds`) leaves out the rounds that were not
    evaluated, so the line joins the evaluated rounds instead of breaking into invisible pieces;
    a NaN in an evaluated round (a diverged loss) still breaks the mean line.
    """
    values = np.asarray(values, dtype=np.float64)
    if keep is not None:
        x, values = np.asarray(x)[keep], values[:, keep]
    mid, lo, hi = (median_band if center == "median" else mean_band)(values * scale)
    (line,) = ax.plot(x, mid, zorder=2.5, **style)
    if values.shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0, zorder=1)


def save_figure(fig, out_dir: Path, stem: str, caption: str, *, full_caption: str | None = None) -> list[Path]:
    """Write ``stem``.png and ``stem``.pdf and ``stem``.caption.txt.

    In the ``screen`` style (:mod:`figures.style`) the caption is drawn under the axes; in the
    ``paper`` style the figure is resized to the column width with paper fonts and holds no
    caption. Legends and point labels are placed last (:func:`figures.layout.settle`), so that
    no legend covers data. ``full_caption`` (default: ``caption``) is what the text file holds.
    """
    from .layout import scale_legend_fonts, settle
    from .style import apply_paper_fonts, current, paper_size

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(exc, "create", out_dir) from None
    paper = current() == "paper"
    if paper:
        fig.set_size_inches(*paper_size(fig))
        apply_paper_fonts(fig)
        scale_legend_fonts(fig, lambda size: min(8.0, max(6.0, 0.8 * size)))
        fig.tight_layout(pad=0.3)
    else:
        wrapped = "\n".join(textwrap.wrap(caption, width=int(fig.get_figwidth() * 16)))
        n_lines = wrapped.count("\n") + 1
        plot_height = fig.get_figheight()
        caption_height = 0.14 + 0.135 * n_lines  # inches of caption text (7.5 pt lines)
        height = plot_height + caption_height
        fig.set_figheight(height)  # the caption gets its own room: the panels keep their size
        fig.subplots_adjust(bottom=(caption_height + 0.55) / height, top=1 - 0.75 / height, hspace=0.5, wspace=0.28)
        fig.text(0.01, 0.01, wrapped, fontsize=7.5, va="bottom", ha="left", wrap=False)
    dpi = 300 if paper else 150
    fig.set_dpi(dpi)  # measure at the resolution that is written (text extents depend on it)
    from .style import panel_columns

    renderer = settle(fig, outside="below" if paper and panel_columns(fig) == 1 else "right")
    # the tight box (a legend outside the panels included), measured once for both formats [in]
    box = fig.get_tightbbox(renderer).padded(0.04 if paper else 0.1)
    paths = []
    for ext in ("png", "pdf"):
        path = out_dir / f"{stem}.{ext}"
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=dpi, bbox_inches=box)
        atomic_write_bytes(path, buf.getvalue())
        paths.append(path)
    cap = out_dir / f"{stem}.caption.txt"
    atomic_write_text(cap, (full_caption or caption) + "\n")
    paths.append(cap)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def finite(values) -> bool:
    return all(math.isfinite(float(v)) for v in np.atleast_1d(values))


def learning_curves(
    res: SweepResults,
    *,
    curve_label: Callable[[RunSet], str],
    curve_style: Callable[[RunSet], dict],
    title: str,
    row_title: Callable[[str | None], str],
):
    """A rows × 2 grid of panels: training loss and test accuracy against the round, one row per case.

    Panels are lettered (a), (b), … row by row, as in the source's Fig. 4 and Fig. 5. The loss
    is the median over seeds on a log axis, the accuracy the mean (:func:`plot_band`); curve i of
    a panel has marker i at rounds offset by i/n of the marker spacing, so that coinciding curves
    stay distinguishable; legends are placed when the figure is saved (:mod:`figures.layout`).
    """
    from .layout import request_legend

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = res.labels
    fig, axes = plt.subplots(len(labels), 2, figsize=(10, 3.3 * len(labels) + 1.2), squeeze=False)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    for r, label in enumerate(labels):
        for c, (col, ylabel, scale) in enumerate(
            (("train_loss", "training loss (cross-entropy) [nats]", 1.0), ("test_accuracy", "test accuracy [%]", 100.0))
        ):
            ax = axes[r][c]
            members = [rs for rs in res.runsets if rs.label == label]
            for i, rs in enumerate(members):
                keep = evaluated_rounds(rs)
                step = max(len(members), int(np.count_nonzero(keep)) // 6, 1)
                style = {"marker": MARKERS[i % len(MARKERS)], "markersize": 4,
                         "markevery": (i * step // len(members), step), **curve_style(rs)}
                plot_band(ax, rs.rounds, rs.metrics[col], scale=scale, keep=keep, label=curve_label(rs),
                          center="median" if col == "train_loss" else "mean", **style)
            ax.set_xlabel("communication round t")
            ax.set_ylabel(ylabel)
            ax.set_title(f"({next(letters)}) {row_title(label)}: {'training loss' if c == 0 else 'test accuracy'}", fontsize=10)
            ax.grid(True, alpha=0.3)
            if col == "train_loss":
                ax.set_yscale("log")
            request_legend(ax, fontsize=7.5)
    fig.suptitle(title, fontsize=11)
    return fig


def case_title(label: str | None) -> str:
    if label is None:
        return "all clients"
    return {"iid": "IID", "non-iid": "non-IID"}.get(label, label)
