"""core/scenario.py save_figure: the PNG of a figure drawn once and cropped to its content
plus matplotlib's pad, against matplotlib's own ``savefig(bbox_inches="tight")`` (an
independent layout of the same figure): the same picture to within the rounding of the
box to whole pixels; content outside the figure's area is kept as savefig keeps it."""
import numpy as np
import matplotlib
import matplotlib.pyplot as plt
from PIL import Image

from hystmech.scenario import FIGURE_DPI, save_figure


def _figure(outside=False):
    t = np.linspace(0.0, 20.0, 4001)
    fig, axs = plt.subplots(2, 1, figsize=(6, 5))
    for ax in axs:
        ax.plot(t, np.sin(t), lw=0.8, label="sin")
        ax.plot(t, np.cos(3 * t), lw=0.8, label="cos 3t")
        ax.set(xlabel="t [s]", ylabel="y [mm]", title="a title")
        ax.legend(loc="upper right")
    fig.tight_layout()
    if outside:
        fig.text(1.05, 0.5, "a note right of the figure")
    return fig


def _theirs(fig, path):
    fig.savefig(path, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    plt.close(fig)
    return np.asarray(Image.open(path).convert("RGB"), dtype=float)


def test_cropped_figure_is_matplotlibs_tight_picture(tmp_path):
    save_figure(_figure(), tmp_path / "ours.png")
    ours = np.asarray(Image.open(tmp_path / "ours.png").convert("RGB"), dtype=float)
    theirs = _theirs(_figure(), tmp_path / "theirs.png")
    # the box rounded outwards to whole pixels: at most 2 px more per side pair
    assert 0 <= ours.shape[0] - theirs.shape[0] <= 2 and 0 <= ours.shape[1] - theirs.shape[1] <= 2
    h, w = theirs.shape[:2]
    # the same picture: ink (non-white pixels) in the same place, up to the sub-pixel
    # shift of the crop (compare at a coarse 10 px grid of ink fractions)
    def ink(a):
        a = a[:a.shape[0] - a.shape[0] % 10, :a.shape[1] - a.shape[1] % 10]
        return (a.min(axis=2) < 200).reshape(a.shape[0] // 10, 10, a.shape[1] // 10, 10) \
            .mean(axis=(1, 3))
    best = min(np.abs(ink(ours[i:i + h, j:j + w]) - ink(theirs)).mean()
               for i in range(ours.shape[0] - h + 1) for j in range(ours.shape[1] - w + 1))
    assert best < 0.01, best
    assert abs(Image.open(tmp_path / "ours.png").info["dpi"][0] - FIGURE_DPI) < 0.01
    # (a crop off by 20 px is far from it: the comparison sees the picture)
    off = np.abs(ink(ours[20:20 + h - 20, :w]) - ink(theirs[:h - 20])).mean()
    assert off > 5 * best and off > 0.01, (off, best)


def test_content_outside_the_figure_is_kept(tmp_path):
    fig = _figure(outside=True)
    save_figure(fig, tmp_path / "ours.png")
    assert fig.number not in plt.get_fignums()        # closed
    theirs = _theirs(_figure(outside=True), tmp_path / "theirs.png")
    ours = np.asarray(Image.open(tmp_path / "ours.png").convert("RGB"), dtype=float)
    assert ours.shape == theirs.shape
    assert ours.shape[1] > 6 * FIGURE_DPI            # wider than the figure itself
