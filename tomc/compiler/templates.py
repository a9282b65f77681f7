"""Rendering Cypher from the template files in templates/.

Templates receive only words from fixed sets (event kinds) and booleans: user names and
values never reach a template; they travel as parameters. `render` refuses anything else,
and caches each rendering (a template and its context render to the same text every time).
"""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, PackageLoader, StrictUndefined

_ALLOWED_WORDS = {
    "kind": {"enter", "exit", "state", "move", "set", "tell", "says", "announce", "claim",
             "retract", "handoff", "wait", "peek", "distracted", "noop"},
    "label": {"V", "Event"},  # the nodes search indexes (search_index.cypher)
}
# Whole numbers a template may take, with their bounds: an embedding model's vector size
# (meaning_index.cypher; FalkorDB takes no parameter in a vector index's OPTIONS).
_ALLOWED_INTS = {"dimension": range(1, 65537)}


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(loader=PackageLoader("tomc.compiler", "templates"),
                       undefined=StrictUndefined, keep_trailing_newline=False,
                       trim_blocks=False, lstrip_blocks=False, autoescape=False)


def render(template: str, **context) -> str:
    """Render `templates/<template>` with a checked context; returns Cypher text.

    Raises ValueError when a context value is neither a boolean, one of the fixed words nor
    a whole number in its bounds (a compiler bug, never user input).
    """
    for name, value in context.items():
        if isinstance(value, bool):
            continue
        if type(value) is int and value in _ALLOWED_INTS.get(name, ()):
            continue
        if value not in _ALLOWED_WORDS.get(name, ()):
            raise ValueError(f"template word {name}={value!r} is not in the fixed set")
    return _render(template, tuple(sorted(context.items())))


@lru_cache(maxsize=None)
def _render(template: str, context: tuple) -> str:
    text = _environment().get_template(template).render(**dict(context))
    return "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())
