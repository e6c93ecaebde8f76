"""TeX as readable plain text, for the places where MathJax cannot typeset it.

A browser tab's title, the search index's titles, search snippets and figure alt text
are plain text: MathJax never sees them, so ``\\(\\Gam\\)`` would be shown as it is
written. :func:`tex_to_text` turns the book's formulas into Unicode text
(``\\Gam`` -> ``Γ``, ``\\rhonl`` -> ``ρ_nl``, ``a_1^2`` -> ``a₁²``, ``\\frac{a}{b}`` ->
``a/b``) using the book's own macros (``mathjax3_config`` in ``_config.yml``, given
by :func:`set_macros`). It is meant for reading, not for round trips: an unknown command
loses its backslash.
"""

from __future__ import annotations

import re

_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "vartheta": "ϑ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "varrho": "ϱ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
}
_SYMBOLS = {
    **_GREEK,
    "infty": "∞",
    "to": "→",
    "rightarrow": "→",
    "leftarrow": "←",
    "mapsto": "↦",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "approx": "≈",
    "sim": "∼",
    "simeq": "≃",
    "equiv": "≡",
    "propto": "∝",
    "times": "×",
    "cdot": "·",
    "pm": "±",
    "mp": "∓",
    "ast": "*",
    "star": "⋆",
    "in": "∈",
    "notin": "∉",
    "subset": "⊂",
    "perp": "⊥",
    "partial": "∂",
    "nabla": "∇",
    "sum": "Σ",
    "prod": "Π",
    "int": "∫",
    "sqrt": "√",
    "ell": "ℓ",
    "langle": "⟨",
    "rangle": "⟩",
    "lVert": "‖",
    "rVert": "‖",
    "Vert": "‖",
    "lvert": "|",
    "rvert": "|",
    "mid": "|",
    "ldots": "…",
    "cdots": "⋯",
    "dots": "…",
    "top": "ᵀ",
    "prime": "′",
    "circ": "∘",
    "quad": " ",
    "qquad": " ",
    ",": " ",
    ";": " ",
    "!": "",
    " ": " ",
    "{": "{",
    "}": "}",
    "%": "%",
    "_": "_",
    "log": "log",
    "exp": "exp",
    "min": "min",
    "max": "max",
    "arg": "arg",
    "sin": "sin",
    "cos": "cos",
    "tanh": "tanh",
    "det": "det",
    "sign": "sign",
}
# commands whose argument is shown as it is (fonts, operator names, decorations)
_KEEP_ARG = {
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "operatorname",
    "text",
    "textrm",
    "textbf",
    "textit",
    "boldsymbol",
    "bm",
    "mathcal",
    "mathbb",
    "hat",
    "tilde",
    "bar",
    "overline",
    "widehat",
    "widetilde",
    "vec",
    "dot",
    "ddot",
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "displaystyle",
    "textstyle",
    "label",
    "tag",
}
_BLACKBOARD = {"E": "𝔼", "R": "ℝ", "N": "ℕ", "Z": "ℤ", "P": "ℙ", "C": "ℂ"}
_CALLIGRAPHIC = {"N": "𝒩", "O": "𝒪", "L": "ℒ", "D": "𝒟", "H": "ℋ"}
_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUP = dict(zip("0123456789+-=()in", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ"))

_macros: dict[str, str] = {}


def set_macros(macros: dict[str, str] | None) -> None:
    """Use the book's MathJax macros (name without backslash -> TeX) from now on."""
    _macros.clear()
    for name, body in (macros or {}).items():
        _macros[name] = body[0] if isinstance(body, (list, tuple)) else str(body)


def _group(text: str, i: int) -> tuple[str, int]:
    """The argument starting at text[i] (a {...} group or one character) and its end."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        return "", i
    if text[i] != "{":
        if text[i] == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", text[i:], re.DOTALL)
            if m is None:
                return "", len(text)
            return m.group(0), i + len(m.group(0))
        return text[i], i + 1
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j], j + 1
    return text[i + 1 :], len(text)


def _script(arg: str, table: dict[str, str], mark: str) -> str:
    if mark == "^" and arg in ("ᵀ", "′", "*", "⊥", "⋆"):
        return arg
    if arg and all(c in table for c in arg):
        return "".join(table[c] for c in arg)
    return mark + (arg if len(arg) == 1 else "(" + arg + ")" if " " in arg else arg)


def _fraction_part(s: str) -> str:
    """A numerator or denominator of a/b: in parentheses unless one symbol or a word."""
    return s if len(s) <= 1 or s.isalnum() else f"({s})"


def _convert(tex: str, depth: int = 0) -> str:
    if depth > 20:  # a runaway macro
        return tex
    out: list[str] = []
    i = 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:], re.DOTALL)
            if m is None:  # a backslash at the very end
                break
            name = m.group(1)
            i += len(m.group(0))
            if name in _macros:
                out.append(_convert(_macros[name], depth + 1))
            elif name in ("frac", "dfrac", "tfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                num, den = _convert(num, depth + 1), _convert(den, depth + 1)
                out.append(f"{_fraction_part(num)}/{_fraction_part(den)}")
            elif name == "sqrt":
                arg, i = _group(tex, i)
                arg = _convert(arg, depth + 1)
                out.append("√" + (arg if len(arg) <= 1 else f"({arg})"))
            elif name in ("begin", "end"):  # an environment's name is not text
                _, i = _group(tex, i)
            elif name in ("mathbb", "mathcal"):
                arg, i = _group(tex, i)
                table = _BLACKBOARD if name == "mathbb" else _CALLIGRAPHIC
                out.append("".join(table.get(ch, ch) for ch in arg))
            elif name in _KEEP_ARG:
                if name in ("left", "right", "big", "Big", "bigg", "Bigg"):
                    continue  # the delimiter that follows is kept
                if name in ("displaystyle", "textstyle"):
                    continue
                arg, i = _group(tex, i)
                if name in ("label", "tag"):
                    continue
                text = _convert(arg, depth + 1)
                accent = {
                    "hat": "\u0302",
                    "tilde": "\u0303",
                    "bar": "\u0304",
                    "overline": "\u0304",
                    "dot": "\u0307",
                    "vec": "\u20d7",
                }
                out.append(
                    text + accent[name] if name in accent and len(text) == 1 else text
                )
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            else:
                out.append(name)
        elif c in "_^":
            arg, i = _group(tex, i + 1)
            arg = _convert(arg, depth + 1)
            out.append(_script(arg, _SUB if c == "_" else _SUP, c))
        elif c in "{}$" or c == "&":
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


_DELIMITED = re.compile(
    r"\\\((.*?)\\\)|\\\[(.*?)\\\]|\$\$(.*?)\$\$|\$(.+?)\$", re.DOTALL
)


def tex_to_text(tex: str) -> str:
    """One formula (without delimiters) as readable plain text."""
    # a line break (two backslashes, perhaps with a spacing such as [2mm]) is a space
    text = _convert(re.sub(r"\\\\(\[[0-9.]+(?:mm|pt|em|ex|cm)\])?", " ", tex))
    return re.sub(r"[ \t\n]+", " ", text).strip()


def plain(text: str) -> str:
    """Text with formulas in ``\\(...\\)``, ``\\[...\\]``, ``$...$`` or ``$$...$$``
    replaced by :func:`tex_to_text` of each."""
    return _DELIMITED.sub(
        lambda m: tex_to_text(next(g for g in m.groups() if g is not None)), text
    )


_BARE = re.compile(r"\\[A-Za-z]+(?:\{[^{}]*\})*(?:[_^](?:\{[^{}]*\}|\w))*")


def plain_title(text: str) -> str:
    """A title as plain text: :func:`plain`, then the commands left without delimiters
    (Sphinx's search index stores a heading's formula as bare TeX, ``\\Gam``)."""
    return _BARE.sub(lambda m: tex_to_text(m.group(0)), plain(text))
