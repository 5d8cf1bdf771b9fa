"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402

from chatbot.channels.web.consumer import ChatOriginValidator  # noqa: E402
from chatbot.channels.worker import AGENT_CHANNEL, AgentWorker  # noqa: E402
from chatbot.routing import websocket_urlpatterns  # noqa: E402
from chatbot.warmup import warm_up  # noqa: E402
from plumbing.scheduling import embedded  # noqa: E402

warm_up()  # what the first turn would load (language detector, tool schemas, ...): at start-up, not in a turn

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": ChatOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        # `manage.py runworker agent`: agent turns for webhook channels (chatbot/channels/worker.py).
        "channel": ChannelNameRouter({AGENT_CHANNEL: AgentWorker.as_asgi()}),
    }
)

# The embedded default (eager Celery, no beat): the due scheduled jobs run on a thread of this process.
embedded.start()
