"""JSON from the outside world (webhook bodies, web chat frames), with a bound on nesting.

`json.loads` of a deeply nested document raises RecursionError, which is not a
ValueError: a webhook answered 500 and the web chat socket died. Anything nested
deeper than MAX_DEPTH is refused as malformed instead; no platform payload we
read comes near it.
"""

import json
from typing import Any

MAX_DEPTH = 64


class MalformedJSON(ValueError):
    """Not JSON, not UTF-8, or nested deeper than MAX_DEPTH."""


def loads(data: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    try:
        value = json.loads(data)
    except RecursionError:
        raise MalformedJSON(f"nested deeper than {max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise MalformedJSON(str(exc)) from None
    stack = [(value, 1)]
    while stack:  # iterative: measuring the depth must not recurse either
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > max_depth:
                raise MalformedJSON(f"nested deeper than {max_depth} levels")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return value
