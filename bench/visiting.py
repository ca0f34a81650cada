"""Visitors of the page, two ways: headless Chromium, or plain HTTP speaking the page's own events.

A visitor opens the page, runs its command lines one after another and closes it. Through the page
(:func:`page_visitors`) each visitor is a fresh browser context; over HTTP (:func:`http_visitors`) a
visitor does what the page's script does on the wire: it holds Gradio's heartbeat stream open (the
page being open), runs the page's load event, then one ``respond`` event per line through the queue
(``queue/join``, then the ``queue/data`` stream until ``process_completed``), and closes the heartbeat
(the tab closed: Gradio runs the page's unload event). Both count replies sent, received and errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

#: Five commands that touch every kind of reply: a number, heatmaps, a map, a table, attributions.
LINES = (
    "compare A cat sat on the mat. | A kitten sat on the rug.",
    "attend The cat sat on the mat because it was tired.",
    "project The bank of the river. | The bank raised its rates. | A cat sat on the mat.",
    "tokenize The bank raised its rates.",
    "why A man plays guitar. | Someone is playing an instrument.",
)
#: Pages in the background must not be throttled (their charts would never finish drawing).
BACKGROUND_ARGS = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                   "--disable-backgrounding-occluded-windows"]


@dataclass
class Counts:
    """Replies sent, received and received as errors."""

    sent: int = 0
    received: int = 0
    errors: int = 0

    def add(self, other: Counts) -> None:
        self.sent += other.sent
        self.received += other.received
        self.errors += other.errors


# --- through the page ----------------------------------------------------------------------------

async def _page_visitor(browser, url: str, lines: Sequence[str], counts: Counts) -> None:
    from tests.browsing import DONE

    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(url)
        await page.wait_for_function("window.assistant && window.assistant.loaded === true", timeout=300_000)
        for n, line in enumerate(lines):
            box = page.locator("#command-box textarea")
            await box.fill(line)
            await box.press("Enter")
            counts.sent += 1
            try:
                await page.wait_for_function("n => document.querySelectorAll(\"" + DONE + "\").length > n",
                                             arg=n, timeout=300_000)
            except Exception:  # a lost reply: counted, and this visitor leaves
                break
            counts.received += 1
            if "error" in (await page.locator("#conversation .reply").nth(n).get_attribute("class") or ""):
                counts.errors += 1
    finally:
        await context.close()


async def in_waves(visitors: int, wave: int, visit: Callable[[Any], Awaitable[None]]) -> None:
    """``visitors`` runs of ``visit(browser)`` in one headless Chromium, ``wave`` at a time (background pages
    are not throttled, so side-by-side visitors all finish drawing)."""
    from playwright.async_api import async_playwright

    from tests.browsing import CHROMIUM_ARGS

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=shutil.which("chromium"), headless=True,
                                          args=[*CHROMIUM_ARGS, *BACKGROUND_ARGS])
        for begin in range(0, visitors, wave):
            await asyncio.gather(*(visit(browser) for _ in range(min(wave, visitors - begin))))
        await browser.close()


async def _page_legs(url: str, visitors: int, wave: int, lines: Sequence[str]) -> Counts:
    counts = Counts()
    await in_waves(visitors, wave, lambda browser: _page_visitor(browser, url, lines, counts))
    return counts


def page_visitors(url: str, visitors: int, wave: int = 3, lines: Sequence[str] = LINES) -> Counts:
    """``visitors`` visitors through the page in headless Chromium, ``wave`` at a time."""
    return asyncio.run(_page_legs(url, visitors, wave, lines))


# --- over HTTP, as the page's script does -----------------------------------------------------------

def page_events(url: str) -> dict[str, int]:
    """The page's backend events by name (``respond``, ``on_load``, ...) -> their ``fn_index``, from its config."""
    import httpx

    config = httpx.get(f"{url}config", timeout=60).json()
    return {dep["api_name"]: dep["id"] for dep in config["dependencies"] if dep.get("backend_fn")}


def _event(client, url: str, session_hash: str, fn_index: int, data: list) -> dict:
    joined = client.post(f"{url}gradio_api/queue/join", json={"data": data, "event_data": None, "fn_index": fn_index,
                                                              "trigger_id": None, "session_hash": session_hash})
    joined.raise_for_status()
    event_id = joined.json()["event_id"]
    with client.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session_hash}) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("event_id") == event_id and message.get("msg") == "process_completed":
                return message
    raise RuntimeError("the event's stream ended before it completed")


def http_visitor(url: str, events: dict[str, int], lines: Sequence[str] = LINES, model: str = "minilm",
                 mlm: str = "bert-small") -> Counts:
    """One visitor over HTTP: heartbeat open, the load event, one ``respond`` per line, heartbeat closed."""
    import httpx

    counts = Counts()
    session_hash = secrets.token_hex(6)
    with httpx.Client(timeout=300) as client, _heartbeat(url, session_hash):
        _event(client, url, session_hash, events["on_load"], [None, model, mlm, ""])
        for line in lines:
            counts.sent += 1
            try:
                done = _event(client, url, session_hash, events["respond"], [line, None, model, mlm])
            except Exception:
                break
            counts.received += 1
            payload = (done.get("output") or {}).get("data", [None, None])[1] if done.get("success") else None
            if not isinstance(payload, dict) or not payload.get("ok"):
                counts.errors += 1
    return counts  # leaving the heartbeat's block closed it: the tab is gone


@contextlib.contextmanager
def _heartbeat(url: str, session_hash: str) -> Iterator[None]:
    """Gradio's heartbeat stream, open while the block runs (its own socket, closed at the end: the tab closes)."""
    where = urllib.parse.urlsplit(url)
    sock = socket.create_connection((where.hostname, where.port or 80), timeout=300)
    try:
        sock.sendall(f"GET {where.path.rstrip('/')}/gradio_api/heartbeat/{session_hash} HTTP/1.1\r\n"
                     f"Host: {where.netloc}\r\nAccept: text/event-stream\r\n\r\n".encode())
        received = b""
        while b"ALIVE" not in received:
            chunk = sock.recv(4096)
            if not chunk:
                raise RuntimeError("the heartbeat stream closed at once")
            received += chunk
        yield
    finally:
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()


def http_visitors(url: str, visitors: int, wave: int = 4, lines: Sequence[str] = LINES) -> Counts:
    """``visitors`` visitors over HTTP, ``wave`` at a time."""
    events = page_events(url)
    counts = Counts()
    with ThreadPoolExecutor(wave) as pool:
        for result in pool.map(lambda _: http_visitor(url, events, lines), range(visitors)):
            counts.add(result)
    return counts
