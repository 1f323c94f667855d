"""Current OpenClaw rejects ``agents.defaults.memoryContext``: memlens never adds it.

``memlens setting`` and the Recall view's "Apply to agent…" write memory-context's
recall settings into ``openclaw.json``. The pinned OpenClaw's own ``openclaw config
validate`` says why they only ever write into a section that is already there: for
today's OpenClaw the key is unrecognized, so adding it would leave the agent with a
config it refuses.
"""

from __future__ import annotations

import subprocess

import pytest

from core.openclaw.config_edit import ConfigEditError, plan_setting

pytestmark = pytest.mark.slow


def test_openclaw_rejects_the_section_memlens_refuses_to_add(openclaw, tmp_path):
    home = tmp_path / "home"
    (home / ".openclaw").mkdir(parents=True)
    config = home / ".openclaw" / "openclaw.json"
    config.write_text("{agents: {defaults: {memoryContext: {autoRecallMinScore: 0.3}}}}\n")
    done = subprocess.run(
        [*openclaw.cli, "config", "validate"],
        env=openclaw.env(home), capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert 'agents.defaults: Unrecognized key: "memoryContext"' in said, said
    today = "{agents: {defaults: {}}}\n"  # a config of today's OpenClaw: no such section
    config.write_text(today)
    with pytest.raises(ConfigEditError, match="current OpenClaw rejects the key"):
        plan_setting(config, "autoRecallMinScore", 0.3)
    assert config.read_text() == today
