"""The hypothesis strategies of the property tests (they live in tomc/review/strategies.py,
which `tomc diff --search` draws from too), and the project's hypothesis settings profiles.

Profiles: "ci" (the default, 100 examples), "quick" (10: the quick command, `-m "not slow"`,
chooses it: tests/conftest.py) and "thorough" (2000); pick one with the HYPOTHESIS_PROFILE
environment variable.
"""

from __future__ import annotations

import os

from hypothesis import settings

from tomc.review.strategies import (World, authority_files, facts, handoff_files,
                                    inline_policy_files, keys, linked_files, policies, scenario_files,
                                    scenarios, valid_files, values, worlds)

__all__ = ["World", "authority_files", "facts", "handoff_files", "inline_policy_files", "keys", "linked_files",
           "policies", "scenario_files", "scenarios", "valid_files", "values", "worlds"]

# CI stops at the first failure and shrinks only that one (each shrink step is a FalkorDB
# run: a planted routing bug is caught and shrunk to one event in ~35 s instead of ~90 s);
# the thorough profile goes on to report every distinct bug it finds.
settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True,
                          report_multiple_bugs=False)
settings.register_profile("quick", max_examples=10, deadline=None, print_blob=True,
                          report_multiple_bugs=False)
settings.register_profile("thorough", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
