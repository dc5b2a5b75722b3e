"""The Anthropic provider on agentcli's own HTTP layer: what goes on the wire (headers, body,
proxies), what comes back from failures (request ids, retry waits), and no SDK on the way."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.cache import with_cache_breakpoints
from agentcli.contracts import JSON, ModelRequest, ToolContext
from agentcli.errors import ModelAPIError
from agentcli.events import Event, Retrying
from agentcli.executor import ToolExecutor
from agentcli.loop import Agent, LoopConfig
from agentcli.providers import body as body_module
from agentcli.providers.anthropic import API_VERSION, AnthropicModel, DirectRoute
from agentcli.providers.http import Endpoint
from agentcli.providers.timeouts import Timeouts
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.local import LocalWorkspace
from tests.conftest import TEST_KEY, RunAgent, RunCli, RunMain
from tests.context.gates import RuleGate
from tests.fake_anthropic import OVERLOADED_ERROR, FakeAnthropic, http_error, reply, text, tool_use
from tests.waiting import CEILING

BAD_REQUEST = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}


def ask(model: AnthropicModel, tmp_path: Path) -> tuple[str, list[Retrying]]:
    """One "hi" through the real loop; the answer and the retries it reported."""
    events: list[Event] = []
    agent = Agent(
        model=model,
        executor=ToolExecutor(ToolRegistry([]), RuleGate()),
        config=LoopConfig(model="claude-test", retry_base_delay=0.01),
        system=[{"type": "text", "text": "Be brief."}],
        on_event=events.append,
        ctx=ToolContext(LocalWorkspace(tmp_path)),
    )
    try:
        answer = agent.run([{"type": "text", "text": "hi"}]).text
    finally:
        model.close()
    return answer, [event for event in events if isinstance(event, Retrying)]


# ------------------------------------------------------------------ no SDK on this path


def test_a_run_against_the_api_never_imports_the_sdk(run_cli: RunCli, fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(tool_use("Read", {"file_path": "missing.txt"}, id="toolu_1")), reply(text("done")))

    done = run_cli("run", "hi", env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "agentcli.providers.http" in imported  # the measurement works
    assert not {name for name in imported if name.split(".")[0] == "anthropic"}


# ------------------------------------------------------------------ headers


def test_an_api_key_goes_in_x_api_key_with_the_version_and_betas(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.script(reply(text("fine")))
    model = AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url, betas=["context-1", "tools-2"])

    assert ask(model, tmp_path)[0] == "fine"

    [sent] = fake_api.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == TEST_KEY and "authorization" not in sent.headers
    assert sent.headers["anthropic-version"] == API_VERSION
    assert sent.headers["anthropic-beta"] == "context-1,tools-2"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["user-agent"].startswith("agentcli/")


def test_no_beta_header_without_betas(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.script(reply(text("fine")))

    ask(AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url), tmp_path)

    assert "anthropic-beta" not in fake_api.requests[0].headers


def test_a_bearer_token_goes_in_authorization(
    fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.script(reply(text("fine")))

    assert ask(AnthropicModel(), tmp_path)[0] == "fine"

    headers = fake_api.requests[0].headers
    assert headers["authorization"] == f"Bearer {TEST_KEY}" and "x-api-key" not in headers


def test_custom_headers_from_the_environment_are_sent(
    fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Gateway-Team: tools\nnot a header\nanthropic-beta: from-env")
    fake_api.script(reply(text("fine")))

    ask(AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url), tmp_path)

    headers = fake_api.requests[0].headers
    assert headers["x-gateway-team"] == "tools" and headers["anthropic-beta"] == "from-env"


# ------------------------------------------------------------------ failures


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after-ms": "30"}, 0.03),
        ({"retry-after": "0.05"}, 0.05),
        ({"retry-after-ms": "20", "retry-after": "9"}, 0.02),
    ],
)
def test_the_servers_retry_wait_is_what_the_loop_waits(
    fake_api: FakeAnthropic, tmp_path: Path, headers: dict[str, str], wait: float
) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    fake_api.script(http_error(429, limited, headers=headers), reply(text("fine")))

    answer, retries = ask(AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url), tmp_path)

    assert answer == "fine"
    assert retries == [Retrying(1, wait, "API error 429: Slow down", "rate limited", 3)]


def test_a_wrong_key_is_a_401_with_what_to_check(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    with pytest.raises(ModelAPIError) as caught:
        ask(AnthropicModel(api_key="wrong-key", base_url=fake_api.url), tmp_path)

    assert str(caught.value) == (
        "API error 401: invalid x-api-key\n"
        "Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN): the server did not accept it."
    )
    assert caught.value.request_id == fake_api.requests[0].request_id
    assert len(fake_api.requests) == 1


def test_an_error_body_that_is_not_json_is_quoted(fake_api: FakeAnthropic, tmp_path: Path) -> None:
    fake_api.script(http_error(403, "<html><body>Forbidden by\n  the proxy</body></html>"))

    with pytest.raises(ModelAPIError, match=r"^API error 403: <html><body>Forbidden by the proxy</body></html>\n"):
        ask(AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url), tmp_path)


def test_verbose_shows_the_request_id_of_a_failed_request(run_main: RunMain, fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(400, BAD_REQUEST), http_error(400, BAD_REQUEST))

    plain = run_main("run", "hi")
    verbose = run_main("run", "--verbose", "hi")

    first, second = fake_api.requests
    assert plain.returncode == verbose.returncode == 1
    assert "API error 400: prompt is too long" in plain.stderr and first.request_id not in plain.stderr
    assert f"Request id: {second.request_id}" in verbose.stderr


def test_the_request_id_survives_the_retries_running_out(run_wire: RunAgent, fake_api: FakeAnthropic) -> None:
    fake_api.script(*[http_error(529, OVERLOADED_ERROR) for _ in range(4)])

    done = run_wire("hi", verbose=True)

    assert done.returncode == 1
    assert "still failing after 3 retries" in done.stderr
    assert f"Request id: {fake_api.requests[-1].request_id}" in done.stderr


# ------------------------------------------------------------------ proxies


class Proxy:
    """A forward proxy for plain HTTP on 127.0.0.1: records each request line, relays the bytes."""

    def __init__(self) -> None:
        self.request_lines: list[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def close(self) -> None:
        """Stop listening: the accepting thread wakes (closing alone would leave it waiting,
        the port still taken, for the rest of the worker's life) and ends."""
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        self._accepting.join(CEILING)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            data = client.recv(65536)
            if not data:
                client.close()
                return
            head += data
        line, rest = head.split(b"\r\n", 1)
        method, target, version = line.decode().split(" ")
        self.request_lines.append(f"{method} {target}")
        host_port, _, path = target.removeprefix("http://").partition("/")
        host, _, port = host_port.partition(":")
        upstream = socket.create_connection((host, int(port or 80)))
        upstream.sendall(f"{method} /{path} {version}\r\n".encode() + rest)
        back = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
        back.start()
        self._pump(client, upstream)
        back.join(timeout=30)
        client.close()
        upstream.close()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Proxy]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    relay = Proxy()
    monkeypatch.setenv("HTTP_PROXY", relay.url)
    yield relay
    relay.close()


def test_requests_go_through_the_proxy_the_environment_names(
    fake_api: FakeAnthropic, proxy: Proxy, tmp_path: Path
) -> None:
    fake_api.script(reply(text("through the proxy")))

    answer, _ = ask(AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url), tmp_path)

    assert answer == "through the proxy"
    assert proxy.request_lines == [f"POST {fake_api.url}/v1/messages"]


def test_no_proxy_sends_requests_straight_to_the_server(
    fake_api: FakeAnthropic, proxy: Proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    fake_api.script(reply(text("straight")))

    answer, _ = ask(AnthropicModel(api_key=TEST_KEY, base_url=fake_api.url), tmp_path)

    assert answer == "straight"
    assert proxy.request_lines == []
    assert len(fake_api.requests) == 1


# ------------------------------------------------------------------ the body


def route() -> DirectRoute:
    return DirectRoute(Endpoint("http://127.0.0.1:9", {}, "ANTHROPIC_BASE_URL", {}), Timeouts())


SYSTEM: list[JSON] = [{"type": "text", "text": "core", "cache_control": {"type": "ephemeral"}}]


def request(messages: list[JSON], tools: list[JSON] | None = None) -> ModelRequest:
    return ModelRequest("claude-test", SYSTEM, tools or [], messages, 1024)


def conversation(turns: int) -> list[JSON]:
    messages: list[JSON] = [{"role": "user", "content": [{"type": "text", "text": 'héllo \u2603 "quoted"'}]}]
    for n in range(turns):
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"{n}.txt"}}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": [{"type": "text", "text": "x\ny"}]}
        messages += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
    return messages


def test_the_body_means_exactly_the_request() -> None:
    tools = [{"name": "Read", "description": "Reads.", "input_schema": {"type": "object"}}]
    sent = request(conversation(2), tools)

    body = json.loads(route().body(sent))

    assert body == {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": sent.system,
        "tools": tools,
        "messages": sent.messages,
        "stream": True,
    }


def test_no_tools_key_without_tools() -> None:
    assert "tools" not in json.loads(route().body(request(conversation(0))))


def test_each_message_is_encoded_once_while_it_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[object] = []

    def counting(value: object) -> str:
        encoded.append(value)
        return json.dumps(value)

    monkeypatch.setattr(body_module, "encode", counting)
    messages = conversation(3)
    wire = route()
    wire.body(request(messages))
    encoded.clear()

    messages.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    marked = {**messages[-1], "content": [{"type": "text", "text": "done", "cache_control": {"type": "ephemeral"}}]}
    body = json.loads(wire.body(request([*messages[:-1], marked])))

    assert encoded == [marked]  # the system block and the earlier messages were not encoded again
    assert body["messages"][-1] == marked and body["messages"][:-1] == messages[:-1]


def marked(messages: list[JSON]) -> ModelRequest:
    """The request as the provider sends it: its cache breakpoints are marked copies of the newest messages."""
    return with_cache_breakpoints(request(messages, [{"name": "Read", "description": "Reads.", "input_schema": {}}]))


def test_a_body_built_from_earlier_encodings_is_byte_for_byte_a_fresh_one() -> None:
    """Each request reuses what the earlier ones encoded; whatever happened to the conversation in
    between (it grew, a compaction replaced its start, another conversation shared the model), the
    bytes sent are those of the request encoded from scratch."""
    wire = route()
    messages = conversation(3)
    sub_agent = conversation(1)
    sent: list[tuple[ModelRequest, bytes]] = []

    def send(messages: list[JSON]) -> None:
        request = marked(messages)
        sent.append((request, wire.body(request)))

    for turn in range(2 * body_module.MAX_PIECES):  # the pieces are joined on the way
        messages += conversation(1)[1:]  # a call and its result
        send(messages)
        if turn == 5:  # a sub-agent's requests in between
            send(sub_agent)
            sub_agent += conversation(1)[1:]
            send(sub_agent)
    cleared = {"role": "user", "content": [{"type": "text", "text": "[Old tool result cleared]"}]}
    messages = [messages[0], messages[1], cleared, *messages[3:]]  # old results cleared: same later messages
    send(messages)
    messages += conversation(1)[1:]
    send(messages)

    for request, body in sent:
        assert body == route().body(request)
    assert json.loads(sent[-1][1])["messages"][2] == cleared


def test_a_run_sends_valid_bodies_turn_after_turn(run_wire: RunAgent, fake_api: FakeAnthropic, project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    fake_api.script(
        reply(tool_use("Read", {"file_path": "a.txt"}, id="toolu_1")),
        reply(tool_use("Read", {"file_path": "a.txt", "limit": 1}, id="toolu_2")),
        reply(text("done")),
    )

    done = run_wire("read a.txt twice")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    bodies = [r.body for r in fake_api.requests]
    assert [r.status for r in fake_api.requests] == [200, 200, 200]
    assert [len(b["messages"]) for b in bodies] == [1, 3, 5]
    assert _unmarked(bodies[1]["messages"]) == _unmarked(bodies[2]["messages"][:3])  # history resent unchanged


def _unmarked(value: object) -> object:
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value
