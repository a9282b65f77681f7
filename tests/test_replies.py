"""An applier's reply, typed (tomc/memory/replies.py): what each error means is written
once, and the API and the CLI both read it from there; a newer applier's fields are kept."""

from __future__ import annotations

import pytest

from tomc.memory.replies import Reply
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, Replaced, StaleWrite, TomError

COMMITTED = [{"step": 3, "text": "A enters r", "witnesses": ["A"]}]


@pytest.mark.parametrize("fields, kind", [
    ({"error": "diagnostics", "text": "A enters nowhere", "diagnostics": [
        {"code": "E102", "message": "unknown room `nowhere`", "path": "<apply>", "hint": None,
         "span": {"line": 1, "column": 10, "end_line": 1, "end_column": 17}}]}, TomError),
    ({"error": "stale", "expected": 2, "actual": 5}, StaleWrite),
    ({"error": "replaced", "message": "dropped"}, Replaced),
    ({"error": "refused", "message": "not yours"}, AccessDenied),
    ({"error": "no_memory", "message": "no memory called 'm'"}, LookupError),
    ({"error": "unavailable", "message": "lost"}, DatabaseUnavailable),
    ({"error": "something a newer applier says", "message": "?"}, DatabaseUnavailable),
])
def test_each_error_reply_is_one_exception_carrying_what_committed(fields, kind):
    failure = Reply.of({**fields, "committed": COMMITTED}).failure()
    assert type(failure) is kind
    assert failure.committed == COMMITTED


def test_bad_input_keeps_its_diagnostics_and_a_stale_write_its_steps():
    bad = Reply.of({"error": "diagnostics", "text": "A enters nowhere",
                                "diagnostics": [{"code": "E102", "message": "unknown room",
                                                 "path": "<apply>", "hint": "rooms: r",
                                                 "span": None}]}).failure()
    assert [(d.code, d.hint) for d in bad.diagnostics] == [("E102", "rooms: r")]
    stale = Reply.of({"error": "stale", "expected": 2, "actual": 5}).failure()
    assert (stale.expected, stale.actual) == (2, 5)


def test_a_success_is_no_failure_and_unknown_fields_are_kept():
    reply = Reply.of({"events": COMMITTED, "whole": [], "step": 3, "replicas": 1,
                      "later": "field"})
    assert reply.error is None and reply.step == 3 and reply.replicas == 1
    assert reply.extra == {"later": "field"}
    with pytest.raises(ValueError):
        reply.failure()
    with pytest.raises(ValueError, match="step"):
        Reply.of({"step": "three"})


def test_reading_a_reply_loads_neither_pydantic_nor_the_checker():
    """`tomc memory apply` through an applier is a thin client (tests/test_startup.py)."""
    import subprocess
    import sys

    code = ("import sys; from tomc.memory.replies import Reply; "
            "Reply.of({'events': [], 'step': 1}); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'lark'}), "
            "'tomc.dsl.checker' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["[]", "False"]
