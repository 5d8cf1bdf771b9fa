"""The peer's own virtualenv: `.bench/peer-venv` (git-ignored), created and filled on first use.

`python -m venv`, then `pip install -r requirements.txt` (beside this file), pip's lines shown as progress.
A stamp file holds the requirements it was built from, so a changed pin rebuilds it and an unchanged one
costs nothing.
"""

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REQUIREMENTS = Path(__file__).with_name("requirements.txt")
STAMP = "requirements.installed"
INSTALL_TIMEOUT_SECONDS = 900


class PeerUnavailable(Exception):
    """The peer's environment could not be built (no network to the package index, pip failed)."""


def venv_dir(base_dir: Path) -> Path:
    return Path(base_dir) / ".bench" / "peer-venv"


def python_in(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure(base_dir: Path, say: Callable[[str], None]) -> Path:
    """The peer virtualenv's python, after creating and installing the environment if it is not ready."""
    venv = venv_dir(base_dir)
    wanted = REQUIREMENTS.read_text()
    stamp = venv / STAMP
    if python_in(venv).exists() and stamp.exists() and stamp.read_text() == wanted:
        return python_in(venv)
    if venv.exists():
        say(f"peer: rebuilding {venv} (its requirements changed or an install was interrupted)")
        shutil.rmtree(venv)
    say(f"peer: creating {venv} and installing LangGraph there (once; about a minute)")
    _run([sys.executable, "-m", "venv", str(venv)], say)
    _run([str(python_in(venv)), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off",
          "-r", str(REQUIREMENTS)], say)
    stamp.write_text(wanted)
    say("peer: environment ready")
    return python_in(venv)


def _run(argv: list[str], say: Callable[[str], None]) -> None:
    """Run a step of the install, each line of its output shown as progress; raise PeerUnavailable if it fails."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,  # noqa: S603
                               stdin=subprocess.DEVNULL)
    tail: list[str] = []
    for line in process.stdout or ():
        if line := line.rstrip():
            say(f"  {line}")
            tail = (tail + [line])[-3:]
    if process.wait(INSTALL_TIMEOUT_SECONDS) != 0:
        raise PeerUnavailable(f"{' '.join(argv[:3])} ... failed (exit {process.returncode}): " + " / ".join(tail))
