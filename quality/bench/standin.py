"""A local stand-in for a hosted model: an OpenAI-compatible chat completions server on 127.0.0.1.

    with StandIn([Say("Hello there", seconds=2)]) as model:   # LLM_API_BASE=model.api_base, LLM_MODEL=openai/x
        ...

It answers `POST .../chat/completions` as OpenAI does: a JSON completion, or with `"stream": true` server-sent
events (`data: {chunk}` lines, then `data: [DONE]`), the usage in a last chunk when the request asks for it
(`stream_options.include_usage`). The script says what each request gets, in order (the last one again when it
runs out): `Say` writes a text answer word by word over the given seconds; `Call` asks for a tool (after some
text, if given); `Break` writes some words and then drops the connection mid-stream. Every request's body is
kept (`requests`). The benchmarks and the tests use it with litellm's own client: everything from the HTTP
request on is real.
"""

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from quality.local_endpoint import LocalEndpoint


@dataclass
class Say:
    """A text answer, its words spread evenly over `seconds`."""

    text: str
    seconds: float = 0.0


@dataclass
class Call:
    """A tool call (`arguments` as JSON text), after `text` if given."""

    name: str
    arguments: str = "{}"
    text: str = ""


@dataclass
class Break:
    """The first `words` words of `text`, then the connection is closed without an end."""

    text: str
    words: int
    seconds: float = 0.0


Scripted = Say | Call | Break
PROMPT_TOKENS = 321  # what the stand-in says every prompt cost (a fixed figure the tests can check)


def pieces(text: str) -> list[str]:
    """The text as a model streams it: word by word, each with the space before it."""
    words = text.split(" ")
    return [words[0], *[" " + word for word in words[1:]]]


class StandIn:
    """The server, started in a thread on a free port; a context manager that stops it."""

    def __init__(self, script: list[Scripted], model: str = "standin") -> None:
        self.script, self.model = list(script), model
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # a stream is chunked: a connection dropped mid-stream is an error

            def log_message(self, format, *args) -> None:  # noqa: A002 (the base class's name)
                return None

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                stand_in.answer(self, body)

        self.endpoint = LocalEndpoint(Handler, "model-stand-in")

    @property
    def api_base(self) -> str:
        return self.endpoint.api_base

    def __enter__(self) -> "StandIn":
        self.endpoint.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.endpoint.__exit__(*exc)

    def _next(self, body: dict) -> Scripted:
        with self._lock:
            self.requests.append(body)
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def answer(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        item = self._next(body)
        if body.get("stream"):
            self._stream(handler, item, bool((body.get("stream_options") or {}).get("include_usage")))
        else:
            self._whole(handler, item)

    def _chunk(self, delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
        chunk = {
            "id": "chatcmpl-standin",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
            "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage:
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    def _stream(self, handler: BaseHTTPRequestHandler, item: Scripted, with_usage: bool) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        out = _Chunked(handler.wfile)
        text = item.text
        words = pieces(text) if text else []
        shown = words[: item.words] if isinstance(item, Break) else words
        delay = getattr(item, "seconds", 0.0) / max(len(words), 1)
        out.write(self._chunk({"role": "assistant", "content": ""}))
        for word in shown:
            time.sleep(delay)
            out.write(self._chunk({"content": word}))
            out.flush()
        if isinstance(item, Break):  # no last chunk: the client sees the body end early
            handler.close_connection = True
            return
        finish = "stop"
        if isinstance(item, Call):
            out.write(
                self._chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_standin",
                                "type": "function",
                                "function": {"name": item.name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            out.write(self._chunk({"tool_calls": [{"index": 0, "function": {"arguments": item.arguments}}]}))
            finish = "tool_calls"
        out.write(self._chunk({}, finish))
        if with_usage:
            out.write(self._chunk({}, usage=self._usage(text)))
        out.write(b"data: [DONE]\n\n")
        out.end()

    @staticmethod
    def _usage(text: str) -> dict:
        completion = len(text.split())
        return {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": completion,
            "total_tokens": PROMPT_TOKENS + completion,
        }

    def _whole(self, handler: BaseHTTPRequestHandler, item: Scripted) -> None:
        time.sleep(getattr(item, "seconds", 0.0))
        if isinstance(item, Break):  # no answer at all
            handler.close_connection = True
            return
        message: dict = {"role": "assistant", "content": item.text or None}
        if isinstance(item, Call):
            message["tool_calls"] = [
                {"id": "call_standin", "type": "function", "function": {"name": item.name, "arguments": item.arguments}}
            ]
        body = json.dumps(
            {
                "id": "chatcmpl-standin",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "usage": self._usage(item.text),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if isinstance(item, Call) else "stop",
                    }
                ],
            }
        )
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body.encode())


class _Chunked:
    """HTTP/1.1 chunked transfer encoding over a socket file: each write one chunk, sent at once."""

    def __init__(self, out) -> None:
        self.out = out

    def write(self, data: bytes) -> None:
        self.out.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.out.flush()

    def flush(self) -> None:
        self.out.flush()

    def end(self) -> None:
        self.out.write(b"0\r\n\r\n")
        self.out.flush()
