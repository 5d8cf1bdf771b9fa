"""`manage.py runworker agent`: channels' runworker with a worker that survives Redis restarts.

The command line is channels' own; only the server differs (`ResilientWorker`,
chatbot/channels/worker.py): it reconnects to the channel layer with backoff
instead of exiting. This app is listed before `channels` in INSTALLED_APPS, so
Django runs this command for `runworker`.
"""

from channels.management.commands import runworker

from chatbot.channels.worker import ResilientWorker


class Command(runworker.Command):
    help = "Run a channel worker (the agent worker: `runworker agent`) that reconnects when Redis comes back."
    worker_class = ResilientWorker
