"""constraints.txt (the student's install, book/student.md) pins what the book is built with."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==(\S+)")


def _pins(*names: str) -> dict[str, str]:
    pins = {}
    for name in names:
        for line in (ROOT / name).read_text().splitlines():
            if match := PIN.match(line.strip()):
                pins[match.group(1).lower()] = match.group(2)
    return pins


def test_constraints_agree_with_the_book_requirements():
    constraints = _pins("constraints.txt")
    book = _pins("requirements.txt", "requirements-lab.txt")
    assert constraints["ipykernel"] == "6.30.1" == book["ipykernel"]
    differ = {k: (v, book.get(k)) for k, v in constraints.items() if book.get(k) != v}
    assert not differ, f"constraints.txt differs from requirements*.txt: {differ}"


def test_lab_extra_keeps_ipykernel_below_7():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    kernel = [r for r in extras["lab"] if r.startswith("ipykernel")]
    assert kernel and "<7" in kernel[0]
