"""A policy file shared by scenarios is parsed once per content (tomc/dsl/policies.py)."""

from __future__ import annotations

import os

from tomc.dsl.checker import check_file

POLICY = "policy shared {\n  trust authority\n  source bulletin authority 3\n}\n"
SCENARIO = 'use policy "shared.tom"\n\nscenario {name} {{\n  agents A\n}}\n'


def test_an_edited_policy_file_is_read_again_even_with_the_same_size_and_time(tmp_path):
    policy = tmp_path / "shared.tom"
    policy.write_text(POLICY)
    first, second = tmp_path / "a.tom", tmp_path / "b.tom"
    first.write_text(SCENARIO.format(name="a"))
    second.write_text(SCENARIO.format(name="b"))
    (a,) = check_file(first).scenarios
    assert a.policy.authorities == {"bulletin": 3}
    stamp = policy.stat().st_mtime_ns
    policy.write_text(POLICY.replace("authority 3", "authority 4"))  # same size
    os.utime(policy, ns=(stamp, stamp))  # and the same time, as a fast edit can leave it
    (b,) = check_file(second).scenarios
    assert b.policy.authorities == {"bulletin": 4}
