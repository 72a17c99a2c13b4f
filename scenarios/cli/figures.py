"""``floras figures``: regenerate every figure from stored sweep results (no training).

Looks in ``--results DIR`` (default ``results``) for the sweep directories that each figure
reads (``fig4``, ``fig5``, ``snr_sweep``, ``privacy_sweep``, written by ``floras sweep``) and
writes PNG, PDF and a caption text file per figure to ``--out DIR`` (default
``DIR/figures``), plus ``summary_tables.md`` (one table per sweep found). It also redraws the
audit figures from ``DIR/audit/*.json`` (written by ``floras audit --json``) and the privacy
curves from ``DIR/privacy/privacy_curves.json`` (written by ``floras privacy curves --out
DIR/privacy``) when those exist. A figure whose results are absent is reported and skipped; it
is an error when none is present. Results are read only through :mod:`scenarios.store`: an
empty or damaged ``sweep.json`` or a run marked finished without its metrics is an error
naming the file; every figure is written atomically. ``--style paper`` draws them for a
manuscript (3.5 in single-column or 7.16 in double-column width, 6–8 pt fonts, no caption in the
image: the caption is only in ``<stem>.caption.txt``; :mod:`figures.style`).
"""

from __future__ import annotations

from pathlib import Path

FIGURE_BYTES = 64 * 2**20  # an estimate of what every figure together needs on disk (PNG + PDF + captions)


def register(subparsers) -> None:
    p = subparsers.add_parser("figures", help="regenerate the figures from stored sweep results",
                              description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("--results", default="results", metavar="DIR",
                   help="directory holding the sweep result directories (default: results)")
    p.add_argument("--out", default=None, metavar="DIR", help="where figures are written (default: RESULTS/figures)")
    p.add_argument("--style", choices=("screen", "paper"), default="screen",
                   help="screen (default: caption drawn under the panels) or paper (column width, 6-8 pt fonts, "
                        "caption only in the .caption.txt side file)")
    p.set_defaults(handler=run)


def run(args) -> int:
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    from figures.style import figure_style

    with figure_style(getattr(args, "style", "screen")):
        return _run(args)


def _run(args) -> int:
    from figures.common import NoFinishedRuns
    from figures.registry import FIGURES, figure_module

    results = Path(args.results)
    if not results.is_dir():
        raise ValueError(f"--results must be an existing directory of sweep results (got {str(results)!r})")
    out = Path(args.out) if args.out else results / "figures"
    from scenarios.store import check_output_location

    check_output_location(out, need_bytes=FIGURE_BYTES, what="figures --out")
    foreign = foreign_entries(results, out)
    if foreign:  # a README, a stray folder, a file named like a sweep: never read, listed once
        print(f"--results {results}: ignored {len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'} that hold no "
              f"sweep results (no sweep.json, not audit/ or privacy/): {', '.join(foreign)}")
    made, absent = [], []
    from scenarios.store import MANIFEST

    for module_name, sweep in FIGURES:
        if sweep.endswith("*"):  # a sweep and its slices, merged by the module
            sweep_dir = sorted(p.parent for p in results.glob(f"{sweep}/{MANIFEST}") if p.is_file())
            present = bool(sweep_dir)
        else:
            sweep_dir = results / sweep
            present = (sweep_dir / MANIFEST).is_file()
        if not present:
            # calibrated or tuned sweeps run with floras matched
            command = "floras matched" if sweep.startswith(("matched", "cell")) or sweep == "fig4_tuned" else "floras sweep"
            absent.append(f"{sweep} ({command} scenarios/{sweep.rstrip('*')}….toml)" if sweep.endswith("*")
                          else f"{sweep} ({command} scenarios/{sweep}.toml)")
            continue
        try:
            paths = figure_module(module_name).make(sweep_dir, out)
        except NoFinishedRuns:  # a sweep still running (or not started): the others are drawn
            absent.append(f"{sweep} (no finished run yet in {sweep_dir})")
            continue
        made.extend(paths)
        print(f"{module_name}: " + ", ".join(str(p) for p in paths if p.suffix != ".txt"))
    made.extend(_stored_json_figures(results, out, absent))
    from figures.tables import make_tables

    tables = make_tables(results, out)
    if tables is not None:
        print(f"tables: {tables}")
    if not made and tables is None:
        raise ValueError(f"--results must contain at least one sweep directory (a folder with a sweep.json), "
                         f"an audit/ or a privacy/ directory (got {str(results)!r}); the sweeps with figures of "
                         f"their own are {[s for _, s in FIGURES]}")
    import fnmatch

    tables_only = sorted(p.parent.name for p in results.glob(f"*/{MANIFEST}")
                         if p.is_file() and not any(fnmatch.fnmatchcase(p.parent.name, s) for _, s in FIGURES))
    if tables_only:  # a slice or a sweep of the user's own: summarized in the tables, no figure module of its own
        print("tables only (no figure of their own): " + ", ".join(tables_only))
    if absent:
        print("not drawn, no stored results: " + "; ".join(absent))
    return 0


def foreign_entries(results: Path, out: Path) -> list[str]:
    """Top-level names of ``results`` that are no sweep directory (a folder with a ``sweep.json`` file),
    no ``audit/`` or ``privacy/`` folder and not the figures' output folder."""
    from scenarios.store import MANIFEST

    try:
        entries = sorted(results.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    keep = {"audit", "privacy"}
    foreign = []
    for p in entries:
        if p.is_dir() and ((p / MANIFEST).is_file() or p.name in keep or p.resolve() == out.resolve()):
            continue
        foreign.append(p.name + ("/" if p.is_dir() else ""))
    return foreign


def _stored_json_figures(results: Path, out: Path, absent: list[str]) -> list[Path]:
    """Audit figures (``results/audit/*.json``) and privacy curves (``results/privacy``)."""
    from figures import audit_epsilon, audit_linking, audit_roc
    from figures.audit_roc import load_audits
    from figures.privacy_curves import plot_curves

    made: list[Path] = []
    audit_dir = results / "audit"
    audits = load_audits(audit_dir) if audit_dir.is_dir() else []
    if audits:
        made.extend(audit_epsilon.make(audit_dir, out))
        if any(a.get("threat") == "T2" and a.get("detection_sweep") for a in audits):
            made.extend(audit_roc.make(audit_dir, out))
        else:
            absent.append(f"audit ROC (floras audit --threat T2 --sweep-snr-db ... --json {audit_dir}/FILE.json)")
        if audit_linking.linking_audits(audit_dir):
            made.extend(audit_linking.make(audit_dir, out))
        else:
            absent.append(f"audit linking (floras audit --threat T2 --sweep-rx-antennas 1 2 4 8 --json {audit_dir}/FILE.json)")
    else:
        absent.append(f"audit (floras audit --threat T1|T2 --json {audit_dir}/FILE.json)")
    curves = results / "privacy" / "privacy_curves.json"
    if curves.is_file():
        made.extend(plot_curves(curves, out))
    else:
        absent.append(f"privacy curves (floras privacy curves --out {curves.parent})")
    for p in made:
        if p.suffix == ".png":
            print(f"{p.stem}: {p}")
    return made
