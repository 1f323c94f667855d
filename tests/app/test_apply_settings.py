"""Apply to agent (issue 19, item 6): the Recall view's settings into openclaw.json.

One key path per previewed write, each backed up, comments kept; a refusal writes
nothing; what the agent has no setting for (ranking, weights, decay) is said, not
written.
"""

from __future__ import annotations

import pyjson5
import pytest

from app.main_window import MainWindow
from core.recall.rankings import DEFAULT_RANKING
from tests.locomo_slice import make_slice

CONFIG = """// the agent's config, as its user wrote it
{
  agents: {
    defaults: {
      memoryContext: {
        hardCapTokens: 4000, // the block's budget
      },
    },
  },
}
"""


@pytest.fixture
def home(tmp_path):
    sl = make_slice(tmp_path / "home", turns=40)
    (sl.home / "openclaw.json").write_text(CONFIG)
    return sl.home


def _window(qtbot, home, answers):
    asked = []

    def confirm(writes):
        asked.append(list(writes))
        return answers.pop(0)

    window = MainWindow(confirm=confirm)
    qtbot.addWidget(window)
    window.open_path(str(home))
    qtbot.waitUntil(lambda: window.manager.recall is not None, timeout=30_000)
    return window, asked


def _backups(home):
    return sorted(p.name for p in home.iterdir() if ".memlens-backup-" in p.name)


def test_each_setting_is_previewed_backed_up_and_written_with_comments_kept(qtbot, home):
    window, asked = _window(qtbot, home, [True, True])
    knobs = window.recall_view.knobs
    knobs.min_score.set_value(0.3)
    knobs.cross_session.setChecked(True)
    assert window.applier.apply() == [
        "agents.defaults.memoryContext.autoRecallMinScore",
        "agents.defaults.memoryContext.crossSession",
    ]
    assert [len(w) for w in asked] == [1, 1]  # one key path per preview
    first = asked[0][0]
    assert first.action == "rewrite" and "0.7 -> 0.3" not in first.summary
    assert (
        "absent (the agent's default) -> 0.3" in first.summary
        and "+        autoRecallMinScore: 0.3," in first.lines
    )
    text = (home / "openclaw.json").read_text()
    assert "// the agent's config, as its user wrote it" in text and "// the block's budget" in text
    section = pyjson5.decode(text)["agents"]["defaults"]["memoryContext"]
    assert section == {"hardCapTokens": 4000, "autoRecallMinScore": 0.3, "crossSession": True}
    assert len(_backups(home)) == 2 and first.backup.endswith(_backups(home)[0])
    assert "Written into openclaw.json" in window.status.place_label.text()
    knobs.min_score.set_value(0.9)
    knobs.defaults_button.click()  # the written values are the agent's now
    assert knobs.min_score.value() == pytest.approx(0.3)


def test_a_refused_preview_and_what_the_agent_cannot_be_told_write_nothing(qtbot, home):
    window, asked = _window(qtbot, home, [False])
    window.recall_view.knobs.min_score.set_value(0.25)
    assert window.applier.apply() == []
    assert len(asked) == 1 and (home / "openclaw.json").read_text() == CONFIG
    assert not _backups(home)
    assert "not written (cancelled)" in window.status.place_label.text()
    # another ranking (its own weights too): said, not written, and nothing asked
    window.recall_view.knobs.min_score.set_value(0.7)
    combo = window.recall_view.knobs.ranking_combo
    combo.setCurrentIndex(combo.findData(DEFAULT_RANKING))
    assert window.applier.apply() == [] and len(asked) == 1
    said = window.status.place_label.text()
    assert f"the {DEFAULT_RANKING} ranking" in said and "weights" in said
    assert (home / "openclaw.json").read_text() == CONFIG and not _backups(home)
