"""Claude on Amazon Bedrock and Google Vertex AI, through the `anthropic` SDK: imported here only,
and only when `AGENTCLI_USE_BEDROCK=1` or `AGENTCLI_USE_VERTEX=1` chose a platform.

The SDK earns its import there: it signs Bedrock requests (AWS SigV4) and decodes Bedrock's
binary event stream, and finds Google credentials. It is configured from the environment:

- Bedrock: `AWS_REGION` (or `AWS_DEFAULT_REGION`, or the AWS profile's), AWS credentials as
  boto3 finds them or `AWS_BEARER_TOKEN_BEDROCK`, `ANTHROPIC_BEDROCK_BASE_URL`.
- Vertex: `CLOUD_ML_REGION`, `ANTHROPIC_VERTEX_PROJECT_ID`, `ANTHROPIC_VERTEX_BASE_URL`, and
  Google application default credentials, or an access token in `ANTHROPIC_VERTEX_ACCESS_TOKEN`.

The SDK's own retries are off (the loop retries, visibly); its errors become ours as the HTTP
layer's do (`agentcli.providers.http`), and its events the plain dicts the API sent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import anthropic
import httpx2

from agentcli.contracts import JSON, Cancellation, ModelRequest
from agentcli.errors import ModelAPIError, TransientModelError
from agentcli.providers.anthropic import HINTS, STREAM_FAULTS
from agentcli.providers.http import (
    Endpoint,
    aborted_on,
    cancellable,
    connection_error,
    request_id_of,
    status_error,
    stream_error,
)
from agentcli.providers.timeouts import Timeouts

if TYPE_CHECKING:
    from anthropic import Stream
    from anthropic.types import RawMessageStreamEvent

PLATFORMS = {"bedrock": "Amazon Bedrock", "vertex": "Google Vertex AI"}
_EXTRAS = {"bedrock": "anthropic[bedrock]", "vertex": "anthropic[vertex]"}
_BASE_URL_VARIABLES = {"bedrock": "ANTHROPIC_BEDROCK_BASE_URL", "vertex": "ANTHROPIC_VERTEX_BASE_URL"}
_HINTS = {
    **HINTS,
    401: "Check your cloud credentials: the platform did not accept them.",
    403: "Your cloud account is not allowed to use this model (enable it in the platform's console).",
    404: "Check the model name (--model / AGENTCLI_MODEL): the platform names its models its own way.",
}


def bedrock_client(timeouts: Timeouts, betas: Sequence[str] = ()) -> anthropic.AnthropicBedrock:
    """The Bedrock client: region and base URL as the module docstring says."""
    return anthropic.AnthropicBedrock(
        aws_region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None,
        base_url=os.environ.get("ANTHROPIC_BEDROCK_BASE_URL") or None,
        max_retries=0,
        timeout=_timeout(timeouts),
        default_headers=_beta_header(betas),
    )


def vertex_client(timeouts: Timeouts, betas: Sequence[str] = ()) -> anthropic.AnthropicVertex:
    """The Vertex client: region, project, base URL and access token as the module docstring says."""
    region = os.environ.get("CLOUD_ML_REGION")
    if not region:
        raise ModelAPIError("Google Vertex AI needs a region: set CLOUD_ML_REGION (e.g. us-east5, or global).")
    return anthropic.AnthropicVertex(
        region=region,
        project_id=os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or anthropic.not_given,
        access_token=os.environ.get("ANTHROPIC_VERTEX_ACCESS_TOKEN") or None,
        base_url=os.environ.get("ANTHROPIC_VERTEX_BASE_URL") or None,
        max_retries=0,
        timeout=_timeout(timeouts),
        default_headers=_beta_header(betas),
    )


def cloud_route(platform: str, timeouts: Timeouts, betas: Sequence[str] = ()) -> SdkRoute:
    """The route for `platform` (`bedrock` or `vertex`); ModelAPIError when it is not set up."""
    build = bedrock_client if platform == "bedrock" else vertex_client
    try:
        client = build(timeouts, betas)
    except (ValueError, anthropic.AnthropicError) as error:  # no region, credentials in conflict
        raise ModelAPIError(f"{PLATFORMS[platform]} is not set up: {_one_line(error)}") from error
    return SdkRoute(platform, client, timeouts)


class SdkRoute:
    """Requests through an SDK client, its stream events handed on as plain dicts."""

    def __init__(
        self, platform: str, client: anthropic.AnthropicBedrock | anthropic.AnthropicVertex, timeouts: Timeouts
    ) -> None:
        self.platform = platform
        self.client = client
        self._timeouts = timeouts
        self._endpoint = Endpoint(str(client.base_url), {}, _BASE_URL_VARIABLES[platform], _HINTS)

    @contextmanager
    def events(self, request: ModelRequest, cancel: Cancellation | None) -> Iterator[Iterator[JSON]]:
        try:
            stream: Stream[RawMessageStreamEvent] = self.client.messages.create(
                model=request.model,
                max_tokens=request.max_tokens,
                system=request.system,  # type: ignore[arg-type]
                tools=request.tools or anthropic.omit,  # type: ignore[arg-type]
                messages=request.messages,  # type: ignore[arg-type]
                stream=True,
            )  # type: ignore[assignment]
        except anthropic.APIStatusError as error:
            response = error.response
            raise status_error(
                response, response.text, self._endpoint, request_id_of(response, self._endpoint)
            ) from error
        except anthropic.APIConnectionError as error:
            cause = error.__cause__
            if isinstance(cause, httpx2.TransportError):
                raise connection_error(cause, self._endpoint, self._timeouts) from error
            raise TransientModelError(
                f"the connection failed ({_one_line(error)})", fault="connection failed"
            ) from error
        except (ImportError, RuntimeError, anthropic.AnthropicError) as error:  # a missing extra, no project
            raise ModelAPIError(
                f"{PLATFORMS[self.platform]} could not send the request: {_one_line(error)} "
                f"(it needs `pip install '{_EXTRAS[self.platform]}'` and the platform's credentials)."
            ) from error
        with stream, aborted_on(cancel, stream.response):
            yield cancellable(self._dicts(stream, request_id_of(stream.response, self._endpoint)), cancel)

    def _dicts(self, stream: Iterator[RawMessageStreamEvent], request_id: str | None) -> Iterator[JSON]:
        try:
            for event in stream:
                value = (
                    event.to_dict() if isinstance(event, anthropic.BaseModel) else event
                )  # untyped data passes as it is
                if not isinstance(value, dict):
                    raise TransientModelError(
                        f"the stream sent an event that is not a JSON object ({type(value).__name__})",
                        fault="malformed stream",
                        request_id=request_id,
                    )
                yield value
        except json.JSONDecodeError as error:
            raise TransientModelError(
                f"the stream sent an event that is not valid JSON ({error})", fault="malformed stream"
            ) from error
        except anthropic.APIStatusError as error:  # an `error` event
            raise stream_error(error.body, STREAM_FAULTS, request_id) from error
        except (anthropic.APITimeoutError, httpx2.TimeoutException) as error:
            idle = self._timeouts.stream_idle
            raise TransientModelError(
                f"the stream sent nothing for {idle:g} s (streamIdleTimeoutSeconds)", fault="stream went silent"
            ) from error
        except (anthropic.APIConnectionError, httpx2.TransportError) as error:
            raise TransientModelError(
                f"the connection dropped mid-stream ({_one_line(error)})", fault="connection dropped"
            ) from error

    def close(self) -> None:
        self.client.close()


def _timeout(timeouts: Timeouts) -> httpx2.Timeout:
    return httpx2.Timeout(timeouts.stream_idle, connect=timeouts.connect)


def _beta_header(betas: Sequence[str]) -> dict[str, str] | None:
    return {"anthropic-beta": ",".join(betas)} if betas else None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()).rstrip(".") or type(error).__name__
