"""Real websocket clients of the web chat (protocol v1), for the benchmarks that need a live server."""

import asyncio
import contextlib
import json
import time
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection, connect

CONNECT_TIMEOUT = 30.0
CONNECTS_AT_ONCE = 50  # below daphne's listen backlog, so no SYN is dropped and retried after a second


class ChatClient:
    """One socket: connects, keeps every frame it receives (a reader task), sends messages."""

    def __init__(self, url: str, origin: str) -> None:
        self.url = url
        self.origin = origin
        self.ws: ClientConnection | None = None
        self.session: dict = {}
        self.frames: list[tuple[float, dict]] = []
        self.error = ""
        self._changed = asyncio.Event()
        self._reader: asyncio.Task | None = None

    async def open(self) -> dict:
        self.ws = await connect(self.url, origin=self.origin, open_timeout=CONNECT_TIMEOUT, ping_interval=None,
                                close_timeout=5, max_size=2**22)
        first = json.loads(await asyncio.wait_for(self.ws.recv(), CONNECT_TIMEOUT))
        if first.get("type") != "session":
            raise RuntimeError(f"expected a session frame, got {first.get('type')!r}")
        self.session = first
        self._reader = asyncio.create_task(self._read())
        return first

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.frames.append((time.monotonic(), json.loads(raw)))
                self._changed.set()
        except Exception as exc:  # a dropped connection is a finding, not a crash of the bench
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._changed.set()

    @property
    def closed(self) -> bool:
        return self._reader is None or self._reader.done()

    async def send(self, payload: dict) -> None:
        await self.ws.send(json.dumps(payload))

    async def wait_for(self, predicate: Callable[[list[tuple[float, dict]]], object], timeout: float):
        """Wait until predicate(frames) is truthy (returns it) or the timeout passes (returns None)."""
        deadline = time.monotonic() + timeout
        while True:
            found = predicate(self.frames)
            if found:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.closed:
                return predicate(self.frames) or None
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    def replies(self) -> list[tuple[float, dict]]:
        return [(at, f) for at, f in self.frames if f.get("type") == "message" and f.get("role") == "assistant"]

    def errors(self) -> list[dict]:
        return [f for _, f in self.frames if f.get("type") == "error"]

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 10)
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader


async def open_many(clients: list[ChatClient], progress=None, what: str = "sockets") -> list[str]:
    """Open every client, CONNECTS_AT_ONCE at a time; returns the errors (one string per failed client)."""
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
    done = 0
    errors: list[str] = []

    async def one(client: ChatClient) -> None:
        nonlocal done
        async with gate:
            try:
                await client.open()
            except Exception as exc:
                client.error = f"connect: {type(exc).__name__}: {exc}"
                errors.append(client.error)
        done += 1
        if progress:
            progress.count(f"{what} connected", done, len(clients))

    await asyncio.gather(*(one(c) for c in clients))
    return errors


async def close_all(clients: list[ChatClient]) -> None:
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
