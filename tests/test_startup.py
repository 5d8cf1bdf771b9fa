"""Start-up: a management command must not import the heavy libraries it does not use.

litellm takes seconds to import and langchain-core about one; every process (check, chat, a Celery worker,
each test process) used to pay for both at start. They are imported where they are used: litellm on the
first hosted-model call or token count, langchain-core when the tool schemas are first needed. Checked in a
fresh interpreter, through `sys.modules`, not with a timer.
"""

import json
import os
import subprocess
import sys

from django.conf import settings

HEAVY = ("litellm", "langchain_core", "openai", "tiktoken")

PROBE = """
import json, sys
import config.settings
import django
django.setup()
from django.core.management import call_command
call_command("check", verbosity=0)
import chatbot.services, chatbot.channels.web, chatbot.agent.tools
print(json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def heavy_modules_loaded(probe: str = PROBE) -> list[str]:
    """Run the probe in a fresh interpreter; the heavy libraries it found in `sys.modules`."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "SECRET_KEY": os.environ.get("SECRET_KEY") or "startup-test", "DEBUG": "True"}
    completed = subprocess.run([sys.executable, "-c", probe.format(heavy=HEAVY)],  # noqa: S603 (our probe)
                               cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_setup_and_check_import_no_heavy_library():
    assert heavy_modules_loaded() == []


def test_the_probe_would_see_a_heavy_import():
    """The same probe reports litellm once something imports it: the check above can fail."""
    probe = PROBE.replace("import chatbot.services", "import litellm, chatbot.services")
    assert "litellm" in heavy_modules_loaded(probe)


def test_a_serving_process_loads_them_at_start_up():
    """`chatbot.warmup` (config/asgi.py) loads what the first turn would: not in a parent's turn."""
    probe = PROBE.replace("import chatbot.services",
                          "from chatbot.warmup import warm_up; warm_up()\nimport chatbot.services")
    assert {"litellm", "langchain_core", "tiktoken"} <= set(heavy_modules_loaded(probe))
