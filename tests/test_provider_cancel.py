"""Every provider on the HTTP layer stops waiting for a stream the moment the turn's cancel is
set (the user interrupted a sub-agent from another thread), not when the server next speaks."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from agentcli.contracts import Cancellation, Model, ModelRequest, Unwatched
from agentcli.errors import Cancelled
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.gemini import GeminiModel
from agentcli.providers.openai import OpenAIModel

WAIT_S = 30


class SilentStream:
    """Answers every request with the head of an event stream, then says nothing until hung up on."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.streaming = threading.Event()
        self.hung_up = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self._listener.accept()
        with connection:
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            self.streaming.set()
            connection.settimeout(WAIT_S)
            try:
                while connection.recv(65536):  # the rest of the body; then b"" once the client hangs up
                    pass
            except (TimeoutError, OSError):
                return
            self.hung_up.set()

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def server() -> Iterator[SilentStream]:
    silent = SilentStream()
    yield silent
    silent.close()


PROVIDERS: dict[str, Callable[[str], Model]] = {
    "anthropic": lambda url: AnthropicModel(api_key="k", base_url=url),
    "openai": lambda url: OpenAIModel(api_key="k", base_url=url),
    "gemini": lambda url: GeminiModel(api_key="k", base_url=url),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_an_interrupt_ends_a_silent_stream_at_once(provider: str, server: SilentStream) -> None:
    model = PROVIDERS[provider](server.url)
    listener = Unwatched()
    listener.cancel = Cancellation()
    request = ModelRequest(model="m", max_tokens=10, system=[], tools=[], messages=[{"role": "user", "content": "hi"}])
    interrupt = threading.Thread(target=lambda: server.streaming.wait(WAIT_S) and listener.cancel.set())  # type: ignore[union-attr]
    interrupt.start()
    try:
        with pytest.raises(Cancelled):
            model.stream(request, listener)
    finally:
        interrupt.join()
        model.close()
    assert server.hung_up.wait(WAIT_S)
