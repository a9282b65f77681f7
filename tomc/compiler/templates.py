"""Rendering Cypher from the template files in templates/.

Templates receive only words from fixed sets (role and set names, trust modes, event
kinds) and Cypher fragments built from them here; user names and values never reach a
template: they travel as parameters. `render` refuses any context value outside those sets.
"""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, PackageLoader, StrictUndefined

# The only Cypher fragments a role or role set may become (parameters and loop variables).
ROLE_EXPR = {"speaker": "$speaker", "listener": "listener"}
SET_EXPR = {"witnesses": "$witnesses", "listeners": "$listeners", "believers": "$believers",
            "speaker": "[$speaker]"}
# What a one-agent chain of a role is compared against, for `except ROLE`.
ROLE_SETS = {"speaker": "[$speaker]", "listener": "$listeners"}
FORCE_EXPR = {
    "always": "true",
    "speaker_chain": "coalesce(size(p.agents) >= 2 AND last(p.agents) = $speaker, false)",
    "never": "false",
}
CONDITION_EXPR = {None: "true", False: "listener IN $believers", True: "NOT listener IN $believers"}

_ALLOWED_WORDS = {
    "kind": {"enter", "exit", "state", "move", "set", "tell", "says", "announce", "claim",
             "handoff", "wait", "noop"},
    "trust": {"credulous", "exit_order", "authority"},
    "audience": {"speaker_room", "room", "named", "all"},
}
_ALLOWED_FRAGMENTS = {
    "force": set(FORCE_EXPR.values()),
    "condition_expr": set(CONDITION_EXPR.values()),
    "members": None,  # checked element-wise below
    "path_exprs": None,
}


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(loader=PackageLoader("tomc.compiler", "templates"),
                       undefined=StrictUndefined, keep_trailing_newline=False,
                       trim_blocks=False, lstrip_blocks=False, autoescape=False)


def render(template: str, **context) -> str:
    """Render `templates/<template>` with a checked context; returns Cypher text.

    Raises ValueError when a context value is not one of the fixed identifiers or
    fragments (a compiler bug, never user input).
    """
    for name, value in context.items():
        if name in _ALLOWED_WORDS and value not in _ALLOWED_WORDS[name]:
            raise ValueError(f"template word {name}={value!r} is not in the fixed set")
        if name in ("force", "condition_expr") and value not in _ALLOWED_FRAGMENTS[name]:
            raise ValueError(f"template fragment {name}={value!r} is not in the fixed set")
        if name == "members" and not set(value.split(" + ")) <= set(SET_EXPR.values()):
            raise ValueError(f"template members {value!r} are not role sets")
        if name == "path_exprs" and not set(value) <= set(ROLE_EXPR.values()):
            raise ValueError(f"template path {value!r} is not made of roles")
    text = _environment().get_template(template).render(**context)
    return "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())
