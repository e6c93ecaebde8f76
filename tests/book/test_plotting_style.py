"""Tests of the book's figure style (lib.teaching.plotting: column width, fonts, panels, palette)."""

import io
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from lib.teaching import plotting


def teardown_function():
    plt.close("all")


def _font_sizes(fig):
    fig.canvas.draw()
    return [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("ncols, nrows", [(1, 1), (2, 1), (3, 1), (3, 2), (2, 3)])
def test_new_figure_is_column_wide(ncols, nrows):
    fig, axes = plotting.new_figure(ncols, nrows)
    assert fig.get_size_inches()[0] == pytest.approx(plotting.COLUMN_WIDTH)
    assert np.size(axes) == ncols * nrows


def test_wide_requests_are_capped_and_narrow_ones_kept():
    fig, _ = plotting.new_figure(ncols=3, width=13.0, height=3.8)
    width, height = fig.get_size_inches()
    assert width == pytest.approx(plotting.COLUMN_WIDTH)
    assert height == pytest.approx(plotting.figure_size(3)[1])  # legible default aspect
    fig, _ = plotting.new_figure(width=5.0, height=4.0)
    assert tuple(fig.get_size_inches()) == pytest.approx((5.0, 4.0))
    assert plotting.figure_size(1, 1, None, 3.0) == pytest.approx((plotting.COLUMN_WIDTH, 3.0))


@pytest.mark.parametrize(
    "kwargs, exc, word",
    [
        (dict(ncols=4), ValueError, "ncols"),
        (dict(ncols=0), ValueError, "ncols"),
        (dict(nrows=0), ValueError, "nrows"),
        (dict(width=-1.0), ValueError, "width"),
        (dict(height=np.nan), ValueError, "height"),
        (dict(ncols=2.0), TypeError, "ncols"),
    ],
)
def test_figure_size_rejects_bad_input(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        plotting.figure_size(**kwargs)


def test_new_figure_passes_subplot_options():
    fig, (a, b) = plotting.new_figure(ncols=2, sharey=True)
    assert a.get_shared_y_axes().joined(a, b)
    fig, _ = plotting.new_figure(constrained_layout=True)  # old spelling still accepted
    assert fig.get_layout_engine() is not None


@pytest.mark.parametrize(
    "make",
    [
        lambda: plotting.hermite_expansion_figure("relu", 6),
        lambda: plotting.task_diversity_figure("relu", n_points=21),
        lambda: plotting.finite_data_figure("tanh", n_points=21),
        lambda: plotting.equivalence_figure("relu", n_points=21),
    ],
)
def test_lib_figures_follow_the_style(make):
    fig = make()
    assert fig.get_size_inches()[0] <= plotting.COLUMN_WIDTH + 1e-9
    ncols = max(ax.get_subplotspec().get_geometry()[1] for ax in fig.axes)
    assert ncols <= plotting.MAX_COLUMNS
    assert min(_font_sizes(fig)) >= plotting.MIN_FONT_PT
    # nothing drawn outside the figure (labels and legends are inside the canvas)
    renderer = fig.canvas.get_renderer()
    box = fig.get_tightbbox(renderer)
    assert box.x0 >= -1 and box.y0 >= -1
    assert box.x1 <= fig.get_size_inches()[0] + 0.02 and box.y1 <= fig.get_size_inches()[1] + 0.02


def test_svg_output_has_the_column_width():
    fig, ax = plotting.new_figure()
    ax.plot([0, 1], [0, 1])
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    head = buf.getvalue()[:2000]
    assert f'width="{plotting.COLUMN_WIDTH * 72:g}pt"' in head


def _contrast(c1, c2):
    """Euclidean distance in RGB, and the difference of luminance."""
    a, b = np.array(to_rgb(c1)), np.array(to_rgb(c2))
    lum = np.array([0.2126, 0.7152, 0.0722])
    return float(np.linalg.norm(a - b)), float(abs(lum @ a - lum @ b))


def test_sweep_styles_neighbours_differ_in_colour_and_dash():
    styles = plotting.sweep_styles(6)
    for s, t in zip(styles, styles[1:]):
        distance, _ = _contrast(s["color"], t["color"])
        assert distance > 0.35, (s, t)
        assert s["ls"] != t["ls"]
    with pytest.raises(ValueError, match="n must be"):
        plotting.sweep_styles(7)
    with pytest.raises(TypeError, match="n must be"):
        plotting.sweep_styles(2.5)


def test_cycle_neighbours_are_distinguishable():
    cycle = plotting.mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    plotting.use_book_style()
    cycle = plotting.mpl.rcParams["axes.prop_cycle"].by_key()["color"]
    for c1, c2 in zip(cycle, cycle[1:]):
        assert _contrast(c1, c2)[0] > 0.35, (c1, c2)


def _overlapping_tick_labels(fig):
    """Pairs of drawn tick labels (major or minor) of one axis whose boxes overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    pairs = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            slack = 1e-9 * (hi - lo)
            ticks = axis.get_major_ticks() + axis.get_minor_ticks()
            ticks = [t for t in ticks if lo - slack <= t.get_loc() <= hi + slack]
            labels = [t.label1 for t in ticks if t.label1.get_visible() and t.label1.get_text().strip()]
            boxes = [(lab.get_text(), lab.get_window_extent(renderer)) for lab in labels]
            pairs += [(a, b) for i, (a, p) in enumerate(boxes) for b, q in boxes[i + 1 :] if p.overlaps(q)]
    return pairs


def test_the_overlap_detector_sees_overlapping_labels():
    fig, ax = plotting.new_figure()
    ax.set_xlim(0.0, 2.0)
    ax.set_xticks([1.0, 1.01], ["a long label", "another one"])
    assert _overlapping_tick_labels(fig) == [("a long label", "another one")]


def test_plain_log_ticks_keep_a_narrow_panels_labels_apart():
    """Three panels, alpha from 0.4 to 5 (less than two decades: matplotlib labels the
    minor ticks there, 4 x 10^-1, 6 x 10^-1, ..., which ran into each other in chapter 7)."""
    fig, axes = plotting.new_figure(ncols=3, sharey=True)
    x = np.logspace(np.log10(0.4), np.log10(5.0), 20)
    for ax in axes:
        ax.plot(x, 1 / x)
        ax.set_xscale("log")
        plotting.plain_log_ticks(ax, "x")
    assert not _overlapping_tick_labels(fig)
    shown = [t.get_text() for t in axes[0].get_xticklabels() if 0.4 <= t.get_position()[0] <= 5.0]
    assert shown == ["0.5", "1", "2", "5"]


def test_stored_sweep_figure_has_plain_separate_tick_labels():
    pytest.importorskip("jax", reason="training_widgets needs the optional extra 'training' (JAX)")
    from lib.teaching import training_widgets

    fig = training_widgets.sweep_figure("h2", 8, 0.1)
    assert not _overlapping_tick_labels(fig)
    texts = [t.get_text() for t in fig.axes[0].get_xticklabels(which="both") if t.get_text()]
    assert "10" in texts and not any("times" in t for t in texts)  # no 2 x 10^0 labels


def test_stored_sweep_figure_draws_the_theory_at_the_runs_rho():
    # issue 33: the figure drew the theory at any rho, next to runs stored at rho = 0.1
    pytest.importorskip("jax", reason="training_widgets needs the optional extra 'training' (JAX)")
    import matplotlib.pyplot as plt

    from lib.teaching import training_widgets

    rows = [dict(r) for r in training_widgets.lib.training_runs.load_runs("transformers")]
    with pytest.raises(ValueError, match=r"rho: the stored runs of 'h2' at d = 8 have rho in \[0.1\]; got 0.5"):
        training_widgets.sweep_figure("h2", 8, 0.5, rows)
    for r in rows[:3]:  # runs at two rho: only those at the rho asked for are drawn
        r["rho"] = 0.5
    at = {rho: training_widgets.sweep_figure("h2", 8, rho, rows) for rho in (0.1, 0.5)}
    drawn = {
        rho: sum(len(line.get_xdata()) for line in fig.axes[0].lines if line.get_marker() in ("o", "s"))
        for rho, fig in at.items()
    }
    plt.close("all")
    groups = {
        rho: {
            (r["kind"], r["alpha"]) for r in rows if (r["teacher"], r["d"], r["width"], r["rho"]) == ("h2", 8, 32, rho)
        }
        for rho in (0.1, 0.5)
    }
    assert len(groups[0.5]) == 3 and len(groups[0.1]) > 3  # one point per (kind, alpha) at each rho
    assert drawn == {rho: len(g) for rho, g in groups.items()}


def _assert_legible_and_inside(fig):
    """Every text at least MIN_FONT_PT, tick labels apart, everything inside the canvas."""
    assert min(_font_sizes(fig)) >= plotting.MIN_FONT_PT
    assert not _overlapping_tick_labels(fig)
    renderer = fig.canvas.get_renderer()
    box = fig.get_tightbbox(renderer)
    assert box.x0 >= -1 and box.y0 >= -1
    assert box.x1 <= fig.get_size_inches()[0] + 0.02 and box.y1 <= fig.get_size_inches()[1] + 0.02


@pytest.mark.parametrize("series", ["alpha", "tau"])
def test_control_figure_follows_the_style(series):
    # chapter 7's figures of the control sweep (at fixed alpha, and at fixed tau):
    # column wide, fonts, inside the canvas, and its two-line tick labels apart
    pytest.importorskip("jax", reason="training_widgets needs the optional extra 'training' (JAX)")
    from lib.teaching import training_widgets

    fig = training_widgets.control_figure(series=series)
    assert fig.get_size_inches()[0] == pytest.approx(plotting.COLUMN_WIDTH)
    _assert_legible_and_inside(fig)


@pytest.mark.parametrize("teacher, d", [("h2", 8), ("relu", 8), ("h2", 16), ("relu", 32)])
def test_sweep_figure_follows_the_style(teacher, d):
    # chapter 7's sweep figure and its explorer (every teacher and d of the drop-downs):
    # column wide, every text (legend included) at least MIN_FONT_PT, inside the canvas
    pytest.importorskip("jax", reason="training_widgets needs the optional extra 'training' (JAX)")
    from lib.teaching import training_widgets

    fig = training_widgets.sweep_figure(teacher, d, 0.1)
    assert fig.get_size_inches()[0] == pytest.approx(plotting.COLUMN_WIDTH)
    assert fig.axes[0].get_legend() is not None
    _assert_legible_and_inside(fig)


@pytest.mark.parametrize(
    "notebook",
    sorted(
        str(p.relative_to(Path(__file__).parents[2] / "book"))
        for p in (Path(__file__).parents[2] / "book").glob("*/*.ipynb")
    ),
)
def test_no_chapter_sets_a_font_below_the_minimum(notebook):
    # the figures drawn in a chapter's own cells (not by a lib function tested above)
    # keep the book's font sizes: a cell that sets a smaller one (legend(fontsize=8))
    # or one that is not a plain number fails here
    chapter = notebook
    path = Path(__file__).parents[2] / "book" / notebook
    nb = json.loads(path.read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    sizes = re.findall(r"\b(?:fontsize|labelsize|titlesize|title_fontsize)\s*=\s*([^,)\s]+)", code)
    small = [s for s in sizes if not re.fullmatch(r"[0-9.]+", s) or float(s) < plotting.MIN_FONT_PT]
    assert not small, f"chapter {chapter} sets font sizes {small}; at least {plotting.MIN_FONT_PT:g} pt"
