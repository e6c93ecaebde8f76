"""Colour differences for the palette tests: CIEDE2000 on CIELAB (D65, sRGB), with
colour-vision deficiency simulated by the full-severity matrices of Machado, Oliveira
and Fernandes (2009), applied to linear RGB."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

#: Linear sRGB to CIE XYZ (D65 white).
_RGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])

#: Machado et al. (2009), severity 1, on linear RGB.
CVD_MATRICES = {
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
}


def lab(color, vision: str = "normal") -> np.ndarray:
    """CIELAB ``(L*, a*, b*)`` of a matplotlib colour, as seen with ``vision``."""
    v = np.asarray(to_rgb(color), dtype=float)
    lin = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
    if vision != "normal":
        lin = np.clip(CVD_MATRICES[vision] @ lin, 0.0, 1.0)
    t = (_RGB_TO_XYZ @ lin) / _RGB_TO_XYZ.sum(axis=1)
    eps = (6 / 29) ** 3
    f = np.where(t > eps, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def ciede2000(lab1, lab2) -> float:
    """The CIEDE2000 colour difference of two CIELAB colours (kL = kC = kH = 1)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360 if c2p else 0.0
    dhp = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    d_hp = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dhp / 2))
    l_bar, c_barp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + (360 if h1p + h2p < 360 else -360)) / 2
    t = (
        1
        - 0.17 * np.cos(np.radians(h_bar - 30))
        + 0.24 * np.cos(np.radians(2 * h_bar))
        + 0.32 * np.cos(np.radians(3 * h_bar + 6))
        - 0.20 * np.cos(np.radians(4 * h_bar - 63))
    )
    r_c = 2 * np.sqrt(c_barp**7 / (c_barp**7 + 25.0**7))
    r_t = -np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2)))) * r_c
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_barp, 1 + 0.015 * c_barp * t
    dl, dc, dh = (l2 - l1) / s_l, (c2p - c1p) / s_c, d_hp / s_h
    return float(np.sqrt(dl**2 + dc**2 + dh**2 + r_t * dc * dh))


def difference(c1, c2, vision: str = "normal") -> float:
    """CIEDE2000 difference of two matplotlib colours as seen with ``vision``."""
    return ciede2000(lab(c1, vision), lab(c2, vision))
