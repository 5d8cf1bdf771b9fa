"""Browser tests: headless Chromium, driven by Selenium, against a live daphne.

`channels.testing.ChannelsLiveServerTestCase` forks daphne, which then opens the
test database by its TEST NAME (or "test_" + NAME when that is unset, which after
the fork would be "test_test_..."). When browser tests are selected, this
conftest names the test database explicitly: on SQLite a file (the default test
database lives in memory, which a second process cannot see), elsewhere the
usual "test_" + NAME.
Without Chromium and its driver the browser tests are skipped, with the reason.
"""

import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.db.backends.base.creation import TEST_DATABASE_PREFIX

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"


def missing_browser() -> str:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            return f"{path} is not installed (apt-get install -y chromium chromium-driver)"
    return ""


def _name_the_test_database() -> None:
    database = settings.DATABASES["default"]
    if database.get("TEST", {}).get("NAME"):
        return
    if database["ENGINE"].endswith("sqlite3"):
        name = str(Path(tempfile.gettempdir()) / f"concierge-browser-tests-{settings.SECRET_KEY[-6:]}.sqlite3")
    else:
        name = TEST_DATABASE_PREFIX + database["NAME"]
    database.setdefault("TEST", {})["NAME"] = name
    connections["default"].settings_dict.setdefault("TEST", {})["NAME"] = name


@pytest.hookimpl(trylast=True)  # after -m / -k deselection: only when browser tests will really run
def pytest_collection_modifyitems(config, items):
    browser_items = [item for item in items if "browser" in item.keywords]
    if not browser_items:
        return
    reason = missing_browser()
    if reason:
        for item in browser_items:
            item.add_marker(pytest.mark.skip(reason=reason))
        return
    _name_the_test_database()
    # Import the ASGI application (and warm the offline model) before daphne is forked, so it starts at once.
    import config.asgi  # noqa: F401


@pytest.fixture
def chrome(request):
    """A fresh headless Chromium (its own profile, so a new visitor) on the test instance as `self.browser`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chrome-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--no-first-run", "--window-size=1280,900", "--force-device-scale-factor=1",
                     "--lang=en-GB", f"--user-data-dir={profile}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    ARTIFACTS.mkdir(exist_ok=True)
    request.instance.browser = driver
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
