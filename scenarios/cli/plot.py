"""``floras plot DIR --by phy.scheme [--y test_accuracy] [--x round] [--out DIR]``.

Draws one metric of stored runs against another, one line per value of a dotted scenario key
(``--by``): the line is the mean over every finished run of that group (its seeds, and any
other grid points that share the value), the band the min–max range over them. ``DIR`` is a
sweep directory (``sweep.json``, written by ``floras sweep``), one run directory
(``config.json`` + ``metrics.csv`` + ``DONE``, written by ``floras train``) or a directory
holding several of either. Results are read only through :mod:`scenarios.store` (finished runs
only, as :mod:`figures.common`); writes ``<stem>.png`` and ``<stem>.pdf`` (legend outside the
axes) to ``--out`` (default: ``figures`` next to ``DIR``).
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
            out_dir: str | Path | None = None, stem: str | None = None) -> dict:
    """Draw and write the plot; returns ``{"paths": [png, pdf], "groups": [label, ...], "lines": n}``."""
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from scenarios.store import atomic_write_bytes

    directory = Path(directory)
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

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, members in groups.items():
        length = min(rs.metrics[y].shape[1] for rs in members)
        ys = np.concatenate([rs.metrics[y][:, :length] for rs in members])
        xs = np.concatenate([rs.metrics[x][:, :length] for rs in members])
        keep = ~np.isnan(ys).all(axis=0)  # rounds without an evaluation (training.eval_every) are skipped
        xm = np.nanmean(xs[:, keep], axis=0)
        with np.errstate(all="ignore"):
            mean, lo, hi = (np.nanmean(ys[:, keep], axis=0), np.nanmin(ys[:, keep], axis=0), np.nanmax(ys[:, keep], axis=0))
        (line,) = ax.plot(xm, mean, label=f"{label} ({ys.shape[0]} run{'s' if ys.shape[0] != 1 else ''})")
        if ys.shape[0] > 1:
            ax.fill_between(xm, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{directory.name}: {y} by {by}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(title=by, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, title_fontsize=8)
    ax.text(1.02, 0.0, "lines: mean over runs\nbands: min–max over runs", transform=ax.transAxes,
            fontsize=7, va="bottom", ha="left")  # beside the axes, under the legend
    n_lines = len(ax.get_lines())

    out = Path(out_dir) if out_dir is not None else directory.resolve().parent / "figures"
    out.mkdir(parents=True, exist_ok=True)
    stem = stem or re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{directory.resolve().name}_{y}_by_{by}")
    paths = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=150, bbox_inches="tight")  # the legend outside the axes is kept
        path = out / f"{stem}.{ext}"
        atomic_write_bytes(path, buf.getvalue())
        paths.append(path)
    plt.close(fig)
    return {"paths": paths, "groups": list(groups), "lines": n_lines}


def run(args) -> int:
    result = plot_by(args.directory, by=args.by, y=args.y, x=args.x, out_dir=args.out, stem=args.stem)
    print(f"floras plot: {len(result['groups'])} group(s) by {args.by}: "
          + ", ".join(result["groups"])[:120] + f"; wrote {result['paths'][0]} and .pdf")
    return 0
