"""Attack 2 (medium): unsafe defaults.

With no environment, DEBUG was on and SECRET_KEY fell back to a key written in
the repository, so a deploy that forgot a variable served debug pages and anyone
could forge visitor tokens and calendar links; the demo staff password was fixed.
Now the settings are production unless told otherwise, there is no secret in the
repository, and `make run` writes its own random development secret and password.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from config import local_env

BASE_DIR = Path(__file__).resolve().parent.parent.parent
ENV_FILES = [name for name in (".env", ".env.local") if (BASE_DIR / name).exists()]
needs_clean_checkout = pytest.mark.skipif(bool(ENV_FILES), reason=f"{ENV_FILES} set their own defaults")
WELL_KNOWN = ("concierge-demo", "dev-only-insecure-secret-key-change-me-0123456789abcdefghijklmnop")


def bare_env(**extra: str) -> dict[str, str]:
    """The environment of a deploy that forgot every setting."""
    keep = ("PATH", "HOME", "LANG", "DATABASE_URL", "REDIS_URL", "LITELLM_LOCAL_MODEL_COST_MAP")
    return {**{k: v for k, v in os.environ.items() if k in keep}, "DJANGO_SETTINGS_MODULE": "config.settings", **extra}


def python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, env=env,  # noqa: S603 (fixed program)
                          capture_output=True, text=True, timeout=120, check=False)


SETUP = "import django; django.setup(); from django.conf import settings as s; "


@needs_clean_checkout
def test_a_deploy_that_forgot_every_variable_does_not_start_with_a_public_secret_or_debug():
    result = python(SETUP + "print(s.DEBUG, s.SECRET_KEY)", bare_env())
    assert result.returncode != 0, f"started with DEBUG/SECRET_KEY = {result.stdout.strip()}"
    assert "SECRET_KEY must be set" in result.stderr


@needs_clean_checkout
def test_a_deploy_that_forgot_debug_is_production():
    result = python(SETUP + "print(s.DEBUG)", bare_env(SECRET_KEY="x" * 60))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_no_secret_or_password_is_written_in_the_repository():
    tracked = subprocess.run(["git", "ls-files", "config", "adminpanel", "chatbot", "bookings", "crm"],  # noqa: S607
                             cwd=BASE_DIR, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        if name.endswith(".py"):
            text = (BASE_DIR / name).read_text()
            assert not any(value in text for value in WELL_KNOWN), f"{name} carries a well-known secret"


def test_make_run_writes_a_fresh_random_development_secret_and_password(tmp_path):
    first, second = tmp_path / "a.env", tmp_path / "b.env"
    assert local_env.ensure(first) and local_env.ensure(second)
    assert not local_env.ensure(first), "written once, then left alone"
    values = [dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line and
                   not line.startswith("#")) for path in (first, second)]
    assert values[0]["DEBUG"] == "True"
    assert values[0]["SECRET_KEY"] != values[1]["SECRET_KEY"] and len(values[0]["SECRET_KEY"]) >= 50
    assert values[0]["DEMO_ADMIN_PASSWORD"] != values[1]["DEMO_ADMIN_PASSWORD"]
    assert oct(first.stat().st_mode & 0o777) == "0o600"
    assert ".env.local" in (BASE_DIR / ".gitignore").read_text().split()


@pytest.mark.django_db
def test_the_demo_staff_password_is_not_fixed(settings, monkeypatch, capsys):
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    monkeypatch.delenv("DEMO_ADMIN_PASSWORD", raising=False)
    call_command("seed_demo")
    admin = get_user_model().objects.get(username="admin")
    assert not admin.check_password("concierge-demo")
    [printed] = re.findall(r"username: admin\s+password: (\S+)", capsys.readouterr().out)
    assert admin.check_password(printed)
