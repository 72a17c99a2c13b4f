"""``floras plot DIR --by phy.scheme [--y test_accuracy] [--x round] [--out DIR]``.

Draws one metric of stored runs against another, one line per value of a dotted scenario key
(``--by``): the line is the mean over every finished run of that group (its seeds, and any
other grid points that share the value), the band the min–max range over them (drawn only with
two or more runs). A loss column (``--y`` ending in ``loss``) is drawn on a log axis as the
median over the runs (a run whose loss is not finite is left out of that round), so that one
diverged seed does not set the curve. ``DIR`` is a
sweep directory (``sweep.json``, written by ``floras sweep``), one run directory
(``config.json`` + ``metrics.csv`` + ``DONE``, written by ``floras train``) or a directory
holding several of either. Results are read only through :mod:`scenarios.store` (finished runs
only, as :mod:`figures.common`); writes ``<stem>.png``, ``<stem>.pdf`` (the legend where it
covers no data, else outside the axes) and ``<stem>.caption.txt`` to ``--out`` (default:
``figures`` next to ``DIR``). ``--style paper``: one column wide (3.5 in; a legend that fits
nowhere inside goes below the axes), paper fonts, no title or note in the image (they go to the
caption file; :mod:`figures.style`).
"""

from __future__ import annotations

import io
import re
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("plot", help="plot a metric of stored runs, one line per value of a scenario key",
                              description=__doc__.split("\n\n")[1].replace("``", ""))
    p.add_argument("directory", type=Path, metavar="DIR", help="sweep directory, run directory, or a folder of them")
    p.add_argument("--by", required=True, metavar="TABLE.KEY", help="dotted scenario key that groups the runs (e.g. phy.scheme)")
    p.add_argument("--y", default="test_accuracy", metavar="COLUMN", help="metrics.csv column on the y axis (default test_accuracy)")
    p.add_argument("--x", default="round", metavar="COLUMN", help="metrics.csv column on the x axis (default round)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="output directory (default: DIR/../figures)")
    p.add_argument("--stem", default=None, help="file name without extension (default <DIR name>_<y>_by_<key>)")
    p.add_argument("--style", choices=("screen", "paper"), default="screen",
                   help="screen (default: title and note in the image) or paper (3.5 in wide, 6-8 pt fonts, "
                        "caption only in the .caption.txt file)")
    p.set_defaults(handler=run)


def _runsets(directory: Path) -> list:
    """The finished runs under ``directory`` as :class:`figures.common.RunSet` (one per grid point or run)."""
    import numpy as np

    from figures.common import RunSet, load_results
    from scenarios.store import MANIFEST, read_config, read_metrics, run_status

    if (directory / MANIFEST).is_file():
        return load_results(directory).runsets
    if (directory / "config.json").is_file() and (directory / "metrics.csv").is_file():
        if run_status(directory.parent, directory.name) != "done":
            return []
        metrics = {k: np.array([v], dtype=np.float64) for k, v in read_metrics(directory).items()}
        return [RunSet(point={"overrides": {}}, seeds=[0], metrics=metrics, configs=[read_config(directory)],
                       run_dirs=[directory])]
    found = []
    if directory.is_dir():
        for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if (child / MANIFEST).is_file() or (child / "config.json").is_file():
                found += _runsets(child)
    return found


def _label(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def plot_by(directory: str | Path, *, by: str, y: str = "test_accuracy", x: str = "round",
            out_dir: str | Path | None = None, stem: str | None = None, style: str = "screen") -> dict:
    """Draw and write the plot; returns ``{"paths": [png, pdf, caption], "groups": [label, ...], "lines": n,
    "center": "mean" | "median"}``."""
    from figures.style import figure_style

    with figure_style(style):
        return _plot_by(Path(directory), by=by, y=y, x=x, out_dir=out_dir, stem=stem, paper=style == "paper")


def _plot_by(directory: Path, *, by: str, y: str, x: str, out_dir, stem, paper: bool) -> dict:
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from figures.common import MARKERS, median_band
    from figures.layout import request_legend, settle
    from figures.style import COLUMN_IN
    from scenarios.store import atomic_write_bytes, atomic_write_text

    if not directory.is_dir():
        raise ValueError(f"DIR must be an existing run or sweep directory (got {str(directory)!r})")
    runsets = _runsets(directory)
    if not runsets:
        raise ValueError(f"{directory} holds no finished run (a run directory has config.json, metrics.csv and DONE)")
    groups: dict[str, list] = {}
    for rs in runsets:
        for col in (x, y):
            if col not in rs.metrics:
                raise ValueError(f"--{'x' if col == x else 'y'} {col!r} is not a metrics.csv column of {rs.run_dirs[0]} "
                                 f"(columns: {', '.join(rs.metrics)})")
        value = rs.value(by)
        if value is None:
            raise ValueError(f"--by {by!r} is not a key of the stored configuration of {rs.run_dirs[0]} "
                             "(give a dotted scenario key such as phy.scheme or phy.snr_db)")
        groups.setdefault(_label(value), []).append(rs)

    median = y.endswith("loss")
    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.6) if paper else (6.4, 4.0))
    for k, (label, members) in enumerate(groups.items()):
        length = min(rs.metrics[y].shape[1] for rs in members)
        ys = np.concatenate([rs.metrics[y][:, :length] for rs in members])
        xs = np.concatenate([rs.metrics[x][:, :length] for rs in members])
        keep = ~np.isnan(ys).all(axis=0)  # rounds without an evaluation (training.eval_every) are skipped
        xm = np.nanmean(xs[:, keep], axis=0)
        if median:
            mid, lo, hi = median_band(ys[:, keep])
        else:
            with np.errstate(all="ignore"):
                mid, lo, hi = (np.nanmean(ys[:, keep], axis=0), np.nanmin(ys[:, keep], axis=0), np.nanmax(ys[:, keep], axis=0))
        n = ys.shape[0]
        step = max(len(groups), mid.size // 6, 1)  # staggered markers: coinciding lines stay visible
        (line,) = ax.plot(xm, mid, marker=MARKERS[k % len(MARKERS)], markersize=3 if paper else 4,
                          markevery=(k * step // len(groups), step), zorder=2.5,
                          label=f"{label} ({n} run{'s' if n != 1 else ''})")
        if n > 1:
            ax.fill_between(xm, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0, zorder=1)
    if median:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    title = f"{directory.name}: {y} by {by}"
    several = max(rs.metrics[y].shape[0] for rs in runsets) > 1 or any(len(m) > 1 for m in groups.values())
    center = "median" if median else "mean"
    note = (f"lines: {center} over runs{' (log axis; non-finite losses left out)' if median else ''}; "
            "bands: min–max over runs" if several else "one run per line (no bands)")
    if not paper:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    request_legend(ax, title=by, fontsize=6.5 if paper else 8, title_fontsize=6.5 if paper else 8)
    n_lines = len(ax.get_lines())
    fig.tight_layout(pad=0.3)
    settle(fig, outside="below" if paper else "right")

    out = Path(out_dir) if out_dir is not None else directory.resolve().parent / "figures"
    out.mkdir(parents=True, exist_ok=True)
    stem = stem or re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{directory.resolve().name}_{y}_by_{by}")
    paths = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=300 if paper else 150, bbox_inches="tight")  # a legend outside is kept
        path = out / f"{stem}.{ext}"
        atomic_write_bytes(path, buf.getvalue())
        paths.append(path)
    caption = out / f"{stem}.caption.txt"
    atomic_write_text(caption, f"{title}. {note}.\n")
    paths.append(caption)
    plt.close(fig)
    return {"paths": paths, "groups": list(groups), "lines": n_lines, "center": center}


def run(args) -> int:
    result = plot_by(args.directory, by=args.by, y=args.y, x=args.x, out_dir=args.out, stem=args.stem, style=args.style)
    print(f"floras plot: {len(result['groups'])} group(s) by {args.by}: "
          + ", ".join(result["groups"])[:120] + f"; wrote {result['paths'][0]} and .pdf")
    return 0
