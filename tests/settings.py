"""Settings for `make test` (pytest-django's DJANGO_SETTINGS_MODULE, see pyproject.toml).

The project's settings are production unless told otherwise and need a SECRET_KEY
(config/settings.py). The test suite runs in development mode with a throwaway
random secret, set here so that neither a developer nor CI has to: processes the
tests start (workers, daphne) inherit both through the environment.
"""

import os
import secrets

os.environ.setdefault("DEBUG", "True")
os.environ.setdefault("SECRET_KEY", f"test-only-{secrets.token_urlsafe(48)}")
# Processes the tests start (daphne for the browser tests) run no scheduler either.
os.environ.setdefault("EMBEDDED_SCHEDULER", "False")

from config.settings import *  # noqa: E402, F403
