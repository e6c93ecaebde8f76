"""Tests of the book's figure style (lib.teaching.plotting: column width, fonts, panels, palette)."""

import io

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
