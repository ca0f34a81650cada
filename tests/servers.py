"""Servers the tests start as real processes (``python -m assistant serve``, a Space's ``app.py``) and stop,
and the official MCP client that talks to one."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class Server:
    """A server process the test starts and stops, its output collected as it comes."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/"
        self.lines: list[str] = []
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stdout.readline, "")),
                                       daemon=True)
        self.reader.start()

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def wait(self, ready: Callable[[], bool], what: str, seconds: float = 240) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if ready():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited with {self.proc.returncode}: {self.log[-3000:]}")
            time.sleep(0.5)
        raise AssertionError(f"no {what} within {seconds:.0f} s: {self.log[-3000:]}")

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url, timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def offline_env(**extra: str) -> dict[str, str]:
    """The environment of a server the tests start: no PYTHONPATH, and every outside request fails fast."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update({"GRADIO_ANALYTICS_ENABLED": "False", "HTTP_PROXY": "http://127.0.0.1:9",
                "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost", "HF_HUB_OFFLINE": "1"})
    env.update(extra)
    return env


def mcp_session(url: str, work: Callable[[Any], Awaitable[T]]) -> T:
    """Connect to the MCP endpoint at ``url`` with the official client over streamable HTTP, initialise,
    and return what ``await work(session)`` returns."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> T:
        async with streamable_http_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)

    # its own thread and loop: a sync Playwright test earlier in the run leaves an event loop in this thread
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(main())
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="mcp-client")
    thread.start()
    thread.join(300)
    if "error" in box:
        raise box["error"]
    return box["value"]
