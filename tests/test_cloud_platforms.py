"""Claude through Google Vertex AI (a whole run against the fake server's streamRawPredict route)
and Amazon Bedrock (how its client is built), both through the `anthropic` SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.contracts import ModelRequest, Unwatched
from agentcli.credentials import child_environment
from agentcli.errors import ModelAPIError, UsageError
from agentcli.providers.anthropic import AnthropicModel
from agentcli.providers.timeouts import Timeouts
from tests.conftest import TEST_KEY, RunMain
from tests.fake_anthropic import FakeAnthropic, http_error, reply, text, tool_use

HI = ModelRequest("claude-test", [], [], [{"role": "user", "content": "hi"}], 64)
VERTEX_PATH = "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-test:streamRawPredict"


def vertex_env(fake_api: FakeAnthropic) -> dict[str, str]:
    return {
        "AGENTCLI_USE_VERTEX": "1",
        "AGENTCLI_MODEL": "claude-test",
        "ANTHROPIC_API_KEY": "",  # the platform's own credentials are used
        "CLOUD_ML_REGION": "us-east5",
        "ANTHROPIC_VERTEX_PROJECT_ID": "my-project",
        "ANTHROPIC_VERTEX_BASE_URL": f"{fake_api.url}/v1",
        "ANTHROPIC_VERTEX_ACCESS_TOKEN": TEST_KEY,
    }


def test_a_run_on_vertex_streams_from_streamrawpredict(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    fake_api.script(reply(tool_use("Read", {"file_path": "a.txt"}, id="toolu_1")), reply(text("It says alpha.")))

    done = run_main("run", "what does a.txt say?", env=vertex_env(fake_api))

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It says alpha.\n"
    first, second = fake_api.requests
    assert [first.path, second.path] == [VERTEX_PATH, VERTEX_PATH]
    assert first.headers["authorization"] == f"Bearer {TEST_KEY}" and "x-api-key" not in first.headers
    assert "model" not in first.body and first.body["anthropic_version"]
    assert second.body["messages"][1]["content"][0]["id"] == "toolu_1"
    assert "alpha" in str(second.body["messages"][2]["content"][0]["content"])


def test_a_vertex_error_is_reported_and_retried_like_the_apis(
    run_main: RunMain, fake_api: FakeAnthropic, project: Path
) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "Quota exceeded"}}
    fake_api.script(http_error(429, limited, headers={"retry-after-ms": "10"}), reply(text("fine")))

    done = run_main("run", "hi", env=vertex_env(fake_api))

    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert "API error 429: Quota exceeded" in done.stderr and "retrying" in done.stderr


def test_vertex_without_a_region_says_which_variable_to_set(
    fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_USE_VERTEX", "1")
    monkeypatch.delenv("CLOUD_ML_REGION", raising=False)

    with pytest.raises(ModelAPIError, match="CLOUD_ML_REGION"):
        AnthropicModel().stream(HI, Unwatched())
    assert fake_api.requests == []


def test_the_vertex_client_takes_region_project_token_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "CLOUD_ML_REGION": "europe-west1",
        "ANTHROPIC_VERTEX_PROJECT_ID": "proj-1",
        "ANTHROPIC_VERTEX_BASE_URL": "http://127.0.0.1:9/vertex/v1",
        "ANTHROPIC_VERTEX_ACCESS_TOKEN": "ya29.token",
    }.items():
        monkeypatch.setenv(name, value)

    from agentcli.providers.anthropic_cloud import vertex_client  # the SDK: not at collection, in both workers

    client = vertex_client(Timeouts(connect=3, stream_idle=40))

    assert (client.region, client.project_id, client.access_token) == ("europe-west1", "proj-1", "ya29.token")
    assert str(client.base_url) == "http://127.0.0.1:9/vertex/v1/"
    assert client.max_retries == 0


def test_the_bedrock_client_takes_region_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", "http://127.0.0.1:9/bedrock")

    from agentcli.providers.anthropic_cloud import bedrock_client

    client = bedrock_client(Timeouts(connect=3, stream_idle=40), betas=["b-1"])

    assert client.aws_region == "eu-west-3"
    assert str(client.base_url) == "http://127.0.0.1:9/bedrock/"
    assert client.max_retries == 0
    assert client.timeout.connect == 3 and client.timeout.read == 40  # type: ignore[union-attr]
    assert client.default_headers["anthropic-beta"] == "b-1"


def test_the_bedrock_client_defaults_to_the_regions_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-northeast-1")
    monkeypatch.delenv("ANTHROPIC_BEDROCK_BASE_URL", raising=False)

    from agentcli.providers.anthropic_cloud import bedrock_client

    client = bedrock_client(Timeouts())

    assert str(client.base_url).rstrip("/") == "https://bedrock-runtime.ap-northeast-1.amazonaws.com"


def test_bedrock_without_a_region_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTCLI_USE_BEDROCK", "1")
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))

    with pytest.raises(ModelAPIError, match=r"^Amazon Bedrock is not set up: No AWS region was provided"):
        AnthropicModel().stream(HI, Unwatched())


def test_both_platforms_at_once_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCLI_USE_BEDROCK", "1")
    monkeypatch.setenv("AGENTCLI_USE_VERTEX", "1")

    with pytest.raises(UsageError, match="Both AGENTCLI_USE_BEDROCK and AGENTCLI_USE_VERTEX are set"):
        AnthropicModel().stream(HI, Unwatched())


def test_the_platforms_tokens_are_kept_from_child_processes() -> None:
    environ = {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-secret", "ANTHROPIC_VERTEX_ACCESS_TOKEN": "ya29.x", "PATH": "/bin"}

    assert child_environment(environ=environ) == {"PATH": "/bin"}
