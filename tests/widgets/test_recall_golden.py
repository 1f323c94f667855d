"""Golden queries from the user's own data (issue 19, item 5).

In the Recall view, "Should be found" appends the query and the explained segment
to ``labels.jsonl`` beside the store (one whole line, the query redacted); every
settings change checks the golden queries again, and the badge warns when a change
loses one.
"""

from __future__ import annotations

import shutil

import orjson
import pytest

from core.embed.hash import HashEmbedder
from core.recall.engine import RecallSettings
from core.recall.golden import check_golden, read_golden
from core.recall.hybrid import SearchConfig
from core.recall.warm_store import StoreSettings, WarmStore
from tests.locomo_slice import make_slice
from widgets.common.jobs import JobRunner
from widgets.common.view_jobs import wait_idle
from widgets.recall.preview import RecallPreview

NOW = 1_700_000_000_000


@pytest.fixture(scope="module")
def sl(tmp_path_factory):
    return make_slice(tmp_path_factory.mktemp("golden"))


@pytest.fixture
def view(qtbot, sl, tmp_path):
    folder = tmp_path / "store"
    folder.mkdir()
    shutil.copy(sl.store / "segments.jsonl", folder / "segments.jsonl")  # no labels yet
    store = WarmStore.open(folder, HashEmbedder(), StoreSettings(eviction_days=0))
    w = RecallPreview(runner=JobRunner())
    qtbot.addWidget(w)
    settings = RecallSettings(search=SearchConfig(min_score=0.0, decay=1.0))
    with qtbot.waitSignal(w.preview_changed, timeout=10_000):
        w.attach(store, None, settings, now_ms=NOW)
    return w, store, folder


def _found_label(sl, view):
    """A label whose segment recall finds with the view's settings."""
    w, store, _ = view
    checks = check_golden(store, _labels(sl), w.settings(), now_ms=NOW)
    return next(c.label for c in checks if c.found)


def _labels(sl):
    from core.recall.evaluate import load_labels

    return load_labels(sl.labels_path)[0]


def _settle(qtbot, w):
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=10_000)
    assert wait_idle(w.golden._runner, w.golden._key, 10_000)


def test_should_be_found_appends_a_golden_query_and_checks_it(qtbot, sl, view):
    w, _, folder = view
    bar = w.golden
    assert not bar.badge.isVisible() and not bar.mark_button.isEnabled()
    label = _found_label(sl, view)
    with qtbot.waitSignal(w.preview_changed, timeout=10_000):
        w.ask(label.query, label.session, label.relevant[0])
    assert bar.mark_button.isEnabled()
    bar.mark_button.click()
    lines = (folder / "labels.jsonl").read_bytes().splitlines()
    assert [orjson.loads(x) for x in lines] == [
        {"query": label.query, "relevant": [label.relevant[0]], "session": label.session}
    ]
    assert read_golden(folder / "labels.jsonl")[0][0].query == label.query
    _settle(qtbot, w)
    assert bar.badge.text() == "Golden 1/1 found" and not bar.lost
    # a settings change that loses it: the badge warns, naming the query
    with qtbot.waitSignal(w.preview_changed, timeout=10_000):
        w.knobs.min_score.set_value(0.9)  # cosine alone must reach 0.9 now
        w.knobs.text_weight.set_value(0.0)
        w.knobs.config_changed.emit()
    _settle(qtbot, w)
    assert [x.query for x in bar.lost] == [label.query]
    assert "1 golden lost" in bar.badge.text() and label.query in bar.badge.text()
    assert "not a hit" in bar.badge.toolTip()
    with qtbot.waitSignal(w.preview_changed, timeout=10_000):
        w.knobs.defaults_button.click()
    _settle(qtbot, w)
    assert bar.badge.text() == "Golden 1/1 found"


def test_a_golden_query_is_redacted_and_a_failed_write_writes_nothing(qtbot, sl, view):
    w, store, folder = view
    seg = store.live()[0]
    secret = "sk-ant-api03-" + "x" * 40
    with qtbot.waitSignal(w.preview_changed, timeout=10_000):
        w.ask(f"where is the key {secret}", None, seg.id)
    assert w.golden.mark()
    text = (folder / "labels.jsonl").read_text()
    assert secret not in text and seg.id in text and '"session"' not in text
    (folder / "labels.jsonl").unlink()
    (folder / "labels.jsonl").mkdir()  # cannot be appended to
    assert not w.golden.mark()
    assert "Not added" in w.golden.badge.text()
    assert not any((folder / "labels.jsonl").iterdir())
