"""The structure's bar (docs/layers.md): no import circle, at most 6 arrows back up against the layers.

Read from the code by `tools/house.py` (`python -m tools.house` prints the same). An import moved into a
function to dodge a circle still counts as an arrow there, so it fails `test_no_import_circle`; the lazy
imports of heavy libraries (tests/test_startup.py) are imports of libraries, not of the project's modules.
"""

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tools.house import ROOT, House, Import


def read_house(root: Path = ROOT) -> House:
    """`tools.house.read_house` in a process of its own: CPython 3.11.7's `ast.parse` can fail with "AST constructor
    recursion depth mismatch" when called deep inside a long test run (gh-106905, fixed in 3.11.8)."""
    script = "import pickle, sys; from pathlib import Path; from tools.house import read_house; " \
             "sys.stdout.buffer.write(pickle.dumps(read_house(Path(sys.argv[1]))))"
    done = subprocess.run([sys.executable, "-c", script, str(root)], cwd=ROOT, capture_output=True, check=True)  # noqa: S603
    return pickle.loads(done.stdout)  # noqa: S301  (our own child process wrote it)

MAX_ARROWS_BACK_UP = 6

@pytest.fixture(scope="module")
def house():
    return read_house()


def test_no_import_circle(house):
    assert house.circles() == []


def test_no_import_inside_a_function_closes_a_circle(house):
    """Each project import inside a function, were it at module level, would leave the graph without a circle."""
    dodging = [i for i in house.project_imports_in_functions() if i.source in house.reachable(i.target)]
    assert dodging == []


def test_at_most_six_arrows_back_up(house):
    back_up = [f"{i.source} -> {i.target}" for i in house.back_up()]
    assert len(back_up) <= MAX_ARROWS_BACK_UP, back_up


def test_the_reader_sees_a_circle_and_an_arrow_back_up(tmp_path):
    """The same reader on a two-module package that imports itself in a circle, and imports config."""
    package = tmp_path / "bookings"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from bookings import b\nimport config.settings\n")
    (package / "b.py").write_text("def late():\n    from bookings.a import thing\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "__init__.py").write_text("")
    (tmp_path / "config" / "settings.py").write_text("")
    small = read_house(tmp_path)
    assert small.circles() == [["bookings.a", "bookings.b"]]
    assert small.back_up() == [Import("bookings.a", "config.settings", 2, in_function=False)]
    assert [i.source for i in small.project_imports_in_functions()] == ["bookings.b"]
