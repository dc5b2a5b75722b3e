"""A tool call's input as a provider hands it to the loop: a JSON object the rest can rely on.

A model (or a local server in front of one) can send an input that is not an object (a
list), JSON nested so deep that decoding or encoding it overflows the stack, text with
lone surrogates that no request can encode, or numbers JSON cannot carry: `NaN`, `Infinity`
(which Python's decoder reads, and would write back as bare `NaN`), a number too large for a
double (`1e400`, read as infinity) or an integer too long to read. Such an input would fail
the tool call at best and, kept in the conversation, make every later request fail. `parse_tool_input` turns it
into `{}` plus the reason; the provider lists the reason in `ModelResponse.invalid_inputs`
and the executor answers that call with an error result naming it, so the model can retry.
"""

from __future__ import annotations

import json
import math
import sys

from agentcli.contracts import JSON
from agentcli.safe_text import is_valid_unicode

MAX_INPUT_DEPTH = 64
"""Objects and lists nested deeper than this are refused. Tool schemas need a few levels;
the limit stays far below what the JSON codecs (and the API) can take."""


def input_problem(value: object) -> str | None:
    """Why `value` cannot be a tool call's input, or None when it can (a JSON object, sanely nested, valid text)."""
    if not isinstance(value, dict):
        return f"the input must be a JSON object, not {_json_kind(value)}"
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:  # iterative: the value may be nested deeper than Python's recursion limit
        item, depth = pending.pop()
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        elif isinstance(item, str) and not is_valid_unicode(item):
            return "the input holds text that is not valid Unicode (a lone surrogate)"
        elif isinstance(item, float) and not math.isfinite(item):
            return (
                f"the input holds the number {_as_javascript(item)}, which JSON cannot carry (NaN, Infinity, or "
                "a number too large for a double): give a finite number, or the value as a string"
            )
        else:
            continue
        if depth > MAX_INPUT_DEPTH:
            return f"the input is nested more than {MAX_INPUT_DEPTH} levels deep"
        pending.extend((child, depth + 1) for child in children)
    return None


def parse_tool_input(raw: str) -> tuple[JSON, str | None]:
    """The input from its streamed JSON text: (the object, None), or ({}, why it cannot be used).

    Raises json.JSONDecodeError for text that is not JSON (a call cut off mid-way), which the
    caller treats as incomplete rather than invalid.
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except RecursionError:
        return {}, f"the input is nested more than {MAX_INPUT_DEPTH} levels deep"
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than Python reads
        digits = sys.get_int_max_str_digits()
        return {}, f"the input holds an integer of more than {digits} digits: give it as a string"
    problem = input_problem(value)
    return (value, None) if problem is None else ({}, problem)


def _as_javascript(number: float) -> str:
    return "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__
