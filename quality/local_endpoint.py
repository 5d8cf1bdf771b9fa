"""A local HTTP endpoint (127.0.0.1, a free port) served from a thread while a `with` block runs.

The OpenAI-compatible stand-ins of the bench (`quality.bench.standin`) and of the replayed recordings
(`quality.evaluation.recorded`) are each a request handler behind one of these.
"""

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

HOST = "127.0.0.1"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that closes its kept-alive connection is no error worth a traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LocalEndpoint:
    """`handler` served on HOST and a free port; `api_base` is its OpenAI-style base URL."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self.server = _Server((HOST, 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, name=name, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://{HOST}:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
