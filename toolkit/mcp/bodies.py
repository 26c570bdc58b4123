"""Request bodies from anyone: JSON is taken only as UTF-8, and nested at most
`MAX_JSON_DEPTH` levels, before anything else (the SDK's parsers included) reads it."""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 64  # nesting of a JSON body any endpoint takes; deeper is a 400


def json_depth_problem(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why a parsed JSON value is nested too deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return f"the JSON body is nested deeper than {limit} levels"
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return None


def parse_json_body(body: bytes) -> tuple[Any, str | None]:
    """The JSON value of a request body, or why it is not one: UTF-8, valid JSON, nested at
    most MAX_JSON_DEPTH levels (the standard parser's own recursion is caught too)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None, "the body is not UTF-8"
    try:
        value = json.loads(text)
    except ValueError:
        return None, "the body is not valid JSON"
    except RecursionError:
        return None, f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels"
    return value, json_depth_problem(value)
