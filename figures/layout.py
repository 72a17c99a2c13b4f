"""Legends that never cover data, and point labels that do not overlap.

Both are settled when a figure is saved (:func:`settle`, called by
:func:`figures.common.save_figure`), after the final layout: display coordinates change with
the figure size and margins, so an earlier check would not hold in the written file.

* :func:`request_legend` marks an axes for a legend. At settle time the legend is tried at each
  location inside the axes; the first whose box holds no data point (line vertices, the
  segments between them sampled every pixel, error-bar segments and point labels) is kept. If
  no location is free, the legends of all such axes are merged into one figure legend to the
  right of the panels (or below them, :func:`settle`), outside every axes; the figure's tight
  bounding box keeps it.
* :func:`request_repel` marks point labels (``ax.annotate`` with an offset in points); at
  settle time overlapping labels are pushed apart vertically until their boxes are disjoint.
"""

from __future__ import annotations

import numpy as np

__all__ = ["request_legend", "request_repel", "settle", "data_points", "legend_hits", "scale_legend_fonts"]

#: locations tried inside the axes, in this order
INSIDE = ("upper right", "upper left", "lower right", "lower left", "center right", "center left",
          "upper center", "lower center", "center")
_LEGEND = "_floras_legend"
_REPEL = "_floras_repel"


def request_legend(ax, **kwargs) -> None:
    """Ask for a legend on ``ax`` (``kwargs`` as :meth:`Axes.legend`, without ``loc``), placed at save time."""
    kwargs.pop("loc", None)
    setattr(ax, _LEGEND, kwargs)
    ax.legend(**kwargs)  # provisional, so that the figure can be inspected before it is saved


def request_repel(ax, annotations) -> None:
    """Ask for the point labels ``annotations`` of ``ax`` to be moved apart at save time."""
    setattr(ax, _REPEL, list(getattr(ax, _REPEL, [])) + list(annotations))


def _densify(xy: np.ndarray, step: float = 1.0) -> np.ndarray:
    """Display points of a polyline with the segments sampled every ``step`` pixels (NaN breaks it)."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    a, b = xy[:-1], xy[1:]
    ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    a, b = a[ok], b[ok]
    n = np.maximum(2, np.ceil(np.hypot(*(b - a).T) / step).astype(int) + 1) if len(a) else np.empty(0, int)
    if n.size and n.sum() > 2_000_000:  # a pathological line: its vertices only
        n = np.full_like(n, 2)
    seg = np.repeat(np.arange(len(a)), n)
    t = np.concatenate([np.linspace(0.0, 1.0, k) for k in n]) if n.size else np.empty(0)
    dense = a[seg] + t[:, None] * (b[seg] - a[seg]) if n.size else np.empty((0, 2))
    return np.concatenate([xy[np.isfinite(xy).all(axis=1)], dense])


def data_points(ax) -> np.ndarray:
    """Display coordinates [n, 2] of everything drawn as data on ``ax``: line vertices and the
    segments between them (sampled every pixel; lines drawn without a line style give their
    markers only), line-collection segments (error bars) and the corners of its point labels."""
    from matplotlib.collections import LineCollection

    pts = [np.empty((0, 2))]
    for line in ax.get_lines():
        if not line.get_visible() or line.get_gid() == "decoration":  # e.g. the marks of a broken axis
            continue
        xy = line.get_transform().transform(np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float))
        pts.append(_densify(xy) if line.get_linestyle() not in ("None", "none", "", " ") else xy[np.isfinite(xy).all(axis=1)])
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                pts.append(_densify(coll.get_transform().transform(np.asarray(seg, float))))
    return np.concatenate(pts)


def _text_boxes(ax, renderer) -> list:
    return [t.get_window_extent(renderer) for t in getattr(ax, _REPEL, []) if t.get_visible()]


def legend_hits(legend, ax, renderer, *, pad: float = 2.0, points=None, boxes=None) -> int:
    """How many data points of ``ax`` (:func:`data_points`, or ``points``) and point-label boxes
    (or ``boxes``) fall in ``legend``'s box."""
    box = legend.get_window_extent(renderer).padded(pad)
    pts = data_points(ax) if points is None else points
    inside = int(np.count_nonzero((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)))
    boxes = _text_boxes(ax, renderer) if boxes is None else boxes
    return inside + sum(1 for b in boxes if b.overlaps(box))


def _place_inside(ax, kwargs: dict, renderer) -> bool:
    points, boxes = data_points(ax), _text_boxes(ax, renderer)  # they do not move with the legend
    for loc in INSIDE:
        legend = ax.legend(loc=loc, **kwargs)
        if legend is None:
            return True
        if legend_hits(legend, ax, renderer, points=points, boxes=boxes) == 0:
            return True
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    return False


def _repel(ax, renderer, *, iterations: int = 200) -> None:
    """Move overlapping point labels apart (vertically, in points) until their boxes are disjoint."""
    texts = [t for t in getattr(ax, _REPEL, []) if t.get_visible()]
    if len(texts) < 2:
        return
    to_pt = 72.0 / ax.figure.dpi
    for _ in range(iterations):
        boxes = [t.get_window_extent(renderer) for t in texts]
        moved = False
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                a, b = boxes[i].padded(1.0), boxes[j].padded(1.0)
                if not a.overlaps(b):
                    continue
                # push the upper one up and the lower one down by half the vertical overlap (+1 px)
                dy = (min(a.y1, b.y1) - max(a.y0, b.y0)) / 2 + 1.0
                up, down = (i, j) if boxes[i].y0 + boxes[i].y1 >= boxes[j].y0 + boxes[j].y1 else (j, i)
                for k, sign in ((up, 1.0), (down, -1.0)):
                    x, y = texts[k].get_position() if texts[k].get_anncoords() == "offset points" else (0.0, 0.0)
                    texts[k].set_position((x, y + sign * dy * to_pt))
                    boxes[k] = texts[k].get_window_extent(renderer)
                moved = True
        if not moved:
            return


def all_axes(fig) -> list:
    """The axes of ``fig`` and their inset axes (``ax.inset_axes``), which ``fig.axes`` leaves out."""
    out = []
    for ax in fig.axes:
        out.append(ax)
        out.extend(all_axes_of(ax))
    return out


def all_axes_of(ax) -> list:
    out = []
    for child in getattr(ax, "child_axes", []):
        out.append(child)
        out.extend(all_axes_of(child))
    return out


def settle(fig, *, outside: str = "right"):
    """Final placement of point labels and legends (see the module docstring); call after the layout.

    ``outside`` is where a legend that fits in no panel goes: ``"right"`` of the panels, or
    ``"below"`` them (under the lowest tick labels and axis label; the paper style's choice for a
    one-column figure, which then keeps its width). Returns the renderer it measured with."""
    renderer = fig.canvas.get_renderer()
    for ax in all_axes(fig):  # the view limits (autoscale) settle before anything is measured; no full draw
        ax.apply_aspect()
        ax.get_xlim(), ax.get_ylim()
    for ax in all_axes(fig):
        _repel(ax, renderer)
    where = outside
    outside = []
    for ax in all_axes(fig):
        kwargs = getattr(ax, _LEGEND, None)
        if kwargs is not None and not _place_inside(ax, kwargs, renderer):
            outside.append((ax, kwargs))
    if not outside:
        return renderer
    handles, labels = [], []
    for ax, _ in outside:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    kwargs = dict(outside[0][1])
    if where == "below":
        lowest = min(a.get_tightbbox(renderer).y0 for a in fig.axes)  # display units, labels included
        left = min(a.get_position().x0 for a in fig.axes)
        right = max(a.get_position().x1 for a in fig.axes)
        y = fig.transFigure.inverted().transform((0.0, lowest))[1] - 0.01
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=((left + right) / 2, y), borderaxespad=0.0,
                   ncol=2 if len(labels) > 3 and max(map(len, labels)) <= 28 else 1, **kwargs)
    else:
        right = max(a.get_position().x1 for a in fig.axes)
        top = max(a.get_position().y1 for a in fig.axes)
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(right + 0.01, top), borderaxespad=0.0, **kwargs)
    fig.draw_without_rendering()  # lays the new legend out, so that the figure's tight box holds it
    return renderer


def scale_legend_fonts(fig, size_of) -> None:
    """Apply ``size_of(points) -> points`` to the font size of every requested legend of ``fig``."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    for ax in all_axes(fig):
        kwargs = getattr(ax, _LEGEND, None)
        if kwargs is not None:
            size = kwargs.get("fontsize", rcParams["legend.fontsize"])
            size = FontProperties(size=size).get_size_in_points()
            kwargs["fontsize"] = size_of(size)
