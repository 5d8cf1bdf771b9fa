"""Production settings: `check --deploy` is clean, and a missing SECRET_KEY stops the start."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent

# Settings that a developer's shell (or CI) might set and that would change what is checked.
_OVERRIDABLE = (
    "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD",
    "DJANGO_SETTINGS_MODULE", "EMAIL_URL",
)


def production_env(**overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _OVERRIDABLE}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="False",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="school.example",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        EMAIL_URL="smtp+tls://concierge:pw@mail.school.example:587",
    )
    env.update(overrides)
    return {key: value for key, value in env.items() if value is not None}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )


def test_check_deploy_reports_no_issues():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("email_url", [None, "consolemail://", "dummymail://"])
def test_check_deploy_fails_when_production_would_not_send_its_emails(email_url):
    """Without EMAIL_URL (or with one that prints or drops) reminders never reach parents, and the console
    backend would print their addresses and manage links into the worker's log."""
    result = manage("check", "--deploy", env=production_env(EMAIL_URL=email_url))
    assert result.returncode != 0
    assert "crm.E001" in result.stdout + result.stderr


def test_email_comes_from_email_url():
    values = read_settings("s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS", production_env())
    assert values == "django.core.mail.backends.smtp.EmailBackend mail.school.example 587 True"
    assert read_settings("s.EMAIL_BACKEND", production_env(EMAIL_URL=None)) == "config.mail.NotConfiguredBackend"
    development = production_env(EMAIL_URL=None, DEBUG="True")
    assert read_settings("s.EMAIL_BACKEND", development) == "django.core.mail.backends.console.EmailBackend"


def read_settings(expression: str, env: dict[str, str]) -> str:
    result = subprocess.run(  # noqa: S603 - our own interpreter with a fixed program
        [sys.executable, "-c", f"import django; django.setup(); from django.conf import settings as s; "
                               f"print({expression})"],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_production_settings_values():
    values = read_settings(
        "s.DEBUG, s.ALLOWED_HOSTS, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS > 0, s.SECURE_HSTS_PRELOAD",
        production_env(),
    )
    assert values == "False ['school.example'] True True True True True"


def test_hsts_preload_can_be_turned_off():
    assert read_settings("s.SECURE_HSTS_PRELOAD", production_env(SECURE_HSTS_PRELOAD="False")) == "False"


ENV_FILES = [name for name in (".env", ".env.local") if (BASE_DIR / name).exists()]


@pytest.mark.skipif(bool(ENV_FILES), reason=f"a local {' and '.join(ENV_FILES)} sets its own defaults")
def test_with_no_environment_the_settings_are_production():
    env = production_env(DEBUG=None, ALLOWED_HOSTS=None)
    assert read_settings("s.DEBUG, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.SECURE_HSTS_SECONDS > 0",
                         env) == "False True True True"


@pytest.mark.skipif(bool(ENV_FILES), reason=f"a local {' and '.join(ENV_FILES)} gives this checkout a secret")
def test_without_a_secret_key_production_settings_refuse_to_load():
    env = production_env()
    del env["SECRET_KEY"]
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY must be set" in result.stderr


def test_an_empty_secret_key_is_refused_too():
    result = manage("check", env=production_env(SECRET_KEY=""))
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
