"""openai_wire: the small HTTP/1.1 client the openai backends use for plain-http servers (issue 30).

Each test serves canned answers from a raw asyncio server, so the framings real servers use (length,
chunked, up to the end of the connection, interim 100, Connection: close) are each checked, and so are
broken answers, timeouts and the choice between this client and aiohttp.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genderscope.backends.openai.http import FleetClient, HTTPOptions, wire_eligible
from genderscope.backends.openai.wire import (
    Answer,
    BadResponseError,
    ServerDisconnectedError,
    WireSession,
    _Connection,
)

Reply = Callable[[bytes], list[bytes]]  # request bytes -> the chunks to send back (b"" = close)


async def _serve(reply: Reply, requests: list[bytes]) -> asyncio.AbstractServer:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
            if not head:
                break
            n = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            req = head + await reader.readexactly(n)
            requests.append(req)
            for chunk in reply(req):
                if chunk == b"":
                    writer.close()
                    return
                if chunk == b"sleep":
                    await asyncio.sleep(1.0)
                    continue
                writer.write(chunk)
                await writer.drain()
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def _exchange(reply: Reply, bodies: list[bytes], timeout: float = 5.0) -> tuple[list, list[bytes]]:
    """Each body POSTed in turn on one session; (answer or exception per body, the requests received)."""
    requests: list[bytes] = []

    async def main() -> list:
        server = await _serve(reply, requests)
        port = server.sockets[0].getsockname()[1]
        session = WireSession({"Content-Type": "application/json"}, timeout)
        out: list = []
        for body in bodies:
            try:
                out.append(await session.post(f"http://127.0.0.1:{port}/v1/chat/completions", body))
            except Exception as exc:  # noqa: BLE001 - compared by the tests
                out.append(exc)
        await session.close()
        server.close()
        return out

    return asyncio.run(main()), requests


def test_length_answers_on_one_kept_alive_connection() -> None:
    split = [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", b"lo"]
    got, reqs = _exchange(lambda r: split, [b"{}", b"[1]"])
    assert got == [(200, None, b"hello"), (200, None, b"hello")]
    assert reqs[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Content-Type: application/json\r\n" in reqs[0]
    assert reqs[1].endswith(b"Content-Length: 3\r\n\r\n[1]")


def test_chunked_interim_and_retry_after() -> None:
    answer = [
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 429 Too Many\r\nRetry-After: 7\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab",
        b"c\r\n2;x=1\r\nde\r\n0\r\n\r\n",
    ]
    got, _ = _exchange(lambda r: answer, [b"{}", b"{}"])
    assert got == [(429, "7", b"abcde"), (429, "7", b"abcde")]


def test_close_framings() -> None:
    got, _ = _exchange(lambda r: [b"HTTP/1.0 200 OK\r\n\r\nuntil the end", b""], [b"{}", b"{}"])
    assert got == [(200, None, b"until the end")] * 2  # each on a new connection
    close = [b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", b""]
    got, reqs = _exchange(lambda r: close, [b"{}", b"{}"])
    assert got == [(200, None, b"ok")] * 2 and len(reqs) == 2


def test_broken_answers_and_timeouts_raise() -> None:
    got, _ = _exchange(lambda r: [b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", b""], [b"{}"])
    assert isinstance(got[0], ServerDisconnectedError)
    got, _ = _exchange(lambda r: [b"SPDY/9 what\r\n\r\n"], [b"{}"])
    assert isinstance(got[0], BadResponseError)
    slow = [b"sleep", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]
    got, _ = _exchange(lambda r: slow, [b"{}", b"{}"], timeout=0.2)
    assert [type(g) for g in got] == [asyncio.TimeoutError, asyncio.TimeoutError]


def test_which_client(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "GENDERSCOPE_HTTP"):
        monkeypatch.delenv(name, raising=False)
    assert wire_eligible(["http://127.0.0.1:8000/v1"], loopback=True)
    assert wire_eligible(["http://10.0.0.1:8000/v1"], loopback=False)
    assert not wire_eligible(["https://api.openai.com/v1"], loopback=False)
    assert not wire_eligible(["http://u:p@10.0.0.1:8000/v1"], loopback=False)  # basic auth: aiohttp's
    monkeypatch.setenv("HTTP_PROXY", "http://proxy:3128")
    assert not wire_eligible(["http://10.0.0.1:8000/v1"], loopback=False)  # aiohttp speaks to proxies
    assert wire_eligible(["http://127.0.0.1:8000/v1"], loopback=True)  # loopback never goes to a proxy
    monkeypatch.setenv("GENDERSCOPE_HTTP", "aiohttp")
    assert not wire_eligible(["http://127.0.0.1:8000/v1"], loopback=True)
    assert not FleetClient(HTTPOptions(base_url="http://127.0.0.1:1/v1"), "model 'm'").wire


ANSWERS = [  # (bytes a server sends, the answer read, whether the connection is reused)
    (b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", (200, None, b"hello world"), True),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", (200, None, b""), True),
    (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nRetry-After: 2\r\nContent-Length: 3\r\n\r\n{ }",
     (503, "2", b"{ }"), True),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n1\r\ne\r\n0\r\n\r\n",
     (200, None, b"abcde"), True),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcdEXTRA", (200, None, b"abcd"), False),
    (b"HTTP/1.1 204 No Content\r\n\r\n", (204, None, b""), True),
    (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", (200, None, b"ok"), False),
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(case=st.integers(0, len(ANSWERS) - 1), cuts=st.lists(st.integers(0, 120), max_size=6))
def test_an_answer_reads_the_same_however_its_bytes_arrive(case: int, cuts: list[int]) -> None:
    """The bytes of an answer delivered in any pieces (the head split, the body split, head and body in
    one piece) give the answer and the reuse decision of one delivery."""
    sent, answer, reusable = ANSWERS[case]
    bounds = sorted({min(c, len(sent)) for c in cuts} | {0, len(sent)})
    if sent.endswith(b"EXTRA"):  # bytes after the body are seen only when they come with its last byte
        reusable = len(sent) - 5 in bounds

    async def main() -> tuple[Answer, bool]:
        conn = _Connection()
        conn.waiter = waiter = asyncio.get_running_loop().create_future()
        for a, b in zip(bounds, bounds[1:]):
            conn.data_received(sent[a:b])
        return await asyncio.wait_for(waiter, 1.0)

    assert asyncio.run(main()) == (answer, reusable)
