"""Which provider a session talks to: the one place that names them.

`choose` reads what the user asked for, `resolve` builds that provider's `Model`. Nothing else
imports a provider's module, and nothing here does until `resolve` is called (start-up stays
light; `module_of` tells the REPL's warm-up what to import in the background).

How a provider is chosen, first match wins:

1. a model prefix: `--model openai:gpt-5`, `gemini:MODEL`, `ollama:MODEL`, `anthropic:MODEL`
   (any registered name; the rest is the model, so `ollama:llama3.2:3b` is `llama3.2:3b`);
2. `--provider NAME`;
3. the environment variable `AGENTCLI_PROVIDER`;
4. the setting `provider`;
5. `anthropic`.

The model: `--model`, else `AGENTCLI_MODEL`, else (for Anthropic's provider) Claude Code's
`ANTHROPIC_MODEL`, else the setting `model`, else the provider's default.

`ollama` is the OpenAI-compatible provider at `OLLAMA_HOST` (Ollama's own variable, default
`localhost:11434`) + `/v1`, with no key. A resumed session goes on with the provider and model
its transcript names unless `--provider` or `--model` says otherwise (`agentcli.session.composition`).

A provider is registered with one `Provider` entry in `PROVIDERS`: its module and class, which
is built as `cls(timeouts=..., base_url=...)` (`base_url` None: the provider's own variable or
default) and must implement `agentcli.contracts.Model`; a check for its credentials that only
reads the environment (run before anything is loaded, so a missing key is reported at once);
and its default model (None: the user must name one).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from agentcli.catalog import DEFAULT_MODEL
from agentcli.contracts import Model
from agentcli.errors import UsageError
from agentcli.providers.timeouts import Timeouts
from agentcli.setting_keys import setting

if TYPE_CHECKING:  # the helper's module runs programs: imported by the provider that uses it
    from agentcli.providers.key_helper import KeyHelper

__all__ = [
    "DEFAULT_PROVIDER",
    "KEY_HELPER_SETTING",
    "MISSING_GEMINI_KEY",
    "MODEL_SETTING",
    "PROVIDERS",
    "PROVIDER_SETTING",
    "Choice",
    "Provider",
    "ProviderSettings",
    "choose",
    "credential_problem",
    "holds_a_credential",
    "module_of",
    "resolve",
]

DEFAULT_PROVIDER = "anthropic"
PROVIDER_VARIABLE = "AGENTCLI_PROVIDER"
ANTHROPIC_MODEL_VARIABLE = "ANTHROPIC_MODEL"
"""Claude Code's variable for its model: Anthropic's model when neither `--model` nor `AGENTCLI_MODEL` names one."""
PROVIDER_SETTING = setting("provider")
MODEL_SETTING = setting("model")
KEY_HELPER_SETTING = setting("apiKeyHelper")
OLLAMA_DEFAULT_HOST = "localhost:11434"

Environ = Mapping[str, str]


@dataclass(frozen=True)
class ProviderSettings:
    """What every provider is built with."""

    timeouts: Timeouts
    base_url: str | None = None
    """Where to send requests; None: the provider's own variable (OPENAI_BASE_URL…) or default."""
    key_helper: KeyHelper | None = None
    """The `apiKeyHelper` of the settings, for a provider that `takes_key_helper`."""


@dataclass(frozen=True)
class Provider:
    module: str
    class_name: str
    credential_problem: Callable[[Environ], str | None]
    """What to do when the credentials are missing, or None when they are there."""
    default_model: str | None
    base_url: Callable[[Environ], str | None] = lambda environ: None
    """Where this entry sends requests, when that is not the class's own default (ollama)."""
    takes_key_helper: bool = False
    """Built with `key_helper=` too, and a key helper counts as its credential (`apiKeyHelper`)."""


def _anthropic_credential_problem(environ: Environ) -> str | None:
    from agentcli.credentials import MISSING_CREDENTIAL, anthropic_credential

    return MISSING_CREDENTIAL if anthropic_credential(environ) is None else None


def _openai_credential_problem(environ: Environ) -> str | None:
    if environ.get("OPENAI_API_KEY") or environ.get("OPENAI_BASE_URL"):
        return None  # a server of your own (OPENAI_BASE_URL) may need no key
    return (
        "No API key for OpenAI: set OPENAI_API_KEY in your environment (or OPENAI_BASE_URL for an "
        "OpenAI-compatible server that needs none)."
    )


MISSING_GEMINI_KEY = "No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in your environment."


def _gemini_credential_problem(environ: Environ) -> str | None:
    return None if environ.get("GEMINI_API_KEY") or environ.get("GOOGLE_API_KEY") else MISSING_GEMINI_KEY


def _no_credential_needed(environ: Environ) -> str | None:
    return None


def _ollama_base_url(environ: Environ) -> str:
    host = (environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_HOST).strip().rstrip("/")
    if "://" not in host:
        host = f"http://{host}"
    return f"{host}/v1"


PROVIDERS: dict[str, Provider] = {
    "anthropic": Provider(
        "agentcli.providers.anthropic",
        "AnthropicModel",
        _anthropic_credential_problem,
        DEFAULT_MODEL,
        takes_key_helper=True,
    ),
    "openai": Provider("agentcli.providers.openai", "OpenAIModel", _openai_credential_problem, "gpt-5"),
    "gemini": Provider("agentcli.providers.gemini", "GeminiModel", _gemini_credential_problem, "gemini-2.5-flash"),
    "ollama": Provider(
        "agentcli.providers.openai", "OpenAIModel", _no_credential_needed, None, base_url=_ollama_base_url
    ),
}
"""Every provider by name (`--provider`, a model prefix, the transcript's header)."""


class Choice(NamedTuple):
    provider: str
    """A name in `PROVIDERS`."""
    model: str
    """The model's own name, without a prefix."""


def choose(
    model: str | None,
    provider: str | None,
    *,
    setting: object = None,
    model_setting: object = None,
    environ: Environ | None = None,
) -> Choice:
    """The provider and model for `--model` and `--provider` (None: not given), the settings
    `provider` and `model`, and the environment. UsageError for a provider not registered, or a
    provider without a default model when none is named."""
    environ = os.environ if environ is None else environ
    given = model or environ.get("AGENTCLI_MODEL")
    named = given or (model_setting if isinstance(model_setting, str) else None)
    choice = _prefixed(named)
    if choice is None:
        name = provider or environ.get(PROVIDER_VARIABLE) or (setting if isinstance(setting, str) else None)
        name = name or DEFAULT_PROVIDER
        source = "--provider" if provider else PROVIDER_VARIABLE if environ.get(PROVIDER_VARIABLE) else None
        entry = _entry(name, source)
        chosen = named or entry.default_model
        if not chosen:
            raise UsageError(
                f"Provider {name} has no default model: name one with --model (e.g. --model {name}:MODEL)."
            )
        choice = Choice(name, chosen)
    claude_code_model = environ.get(ANTHROPIC_MODEL_VARIABLE)
    if claude_code_model and not given and choice.provider == DEFAULT_PROVIDER:
        return Choice(DEFAULT_PROVIDER, claude_code_model)
    return choice


def _prefixed(named: str | None) -> Choice | None:
    """`provider:model` as a Choice; None when `named` has no registered provider's prefix."""
    prefix, colon, rest = (named or "").partition(":")
    return Choice(prefix, rest) if colon and prefix in PROVIDERS and rest else None


def resolve(name: str, settings: ProviderSettings, environ: Environ | None = None) -> Model:
    """The `Model` of the provider `name` (importing its module now). UsageError for an unknown name."""
    entry = _entry(name)
    base_url = settings.base_url or entry.base_url(os.environ if environ is None else environ)
    provider_class = getattr(importlib.import_module(entry.module), entry.class_name)
    more = {"key_helper": settings.key_helper} if entry.takes_key_helper else {}
    model: Model = provider_class(timeouts=settings.timeouts, base_url=base_url, **more)
    return model


def module_of(name: str) -> str:
    """The module that implements the provider `name` (what the REPL warms up)."""
    return _entry(name).module


def credential_problem(name: str, environ: Environ | None = None, *, key_helper: object = None) -> str | None:
    """What to do about the provider `name`'s missing credentials, or None when they are there;
    `key_helper`, the `apiKeyHelper` setting, is one for a provider that takes it."""
    entry = _entry(name)
    if entry.takes_key_helper and isinstance(key_helper, str) and key_helper.strip():
        return None
    return entry.credential_problem(os.environ if environ is None else environ)


def holds_a_credential(environ: Environ | None = None) -> bool:
    """Is the credential of some provider that needs one there?"""
    environ = os.environ if environ is None else environ
    return any(
        entry.credential_problem is not _no_credential_needed and entry.credential_problem(environ) is None
        for entry in PROVIDERS.values()
    )


def _entry(name: str, source: str | None = None) -> Provider:
    entry = PROVIDERS.get(name)
    if entry is None:
        where = f" ({source})" if source else ""
        raise UsageError(f"Unknown provider {name!r}{where}: use one of {', '.join(sorted(PROVIDERS))}.")
    return entry
