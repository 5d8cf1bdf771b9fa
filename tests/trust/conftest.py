"""Issue 12 and 26, "Trust": each attack from the reports is a test here (docs/identity.md, docs/trust.md).

Tests marked `attack(severity)` are counted: at the end of a run that includes them pytest prints the attacks
tried, held and failed by severity (a parametrised test counts once per case).
"""

from collections import Counter, defaultdict

import pytest

from tests.integrations.conftest import (  # noqa: F401 (fixtures reused by the attack tests)
    chatwoot,
    echo_model,
    http,
    local_http,
    turns,
    whatsapp,
)

SEVERITIES = ("high", "medium", "low", "pages")
_outcomes: dict[str, dict[str, str]] = defaultdict(dict)  # severity -> test id -> "held" / "failed"


def _severity(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("attack")
    return marker.args[0] if marker else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    outcome = yield
    report = outcome.get_result()
    severity = _severity(item)
    if severity is None or report.skipped:
        return
    if report.failed or report.when == "call":
        held = _outcomes[severity].get(item.nodeid, "held") == "held" and report.passed
        _outcomes[severity][item.nodeid] = "held" if held else "failed"


def pytest_terminal_summary(terminalreporter) -> None:
    if not _outcomes:
        return
    terminalreporter.section("attacks (tests/trust)")
    total: Counter = Counter()
    for severity in sorted(_outcomes, key=lambda s: SEVERITIES.index(s) if s in SEVERITIES else len(SEVERITIES)):
        counts = Counter(_outcomes[severity].values())
        total.update(counts)
        terminalreporter.write_line(f"{severity:>7}: tried {sum(counts.values())}, held {counts['held']}, "
                                    f"failed {counts['failed']}")
    terminalreporter.write_line(f"  total: tried {sum(total.values())}, held {total['held']}, failed {total['failed']}")
