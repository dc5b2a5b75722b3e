"""Every retry is visible: the retry policy (which failures, how long), and the loop reporting
each wait as a `Retrying` event, driven in-process against the fake server."""

from __future__ import annotations

import email.utils
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentcli.agents.build import build_agent
from agentcli.contracts import ToolContext
from agentcli.errors import ModelAPIError
from agentcli.events import Event, Retrying
from agentcli.loop import LoopConfig
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.retry import MAX_RETRY_AFTER, RetryPolicy, retry_after, should_retry, status_fault
from agentcli.providers.timeouts import Timeouts
from agentcli.workspace.local import LocalWorkspace
from tests.context.gates import RuleGate
from tests.fake_anthropic import OVERLOADED_ERROR, FakeAnthropic, http_error, reply, text

KEY = "test-key"
SERVER_ERROR = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}

# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize(("status", "retried"), [(408, True), (409, True), (429, True), (500, True), (503, True),
                                                 (529, True), (400, False), (401, False), (403, False), (404, False),
                                                 (413, False)])  # fmt: skip
def test_which_statuses_are_retried(status: int, retried: bool) -> None:
    assert should_retry(status, {}) is retried


def test_the_server_may_say_whether_to_retry() -> None:
    assert should_retry(529, {"x-should-retry": "false"}) is False
    assert should_retry(400, {"X-Should-Retry": "true"}) is True


def test_faults_are_named_in_a_few_words() -> None:
    assert [status_fault(s) for s in (529, 429, 503, 408)] == [
        "overloaded",
        "rate limited",
        "server error 503",
        "request timed out",
    ]


def test_retry_after_in_milliseconds_seconds_or_a_date() -> None:
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"Retry-After": "2"}) == 2.0
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert retry_after({"retry-after": date}, now=lambda: 1_000_000.0) == 30.0


@pytest.mark.parametrize("headers", [{}, {"retry-after": "soon"}, {"retry-after-ms": "nan"}, {"retry-after": "inf"}])
def test_no_usable_retry_after(headers: dict[str, str]) -> None:
    assert retry_after(headers) is None


def test_a_retry_after_in_the_past_means_now() -> None:
    assert retry_after({"retry-after": "-3"}) == 0.0


def test_the_servers_wait_is_honoured_exactly_up_to_a_ceiling() -> None:
    policy = RetryPolicy(draw=lambda: 0.9)

    assert policy.delay(1, server_asks=2.0) == 2.0
    assert policy.delay(3, server_asks=0.0) == 0.0
    assert policy.delay(1, server_asks=3600.0) == MAX_RETRY_AFTER


def test_backoff_doubles_up_to_its_ceiling() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, draw=lambda: 0.0)

    assert [policy.delay(n) for n in (1, 2, 3, 4, 10)] == [1.0, 2.0, 4.0, 5.0, 5.0]


@pytest.mark.parametrize("draw", [0.0, 0.5, 0.999999])
def test_jitter_only_shortens_a_wait_and_by_at_most_a_quarter(draw: float) -> None:
    wait = RetryPolicy(base_delay=2.0, draw=lambda: draw).delay(2)

    assert 3.0 <= wait <= 4.0
    assert wait == pytest.approx(4.0 * (1 - 0.25 * draw))


def test_real_jitter_stays_within_its_bounds() -> None:
    waits = {RetryPolicy(base_delay=1.0).delay(3) for _ in range(200)}

    assert all(3.0 <= wait <= 4.0 for wait in waits) and len(waits) > 1


# ------------------------------------------------------------------ the loop, in-process


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as fake:
        yield fake


def run(url: str, tmp_path: Path, timeouts: Timeouts | None = None) -> tuple[str, list[Retrying]]:
    """One user message through the real loop and Anthropic adapter; the answer and the retries seen."""
    events: list[Event] = []
    model = AnthropicModel(api_key=KEY, base_url=url, timeouts=timeouts)
    agent = build_agent(
        sources=[],
        system=[],
        model=model,
        gate=RuleGate(),
        config=LoopConfig(model="claude-test", retry_base_delay=0.01),
        ctx=ToolContext(LocalWorkspace(tmp_path)),
        on_event=events.append,
    )
    try:
        answer = agent.run([{"type": "text", "text": "hi"}]).text
    except ModelAPIError as error:
        error.add_note(repr([e for e in events if isinstance(e, Retrying)]))
        raise
    finally:
        agent.close()
        model.close()
    return answer, [event for event in events if isinstance(event, Retrying)]


def test_an_overloaded_api_is_retried_by_the_loop_and_the_wait_reported(api: FakeAnthropic, tmp_path: Path) -> None:
    api.script(http_error(529, OVERLOADED_ERROR, headers={"retry-after-ms": "20"}), reply(text("fine")))

    answer, retries = run(api.url, tmp_path)

    assert answer == "fine"
    assert retries == [Retrying(1, 0.02, "API error 529: Overloaded", "overloaded", 3)]
    assert [r.status for r in api.requests] == [529, 200]


def test_server_errors_give_up_after_the_retries_with_the_last_error(api: FakeAnthropic, tmp_path: Path) -> None:
    api.script(*[http_error(503, SERVER_ERROR) for _ in range(5)])

    with pytest.raises(ModelAPIError) as caught:
        run(api.url, tmp_path)

    assert str(caught.value).startswith("API error 503: Internal server error (still failing after 3 retries)")
    assert caught.value.status == 503
    assert len(api.requests) == 4


def test_each_retry_says_which_attempt_of_how_many(api: FakeAnthropic, tmp_path: Path) -> None:
    api.script(*[http_error(503, SERVER_ERROR) for _ in range(3)], reply(text("at last")))

    answer, retries = run(api.url, tmp_path)

    assert answer == "at last"
    assert [(r.attempt, r.retries, r.fault) for r in retries] == [(n, 3, "server error 503") for n in (1, 2, 3)]
    assert all(0.0 < r.delay <= 0.04 for r in retries)  # backoff from the configured 0.01 s


def test_a_server_that_says_do_not_retry_is_not_retried(api: FakeAnthropic, tmp_path: Path) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "Quota used up"}}
    api.script(http_error(429, limited, headers={"x-should-retry": "false"}), reply(text("never sent")))

    with pytest.raises(ModelAPIError) as caught:
        run(api.url, tmp_path)

    assert str(caught.value).startswith("API error 429: Quota used up")
    assert len(api.requests) == 1


def test_a_bad_request_is_not_retried(api: FakeAnthropic, tmp_path: Path) -> None:
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    api.script(http_error(400, bad), reply(text("never sent")))

    with pytest.raises(ModelAPIError, match="API error 400: prompt is too long"):
        run(api.url, tmp_path)
    assert len(api.requests) == 1


class SilentServer:
    """Accepts each connection and reads the request, then hangs up (or, with `answer=False`,
    says nothing until the client gives up); counts the connections."""

    def __init__(self, *, hang_up: bool) -> None:
        self.hang_up = hang_up
        self.accepted = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                self.accepted += 1
                while not self.hang_up and not self._stop.is_set() and conn.recv(65536):
                    pass  # until the client hangs up

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._server.close()


@pytest.fixture
def silent_server() -> Iterator[Callable[..., SilentServer]]:
    started: list[SilentServer] = []

    def start(*, hang_up: bool) -> SilentServer:
        started.append(SilentServer(hang_up=hang_up))
        return started[-1]

    yield start
    for server in started:
        server.close()


def test_a_connection_closed_before_the_response_is_retried_visibly(
    silent_server: Callable[..., SilentServer], tmp_path: Path
) -> None:
    server = silent_server(hang_up=True)

    with pytest.raises(ModelAPIError) as caught:
        run(server.url, tmp_path)

    assert str(caught.value).startswith(
        "The connection failed before the response came (server disconnected without sending a response) "
        "(still failing after 3 retries)"
    )
    assert server.accepted == 4  # the first try and 3 retries: none by the SDK behind our back


def test_a_server_that_never_answers_is_retried_after_the_idle_timeout(
    silent_server: Callable[..., SilentServer], tmp_path: Path
) -> None:
    server = silent_server(hang_up=False)

    with pytest.raises(ModelAPIError) as caught:
        run(server.url, tmp_path, Timeouts(stream_idle=0.2))

    assert str(caught.value).startswith(
        "The API sent no response for 0.2 s (streamIdleTimeoutSeconds) (still failing after 3 retries)"
    )
    assert server.accepted == 4


def test_an_unreachable_server_is_reported_at_once_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:  # bound, not listening: connecting is refused
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"

        with pytest.raises(ModelAPIError) as caught:
            run(url, tmp_path)

    assert str(caught.value) == (
        f"Could not reach the API at {url} (connection refused). Check ANTHROPIC_BASE_URL and your network."
    )
