"""A small HTTP/1.1 client for plain-``http://`` servers: keep-alive POSTs on raw asyncio connections.

:class:`~genderscope.backends.openai.http.FleetClient` sends through it instead of aiohttp when every
server is ``http://`` and no proxy applies (loopback, a LAN vLLM): aiohttp spends ~180 µs of client CPU
on each request (headers, tracing, cookies, timers, stream readers), this ~50 µs, and over a suite of
150,000 requests on a small machine that CPU is taken from the server (decisions.md, issue 30).

What it speaks: ``POST`` with ``Content-Length``; answers with ``Content-Length``, ``chunked`` or a body
up to the end of the connection; ``Connection: close``; interim ``1xx`` answers skipped.  A connection is
reused after a complete answer and closed after anything else (timeout, cancellation, a broken answer).
Like aiohttp it never resends a POST by itself: a failure is the caller's to retry.  Errors: an
``asyncio.TimeoutError`` after ``timeout`` seconds (connect + answer), else a :class:`WireError`.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit


class WireError(Exception):
    """A connection failed or its answer was not HTTP/1.1 (the caller's "connection error")."""


class ClientConnectorError(WireError):
    """The server could not be reached."""


class ServerDisconnectedError(WireError):
    """The server closed the connection before its answer was complete."""


class BadResponseError(WireError):
    """The bytes the server sent are not an HTTP/1.1 answer."""


Answer = tuple[int, "str | None", bytes]  # status, Retry-After header (or None), body


class _Connection(asyncio.Protocol):
    """One keep-alive connection; at most one request in flight (``waiter``)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[tuple[Answer, bool]] | None = None
        self.buf = bytearray()
        self.closed = False
        # a Content-Length body arrives here piece by piece and is joined once (not grown in ``buf``)
        self._pieces: list[bytes | memoryview] = []
        self._have = 0
        # the answer's head once read: status, Retry-After, length (-1: none), chunked, keep-alive
        self._head: tuple[int, str | None, int, bool, bool] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        head = self._head
        if head is not None and head[2] < 0 and not head[3]:  # body up to the end of the connection
            self._finish((head[0], head[1], bytes(self.buf)), False)
        else:
            self._fail(ServerDisconnectedError("Server disconnected"))

    def data_received(self, data: bytes) -> None:
        try:
            head = self._head
            if head is None and not self.buf:  # an answer begins: its head is read once, here
                end = data.find(b"\r\n\r\n")
                head = self._head_of(data[:end]) if end >= 0 else None
                if head is not None:  # (an interim answer stays in ``data``: ``_parse`` skips it)
                    self._head = head
                    data = memoryview(data)[end + 4 :]  # type: ignore[assignment]
            # a Content-Length body is read in pieces, joined once; other bodies grow ``buf``
            if head is not None and head[2] >= 0 and not head[3] and not self.buf:
                self._pieces.append(data)
                self._have += len(data)
                if self._have < head[2]:
                    return
            else:
                self.buf += data
            self._parse()
        except (ValueError, IndexError) as exc:
            self._fail(BadResponseError(f"malformed HTTP answer: {exc}"))
            self.close()

    @staticmethod
    def _head_of(raw: bytes) -> tuple[int, str | None, int, bool, bool] | None:
        """(status, Retry-After, length (-1: none), chunked, keep-alive) of an answer's head; None for an
        interim answer (100 Continue: the real one follows); ValueError if it is not HTTP/1.x."""
        lines = raw.decode("latin-1").split("\r\n")
        version, status_text = lines[0].split(" ", 2)[:2]
        if not version.startswith("HTTP/1."):
            raise ValueError(f"status line {lines[0][:60]!r}")
        status = int(status_text)
        if 100 <= status < 200:
            return None
        length, chunked, keep, retry = -1, False, version == "HTTP/1.1", None
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = "chunked" in value.lower()
            elif name == "connection":
                keep = "close" not in value.lower() and (keep or "keep-alive" in value.lower())
            elif name == "retry-after":
                retry = value.strip()
        if status in (204, 304):
            length = 0
        return status, retry, length, chunked, keep

    def _parse(self) -> None:
        while self._head is None:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self._head_of(bytes(self.buf[:end]))
            del self.buf[: end + 4]
            self._head = head
        status, retry, length, chunked, keep = self._head
        if chunked:
            body = self._dechunk()
            if body is None:
                return
        elif length >= 0:
            body = self._length_body(length)
            if body is None:
                return
        else:
            return  # up to the end of the connection (connection_lost)
        self._finish((status, retry, body), keep and not self.buf)

    def _length_body(self, length: int) -> bytes | None:
        """The ``length`` bytes of a Content-Length body once they are all here (its pieces joined once;
        what follows them stays in ``buf``), else None."""
        if self.buf:  # what came with the head (or after a piece): a piece too
            self._pieces.append(bytes(self.buf))
            self._have += len(self.buf)
            self.buf.clear()
        if self._have < length:
            return None
        pieces, self._pieces, self._have = self._pieces, [], 0
        whole = pieces[0] if len(pieces) == 1 and type(pieces[0]) is bytes else b"".join(pieces)
        if len(whole) == length:
            return whole
        self.buf += memoryview(whole)[length:]
        return whole[:length]

    def _dechunk(self) -> bytes | None:
        """The whole chunked body once it is in the buffer (removed from it), else None."""
        out, pos, buf = [], 0, self.buf
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                return None
            size = int(bytes(buf[pos:eol]).split(b";", 1)[0], 16)
            if size == 0:
                end = buf.find(b"\r\n\r\n", eol)  # trailers end with an empty line
                if end < 0:
                    return None
                del buf[: end + 4]
                return b"".join(out)
            if len(buf) < eol + 2 + size + 2:
                return None
            out.append(bytes(buf[eol + 2 : eol + 2 + size]))
            pos = eol + 2 + size + 2

    def _finish(self, answer: Answer, reusable: bool) -> None:
        self._head = None
        self._pieces, self._have = [], 0
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result((answer, reusable))

    def _fail(self, exc: Exception) -> None:
        self._head = None
        self._pieces, self._have = [], 0
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class WireSession:
    """Keep-alive connections per ``host:port``; ``post`` sends one request and returns its answer."""

    def __init__(self, headers: dict[str, str], timeout: float):
        self._headers = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self._timeout = timeout
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._targets: dict[str, tuple[tuple[str, int], bytes]] = {}

    def _target(self, url: str) -> tuple[tuple[str, int], bytes]:
        """(host, port) and the request head up to the body length, per URL (built once)."""
        got = self._targets.get(url)
        if got is None:
            p = urlsplit(url)
            host, port = p.hostname or "", p.port or 80
            path = (p.path or "/") + (f"?{p.query}" if p.query else "")
            head = f"POST {path} HTTP/1.1\r\nHost: {p.netloc.rpartition('@')[2]}\r\n{self._headers}"
            got = self._targets[url] = ((host, port), (head + "Content-Length: ").encode("latin-1"))
        return got

    async def _connect(self, addr: tuple[str, int]) -> _Connection:
        idle = self._idle.get(addr)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn
        loop = asyncio.get_running_loop()
        try:
            _t, conn = await asyncio.wait_for(
                loop.create_connection(_Connection, addr[0], addr[1]), self._timeout
            )
        except OSError as exc:
            raise ClientConnectorError(
                f"Cannot connect to host {addr[0]}:{addr[1]} [{exc.strerror or exc}]"
            ) from None
        return conn

    async def post(self, url: str, body: bytes) -> Answer:
        """POST ``body`` to ``url``: (status, Retry-After, body)."""
        addr, head = self._target(url)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        conn = await self._connect(addr)
        waiter: asyncio.Future[tuple[Answer, bool]] = loop.create_future()
        conn.waiter = waiter
        timer = loop.call_at(deadline, _expire, waiter)
        try:
            conn.transport.write(b"%s%d\r\n\r\n%s" % (head, len(body), body))  # type: ignore[union-attr]
            answer, reusable = await waiter
        except BaseException:
            conn.close()  # timed out, cancelled or broken: never reused
            raise
        finally:
            timer.cancel()
        if reusable and not conn.closed:
            self._idle.setdefault(addr, []).append(conn)
        else:
            conn.close()
        return answer

    async def close(self) -> None:
        """Close every idle connection."""
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports close


def _expire(waiter: asyncio.Future[tuple[Answer, bool]]) -> None:
    if not waiter.done():
        waiter.set_exception(asyncio.TimeoutError())
