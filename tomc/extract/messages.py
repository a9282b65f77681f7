"""Messages to extract from: plain text or a chat export, read into one shape.

    read_messages('Maya: my refund?\\nBilling: approved', "input.txt")
        -> [Message(id=1, speaker="Maya", channel=None, time=None, text="my refund?"),
            Message(id=2, speaker="Billing", ...)]

Plain text: each non-blank line `Speaker: text` is a message from Speaker; a block of lines
with no speaker is one message of prose. A chat export (JSON) is a list of messages, or an
object whose `messages` is one; each message has `text` (or `content`), and optionally
`speaker` (or `author`, `user`, `from`), `channel` (or `room`) and `time` (or `timestamp`,
`ts`: ISO 8601, or seconds since the epoch). The speaker and channel of a message become the
event's actor and room, its time the event's `at` (candidates.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from tomc.dsl.diagnostics import Diagnostic, DiagnosticError

_FIELDS = {"text": ("text", "content", "body", "message"),
           "speaker": ("speaker", "author", "user", "from", "sender", "name"),
           "channel": ("channel", "room", "thread"),
           "time": ("time", "timestamp", "ts", "date")}
# `Speaker: text`, the speaker a name of at most 40 characters without a colon.
_SPOKEN = re.compile(r"^\s*(?:\[(?P<time>[^\]]{1,40})\]\s*)?"
                     r"(?P<speaker>[^:\s][^:]{0,39}):\s+(?P<text>\S.*)$")


@dataclass(frozen=True)
class Message:
    """One message: `id` (1, 2, ... in reading order), who said it where and when (each
    may be unknown: None), and its `text` (what candidates quote from)."""

    id: int
    speaker: Optional[str]
    channel: Optional[str]
    time: Optional[str]
    text: str

    def as_json(self) -> dict:
        return {"id": self.id, "speaker": self.speaker, "channel": self.channel,
                "time": self.time, "text": self.text}


def read_messages(text: str, origin: str) -> list[Message]:
    """The messages of `text` (a chat export when it parses as JSON, else plain text).
    Raises DiagnosticError (E201) for a chat export of the wrong shape."""
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if data is not None:
            return _chat_export(data, origin)
    return _plain_text(text)


def _plain_text(text: str) -> list[Message]:
    messages: list[Message] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            messages.append(Message(len(messages) + 1, None, None, None, "\n".join(prose)))
            prose.clear()

    for line in text.splitlines():
        spoken = _SPOKEN.match(line)
        if spoken:
            flush()
            try:
                time = _time(spoken["time"]) if spoken["time"] else None
            except ValueError:  # `[note] Maya: ...`: not a time, so none is known
                time = None
            messages.append(Message(len(messages) + 1, spoken["speaker"].strip(), None, time,
                                    spoken["text"].strip()))
        elif line.strip():
            prose.append(line.strip())
        else:
            flush()
    flush()
    return messages


def _chat_export(data: object, origin: str) -> list[Message]:
    items = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise _bad(origin, "a chat export is a JSON list of messages, or an object whose "
                           "`messages` is one")
    messages = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _bad(origin, f"message {index} is not an object")
        text = _field(item, "text")
        if not isinstance(text, str) or not text.strip():
            raise _bad(origin, f"message {index} has no text (a `text` or `content` string)")
        speaker, channel, time = (_field(item, f) for f in ("speaker", "channel", "time"))
        for name, value in (("speaker", speaker), ("channel", channel)):
            if value is not None and not isinstance(value, str):
                raise _bad(origin, f"message {index}: its {name} must be a string")
        try:
            when = None if time is None else _time(time)
        except ValueError:
            raise _bad(origin, f"message {index}: its time {time!r} is not ISO 8601 or "
                               "seconds since the epoch") from None
        messages.append(Message(len(messages) + 1, speaker, channel, when, text))
    return messages


def _field(item: dict, field: str):
    for name in _FIELDS[field]:
        if item.get(name) is not None:
            return item[name]
    return None


def _time(value: object) -> str:
    """A message time as the language writes times (`2026-03-02T09:30:00+00:00`): ISO 8601
    text, or seconds since the epoch (UTC). Raises ValueError."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        moment = datetime.fromtimestamp(value, tz=timezone.utc)
    elif isinstance(value, str):
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    else:
        raise ValueError(value)
    return moment.isoformat(timespec="minutes" if moment.second == 0 else "seconds")


def _bad(origin: str, message: str) -> DiagnosticError:
    return DiagnosticError([Diagnostic("E201", message, None, origin,
                                       hint="see docs/extract.md, \"Input\"")])
