"""Write `.env.local`, the development settings of this checkout, once: `make run` calls this.

    python config/local_env.py            # creates .env.local if it is missing, else leaves it alone

The project is production by default (DEBUG off, a SECRET_KEY required). The
embedded default that `make run` starts needs development settings, so this
writes them beside manage.py with a fresh random secret and demo staff password.
The file is git-ignored and never leaves the machine. Standard library only: it
runs before the virtualenv exists.
"""

import secrets
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / ".env.local"


def content() -> str:
    return (
        "# Written once by `make run` (config/local_env.py) for this checkout only; git-ignored.\n"
        "# Development mode for the embedded default. Delete this file to get a new secret and password.\n"
        "DEBUG=True\n"
        f"SECRET_KEY={secrets.token_urlsafe(50)}\n"
        f"DEMO_ADMIN_PASSWORD={secrets.token_urlsafe(12)}\n"
    )


def ensure(path: Path = PATH) -> bool:
    """Create the file if it is missing; True if it was created."""
    if path.exists():
        return False
    path.write_text(content())
    path.chmod(0o600)
    return True


if __name__ == "__main__":
    if ensure():
        print(f"Wrote {PATH.name}: development settings with a fresh random SECRET_KEY and demo password.")
    sys.exit(0)
