"""A server's request for input from the user (MCP elicitation), in agentcli's own types.

During a call of its tools, a server may ask the user to fill in a form (`FormQuestion`: its
message and the fields of a flat JSON schema) or to open an address (`UrlQuestion`). The
front end's `Elicitor` answers with a `Reply`: accept (with the form's values), decline or
cancel. The REPL shows the form with the server's name and, for a sub-agent's call, the
agent's (`repl.elicit`); `agentcli run` has nobody to ask and declines, saying why
(`DeclineAll`). A server asking while none of its calls runs is declined without asking: it
cannot put a question in front of the user at a moment of its choosing; so is a page that is not
an http or https address (`refused`).

Fields (`parse_form`): strings (length limits, `format` email/uri/date/date-time), numbers and
integers (bounds), booleans, single choices (`enum`, titled `oneOf`, legacy `enumNames`) and
multiple choices (an array of such). Omitted optional fields take the schema's `default`
(`with_defaults`). Nothing here imports the `mcp` SDK.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

Action = Literal["accept", "decline", "cancel"]
Kind = Literal["text", "number", "integer", "boolean", "choice", "choices"]
Value = str | int | float | bool | list[str]
SECRET_WORDS = re.compile(
    r"pass(word|phrase|code)?|secret|token|api[ _-]?key|credential|private[ _-]?key|\bpin\b", re.I
)
"""Field names or titles that look like a request for a secret (servers must not ask in a form)."""
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class FormUnusable(Exception):
    """The requested schema is not a form agentcli can show (nested objects, unknown types)."""


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class Field:
    """One field of a form."""

    name: str
    kind: Kind
    title: str = ""
    description: str = ""
    required: bool = False
    default: Value | None = None
    choices: tuple[Choice, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    """Bounds of a number, of a text's length, or of how many choices may be picked."""
    format: str = ""

    @property
    def label(self) -> str:
        return self.title or self.name

    @property
    def looks_secret(self) -> bool:
        return bool(SECRET_WORDS.search(f"{self.name} {self.title}"))

    def parse(self, text: str) -> Value:
        """The value `text` (as typed) gives this field; raises ValueError saying what is expected."""
        text = text.strip()
        if self.kind == "boolean":
            if text.lower() in ("y", "yes", "true", "1"):
                return True
            if text.lower() in ("n", "no", "false", "0"):
                return False
            raise ValueError("answer yes or no")
        if self.kind in ("number", "integer"):
            return self._number(text)
        if self.kind == "choice":
            return self._choice(text)
        if self.kind == "choices":
            picked = [self._choice(part) for part in re.split(r"[,\s]+", text) if part]
            self._check_range(len(picked), "choices")
            return list(dict.fromkeys(picked))
        self._check_range(len(text), "characters")
        if self.format == "email" and not EMAIL.fullmatch(text):
            raise ValueError("give an email address")
        if self.format == "uri" and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S+$", text):
            raise ValueError("give an address such as https://example.com")
        if self.format == "date":
            _parsed(date.fromisoformat, text, "a date such as 2026-01-31")
        if self.format == "date-time":
            _parsed(datetime.fromisoformat, text, "a date and time such as 2026-01-31T09:30:00Z")
        return text

    def shown(self, value: Value) -> str:
        """`value` as the form shows it."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        labels = {choice.value: choice.label for choice in self.choices}
        if isinstance(value, list):
            return ", ".join(labels.get(item, item) for item in value) or "(none)"
        return labels.get(value, str(value)) if isinstance(value, str) else str(value)

    def hint(self) -> str:
        """What the field takes, in a few words (`a whole number, 1 to 10`); "" for any text."""
        if self.kind == "boolean":
            return "yes or no"
        if self.kind == "choice":
            return "one of " + ", ".join(f"{n}. {c.label}" for n, c in enumerate(self.choices, 1))
        if self.kind == "choices":
            return "any of " + ", ".join(f"{n}. {c.label}" for n, c in enumerate(self.choices, 1)) + " (numbers)"
        what = {"number": "a number", "integer": "a whole number"}.get(self.kind, self.format or "text")
        if what == "text" and self.minimum is None and self.maximum is None:
            return ""
        if self.minimum is not None and self.maximum is not None:
            return f"{what}, {_n(self.minimum)} to {_n(self.maximum)}" + (" characters" if self.kind == "text" else "")
        if self.minimum is not None:
            return f"{what}, at least {_n(self.minimum)}" + (" characters" if self.kind == "text" else "")
        if self.maximum is not None:
            return f"{what}, at most {_n(self.maximum)}" + (" characters" if self.kind == "text" else "")
        return what

    def _number(self, text: str) -> int | float:
        try:
            number: int | float = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise ValueError("give a whole number" if self.kind == "integer" else "give a number") from None
        if isinstance(number, float) and number.is_integer() and "." not in text and "e" not in text.lower():
            number = int(number)
        self._check_range(number, "")
        return number

    def _choice(self, text: str) -> str:
        for number, choice in enumerate(self.choices, 1):
            if text == str(number) or text == choice.value or text.lower() == choice.label.lower():
                return choice.value
        raise ValueError("pick " + ", ".join(f"{n} ({c.label})" for n, c in enumerate(self.choices, 1)))

    def _check_range(self, amount: float, unit: str) -> None:
        unit = f" {unit}" if unit else ""
        if self.minimum is not None and amount < self.minimum:
            raise ValueError(f"at least {_n(self.minimum)}{unit}")
        if self.maximum is not None and amount > self.maximum:
            raise ValueError(f"at most {_n(self.maximum)}{unit}")


@dataclass(frozen=True)
class FormQuestion:
    """A server asks the user to fill in a form."""

    server: str
    message: str
    fields: tuple[Field, ...]
    agents: tuple[str, ...] = ()
    """Whose calls of the server's tools were running: sub-agent types; "" for the session's own agent."""
    cancel: threading.Event | None = field(default=None, compare=False, repr=False)
    """Set when the user interrupts the call: a front end still asking stops and answers cancel."""

    @property
    def asker(self) -> str:
        return asker(self.server, self.agents)


@dataclass(frozen=True)
class UrlQuestion:
    """A server asks the user to open an address (to do there what must not pass through agentcli)."""

    server: str
    message: str
    url: str
    agents: tuple[str, ...] = ()
    cancel: threading.Event | None = field(default=None, compare=False, repr=False)

    @property
    def asker(self) -> str:
        return asker(self.server, self.agents)


Question = FormQuestion | UrlQuestion


@dataclass(frozen=True)
class Reply:
    action: Action
    content: Mapping[str, Value] | None = None
    """The form's values (accept of a form only)."""
    reason: str = ""
    """Why agentcli answered without asking anyone (sent to the server in `_meta`)."""


class Elicitor(Protocol):
    def __call__(self, question: Question, /) -> Reply:
        """Ask the user; blocks until answered (or `question.cancel` is set: cancel)."""
        ...


OPENABLE_SCHEMES = ("http", "https")
"""The only pages a server may ask the user to open: another scheme hands the address to some
other program of the machine (`file:`, `ssh:`, an application's own), which is no web page."""


def refused(question: Question) -> str:
    """Why `question` is declined without asking anyone; "" when it may be asked."""
    if isinstance(question, UrlQuestion):
        scheme = question.url.partition(":")[0].lower() if ":" in question.url else ""
        if scheme not in OPENABLE_SCHEMES or not urlsplit(question.url).hostname:
            return "agentcli asks the user to open only http and https addresses with a host"
    return ""


def asker(server: str, agents: Sequence[str]) -> str:
    """`MCP server "github"`, with the sub-agents whose calls it serves: `… (for Explore)`."""
    names = [agent for agent in dict.fromkeys(agents) if agent]
    return f'MCP server "{server}"' + (f" (for {', '.join(names)})" if names else "")


class DeclineAll:
    """The `Elicitor` of `agentcli run`: there is nobody to ask, so every request is declined,
    with one notice saying so."""

    REASON = "agentcli run is non-interactive: there is nobody to answer, so agentcli declined"

    def __init__(self, on_notice: Callable[[str], None]) -> None:
        self.on_notice = on_notice

    def __call__(self, question: Question) -> Reply:
        self.on_notice(f"{question.asker} asked for input ({_quoted(question.message)}); declined: {self.REASON}.")
        return Reply("decline", reason=self.REASON + " (run agentcli interactively to answer)")


def parse_form(schema: Mapping[str, Any]) -> tuple[Field, ...]:
    """The fields of a requested schema; raises FormUnusable for what a flat form cannot show."""
    if schema.get("type", "object") != "object":
        raise FormUnusable("the form is not an object of fields")
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise FormUnusable('"properties" must be an object and "required" a list')
    return tuple(_field(name, spec, name in required) for name, spec in properties.items())


def with_defaults(fields: Sequence[Field], content: Mapping[str, Value]) -> dict[str, Value]:
    """`content` with each omitted field that has a default set to it (SEP-1034)."""
    filled = dict(content)
    for each in fields:
        if each.name not in filled and each.default is not None:
            filled[each.name] = each.default
    return filled


def missing(fields: Sequence[Field], content: Mapping[str, Value]) -> list[Field]:
    """The required fields `content` has no value for."""
    return [each for each in fields if each.required and each.name not in content]


def _field(name: str, spec: object, required: bool) -> Field:
    if not isinstance(spec, dict):
        raise FormUnusable(f"field {name!r} is not a schema")
    title, description = str(spec.get("title") or ""), str(spec.get("description") or "")
    kind = spec.get("type")
    common: dict[str, Any] = {"name": name, "title": title, "description": description, "required": required}
    if kind == "boolean":
        return Field(kind="boolean", default=_default(spec, bool), **common)
    if kind in ("number", "integer"):
        return Field(
            kind=kind,
            default=_default(spec, (int, float)),
            minimum=_bound(spec, "minimum"),
            maximum=_bound(spec, "maximum"),
            **common,
        )
    if kind == "string":
        choices = _choices(spec)
        if choices:
            return Field(kind="choice", choices=choices, default=_default(spec, str), **common)
        return Field(
            kind="text",
            default=_default(spec, str),
            minimum=_bound(spec, "minLength"),
            maximum=_bound(spec, "maxLength"),
            format=str(spec.get("format") or ""),
            **common,
        )
    if kind == "array" and isinstance(spec.get("items"), dict):
        choices = _choices(spec["items"])
        if choices:
            default = spec.get("default")
            return Field(
                kind="choices",
                choices=choices,
                default=[str(item) for item in default] if isinstance(default, list) else None,
                minimum=_bound(spec, "minItems"),
                maximum=_bound(spec, "maxItems"),
                **common,
            )
    raise FormUnusable(f"field {name!r} has a type a form cannot ask for ({kind!r})")


def _choices(spec: Mapping[str, Any]) -> tuple[Choice, ...]:
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return tuple(
            Choice(str(option["const"]), str(option.get("title") or option["const"]))
            for option in options
            if isinstance(option, dict) and "const" in option
        )
    values = spec.get("enum")
    if not isinstance(values, list):
        return ()
    names = spec.get("enumNames")
    labels = names if isinstance(names, list) and len(names) == len(values) else values
    return tuple(Choice(str(value), str(label)) for value, label in zip(values, labels, strict=True))


def _default(spec: Mapping[str, Any], types: type | tuple[type, ...]) -> Any:
    value = spec.get("default")
    if isinstance(value, bool) and types is not bool:
        return None
    return value if isinstance(value, types) else None


def _bound(spec: Mapping[str, Any], key: str) -> float | None:
    value = spec.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _parsed(parse: Callable[[str], object], text: str, expected: str) -> None:
    try:
        parse(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"give {expected}") from None


def _n(number: float) -> str:
    return f"{number:g}"


def _quoted(message: str, limit: int = 120) -> str:
    flat = " ".join(message.split())
    return f'"{flat[: limit - 1]}…"' if len(flat) > limit else f'"{flat}"'
