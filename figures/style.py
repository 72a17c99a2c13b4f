"""Figure styles: ``screen`` (the default: caption drawn under the panels) and ``paper``.

``paper`` is for a manuscript: the figure is one column wide (3.5 in) when it has one column of
panels and two columns wide (7.16 in) otherwise, the aspect ratio of the screen version kept;
fonts are 6–8 pt (axis labels 8, tick labels 7, legends 6.5), lines about 1 pt, PNG at 300 dpi
and PDF with embedded TrueType fonts; **no caption and no figure title in the image** — they go
only to the side file ``<stem>.caption.txt`` beside the figure (written in both styles).

:func:`figure_style` sets the style for the figures drawn inside it (``floras figures --style``,
``floras plot --style``); :func:`figures.common.save_figure` reads :func:`current`.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["STYLES", "PAPER_RC", "COLUMN_IN", "DOUBLE_COLUMN_IN", "figure_style", "current", "paper_size",
           "apply_paper_fonts"]

STYLES = ("screen", "paper")
COLUMN_IN = 3.5  # single-column width of a two-column paper [in]
DOUBLE_COLUMN_IN = 7.16  # full text width [in]
PAPER_RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 6.5, "figure.titlesize": 8, "lines.linewidth": 1.0, "lines.markersize": 3.0,
    "axes.linewidth": 0.6, "grid.linewidth": 0.4, "savefig.dpi": 300, "pdf.fonttype": 42, "ps.fonttype": 42,
}
PAPER_FONT_MIN, PAPER_FONT_MAX = 6.0, 8.0  # pt
_current = ["screen"]


def current() -> str:
    """The style of the figures being drawn now (``screen`` outside :func:`figure_style`)."""
    return _current[-1]


@contextmanager
def figure_style(name: str):
    """Draw the figures made inside this block in style ``name`` (one of :data:`STYLES`)."""
    if name not in STYLES:
        raise ValueError(f"--style must be one of {', '.join(STYLES)} (got {name!r})")
    import matplotlib

    _current.append(name)
    try:
        with matplotlib.rc_context(PAPER_RC if name == "paper" else {}):
            yield
    finally:
        _current.pop()


def panel_columns(fig) -> int:
    """Columns of panels: distinct left edges of the figure's axes."""
    return max(1, len({round(ax.get_position().x0, 3) for ax in fig.axes}))


def paper_size(fig) -> tuple[float, float]:
    """(width, height) in inches of ``fig`` in the paper style: 3.5 in for one column of panels, else
    7.16 in; the height scaled by the same factor as the width."""
    width = COLUMN_IN if panel_columns(fig) == 1 else DOUBLE_COLUMN_IN
    w, h = fig.get_size_inches()
    return width, h * width / w


def apply_paper_fonts(fig) -> None:
    """Every text of ``fig`` scaled by 0.8 and held within 6–8 pt (explicit sizes of the screen style
    included); lines and markers thinned by 0.7; the figure title (``suptitle``) removed — in a
    paper the caption carries it."""
    from matplotlib.lines import Line2D
    from matplotlib.text import Text

    if getattr(fig, "_suptitle", None) is not None:
        fig._suptitle.remove()
        fig._suptitle = None
    for text in fig.findobj(Text):
        text.set_fontsize(min(PAPER_FONT_MAX, max(PAPER_FONT_MIN, 0.8 * text.get_fontsize())))
    for line in fig.findobj(Line2D):
        line.set_linewidth(0.7 * line.get_linewidth())
        line.set_markersize(0.7 * line.get_markersize())
