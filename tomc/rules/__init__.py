"""The shipped policies, as .tom files: `default` and `hitom`.

`shipped_policy_path(name)` finds one; the checker parses it like any user policy file.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Optional


def shipped_names() -> list[str]:
    """Names of the policies shipped in this folder, e.g. ['default', 'hitom']."""
    folder = resources.files("tomc.rules")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".tom"))


def shipped_policy_path(name: str) -> Optional[Path]:
    """The path of shipped policy `name`, or None if there is none by that name."""
    if name not in shipped_names():
        return None
    return Path(str(resources.files("tomc.rules").joinpath(f"{name}.tom")))
