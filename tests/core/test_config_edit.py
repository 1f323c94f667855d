"""One recall setting written into openclaw.json in place (issue 19, item 6).

The span scanner finds a member whatever JSON5 puts around it (comments holding
braces and colons, quoted and escaped keys, strings with quotes and braces, a
repeated key: the last counts); a plan changes that value only, or inserts the
member (and the sections missing above it), and is refused when it would change
anything else or give the agent a value it rejects; ``memlens setting`` shows the
diff and writes only with ``--write``, after a backup, refusing a file that changed.
"""

from __future__ import annotations

import pyjson5
import pytest

from core.cli.main import run_cli
from core.io.fsutil import FileChangedError
from core.openclaw.config_edit import (
    ConfigEditError,
    apply_setting,
    coerce,
    plan_setting,
    splice,
)
from core.openclaw.config_spans import object_spans

KEY = ("agents", "defaults", "memoryContext", "autoRecallMinScore")

TRICKY = """\ufeff/* a { brace: in a comment */
{
  // agents: { not: this }
  'quoted': "a \\"}{\\" string",
  "agents": {
    defaults: {
      memoryContext: {
        autoRecallMinScore: 0.9, // overridden below
        '\\u0068ardCapTokens': 6000,
        list: [1, {autoRecallMinScore: 5}, "]"],
        autoRecallMinScore /* odd */ : .5,
      },
    },
  },
}
"""


def _value(text):
    node = pyjson5.decode(text.lstrip("\ufeff"))
    for k in KEY:
        node = node.get(k) if isinstance(node, dict) else None
    return node


@pytest.mark.parametrize(
    "text",
    [
        TRICKY,
        "{}",
        "{agents: {}}",
        "{agents: {defaults: {contextTokens: 1}}}",
        '{\n  "agents": {\n    "defaults": {\n      "memoryContext": {}\n    }\n  }\n}\n',
        "{agents: {defaults: {memoryContext: {enabled: true,}}}, models: {}}",
    ],
)
def test_splice_sets_the_value_and_nothing_else(text):
    out = splice(text, KEY, 0.35)
    assert _value(out) == 0.35
    before, after = pyjson5.decode(text.lstrip("\ufeff")), pyjson5.decode(out.lstrip("\ufeff"))
    after["agents"]["defaults"]["memoryContext"].pop("autoRecallMinScore")
    mc = before.get("agents", {}).get("defaults", {}).get("memoryContext", {})
    mc.pop("autoRecallMinScore", None)
    assert (
        after == {**before, "agents": after["agents"]}
        and after["agents"]["defaults"].get("memoryContext", {}) == mc
    )


def test_the_tricky_file_keeps_every_comment_and_changes_the_last_member():
    out = splice(TRICKY, KEY, 0.35)
    assert out == TRICKY.replace(": .5,", ": 0.35,")
    obj, missing = object_spans(TRICKY, KEY[:-1])
    assert not missing and set(obj.members) == {"autoRecallMinScore", "hardCapTokens", "list"}


def test_inserted_members_follow_the_file_indentation():
    text = '{\n  "agents": {\n    "defaults": {\n      "contextTokens": 100000\n    }\n  }\n}\n'
    assert splice(text, KEY, 0.35) == (
        '{\n  "agents": {\n    "defaults": {\n'
        "      memoryContext: { autoRecallMinScore: 0.35 },\n"
        '      "contextTokens": 100000\n    }\n  }\n}\n'
    )


def test_values_are_checked_before_anything_is_planned():
    assert coerce("autoRecallMinScore", "0.3") == 0.3
    assert coerce("crossSession", "true") is True and coerce("hardCapTokens", "6000") == 6000
    for key, value, said in [
        ("vectorWeight", 0.3, "not a recall setting"),
        ("autoRecallMinScore", 1.5, "outside 0..1"),
        ("hardCapTokens", "6000.5", "not a whole number"),
        ("evictionDays", 0, "above 0"),
        ("crossSession", "maybe", "not a bool"),
        ("autoRecallMinScore", "nan", "outside"),
    ]:
        with pytest.raises(ConfigEditError, match=said):
            coerce(key, value)


def test_a_plan_is_written_atomically_after_a_backup(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text(TRICKY)
    edit = plan_setting(path, "autoRecallMinScore", 0.35)
    assert edit.old_value == 0.5 and edit.new_value == 0.35
    assert "-        autoRecallMinScore /* odd */ : .5," in edit.diff()
    assert path.read_text() == TRICKY  # planning writes nothing
    backup = apply_setting(edit)
    assert backup == edit.backup and backup.read_text() == TRICKY
    assert _value(path.read_text()) == 0.35


def test_a_file_the_agent_changed_since_the_plan_is_not_replaced(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text("{agents: {defaults: {memoryContext: {}}}}\n")
    edit = plan_setting(path, "autoRecallMinScore", 0.35)
    path.write_text("{agents: {defaults: {memoryContext: {hardCapTokens: 9000}}}}\n")
    with pytest.raises(FileChangedError):
        apply_setting(edit)
    assert "9000" in path.read_text() and "0.35" not in path.read_text()


def test_a_file_without_a_last_newline_diffs_line_by_line(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text("{agents: {defaults: {memoryContext: {autoRecallMinScore: 0.7}}}}")
    diff = plan_setting(path, "autoRecallMinScore", 0.3).diff().splitlines()
    assert diff[-4:] == [
        "-{agents: {defaults: {memoryContext: {autoRecallMinScore: 0.7}}}}",
        "\\ No newline at end of file",
        "+{agents: {defaults: {memoryContext: {autoRecallMinScore: 0.3}}}}",
        "\\ No newline at end of file",
    ]


@pytest.mark.parametrize(
    "text", ["{}\n", "// today's OpenClaw\n{agents: {defaults: {contextTokens: 100000}}}\n"]
)
def test_a_config_without_the_section_is_refused_and_left_alone(tmp_path, text):
    path = tmp_path / "openclaw.json"
    path.write_text(text)
    with pytest.raises(ConfigEditError, match=r"no agents\.defaults\.memoryContext section"):
        plan_setting(path, "autoRecallMinScore", 0.35)
    assert path.read_text() == text and list(tmp_path.iterdir()) == [path]


def test_a_section_that_is_not_an_object_is_refused(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text("{agents: {defaults: {memoryContext: true}}}\n")
    with pytest.raises(ConfigEditError, match="memoryContext is not an object"):
        plan_setting(path, "autoRecallMinScore", 0.35)


def test_the_cli_shows_the_diff_and_writes_only_when_asked(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    path = home / "openclaw.json"
    path.write_text("// mine\n{agents: {defaults: {memoryContext: {hardCapTokens: 4000}}}}\n")
    assert run_cli(["setting", str(home), "autoRecallMinScore", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "+{agents: {defaults: {memoryContext: {autoRecallMinScore: 0.3, hardCapTokens" in out
    assert "dry run: nothing written" in out and "0.3" not in path.read_text()
    assert run_cli(["setting", str(home), "autoRecallMinScore", "0.3", "--write", "--json"]) == 0
    payload = pyjson5.decode(capsys.readouterr().out)
    assert payload["written"] and payload["old"] is None and payload["new"] == 0.3
    assert path.read_text().startswith("// mine\n") and _value(path.read_text()) == 0.3
    assert run_cli(["setting", str(home), "vectorWeight", "0.3"]) == 1
    assert "not a recall setting" in capsys.readouterr().err
    assert run_cli(["setting", str(tmp_path), "autoRecallMinScore", "0.3"]) == 1
    assert "nothing memlens can read here" in capsys.readouterr().err
