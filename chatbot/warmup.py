"""What a serving process (web server, `runworker agent`) loads before its first parent.

Each of these is loaded on first use, and each takes from a tenth of a second to seconds: paid inside a
turn, the first parents of every new process waited for it, and a burst of parents on a fresh process
queued behind it (the tool schemas alone held one web process's thread for about a second and a half; the
tokenizer, five).
Management commands do not call this, so they still start in about a second (tests/test_startup.py).
"""

import logging
import time

from django.conf import settings

from chatbot import language
from chatbot.agent import model, prompt, tools
from chatbot.agent.offline import when

logger = logging.getLogger(__name__)


def warm_up() -> None:
    """Load the language detector, the tool schemas (langchain-core), the offline policy's date reader
    (dateparser; the fallback of every model), the tokenizer that bounds a prompt's history (litellm's, with
    its encoding: about 5 s, paid by the first turn of a conversation with history) and the configured model
    (a hosted one: what its first call loads, about 2 s, `model.warm_up_hosted`)."""
    started = time.perf_counter()
    language.warm_up()
    schemas = tools.all_schemas()
    when.warm_up()
    prompt.count_tokens([{"role": "user", "content": "warming up"}])
    model.local_model(settings.LLM_MODEL)
    model.warm_up_hosted(schemas)
    logger.info("warm-up: language detector, tool schemas, date reader, tokenizer and model loaded in %.1f s",
                time.perf_counter() - started)
