"""Conversation text for the demo OpenClaw home (see :mod:`core.demo.build`).

Prompts, replies, thinking, reviews and memory flushes, and the generators that
fill them with a project's vocabulary (:mod:`core.demo.projects`): compaction
summaries, memory notes, generated exchanges. Everything is drawn from a
``random.Random`` passed in, so the demo is reproducible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.demo.code_text import ident, pick

if TYPE_CHECKING:
    import random

    from core.demo.projects import Project


USER_OPENERS = (
    "We're working on {project} today. Task: {task}. Start by reading {file} and {file2}, "
    "then tell me your plan before changing anything.",
    "{task} — that's the goal for {project}. Have a look at {file} first.",
)
USER_PROMPTS = (
    "ok, now {ask}",
    "looks good. next: {ask}",
    "can you look at {fn} in {file}? I think we should {ask}",
    "`{test_cmd}` fails on my machine with `{error}`. can you fix it?",
    "hmm, that broke {test}. please check",
    "before you go further: {constraint}",
    "let's also {ask}",
    "why did you touch {file}? keep the change minimal and {ask}",
    "nice. {ask}, and run the tests afterwards",
    "please {ask}",
    "what's left on the list? if nothing urgent, {ask}",
    "commit what we have with a sensible message, then {ask}",
)
REVIEW_OPENERS = (
    'Review PR #{pr} on {project}: "{task}". Focus on correctness and tests; post the '
    "review with gh when done.",
    "Please review PR #{pr} ({project}): {task}. Check it against our rules: {constraint}.",
)
STEP_TEXTS: dict[str, tuple[str, ...]] = {
    "read": (
        "Let me read {file} to see how {fn} works.",
        "Reading {file} first.",
        "I'll look at the current code before changing anything.",
    ),
    "grep": ("Searching for other callers of {fn}.", "Let me check where {fn} is used."),
    "test": ("Running the tests first to see where we stand.", "Let me reproduce the failure."),
    "edit": (
        "Now I'll update {fn} in {file}.",
        "The failure comes from {fn}; fixing it in {file}.",
    ),
    "reread": ("The edit did not apply: {file} changed since I read it. Re-reading it.",),
    "verify": ("Re-running the tests.", "Running the tests again to confirm the fix."),
    "write": ("Adding a regression test in {test}.",),
    "check": ("Running the linter and checking the working tree.",),
    "diff": ("Let me look at the diff of PR #{pr}.", "Fetching the PR diff."),
}
THINKING = (
    "The user wants me to {ask}. {fn} lives in {file}; I need to see how it is called before "
    "changing its signature. Constraint to respect: {constraint}.",
    "The test fails with {error}. That points at {fn}. The simplest fix keeps the public "
    "API unchanged.",
    "Plan: read {file}, change {fn}, add a test in {test}, run "
    "`{test_cmd}`. {decision} — keep that in mind.",
)
FINAL_TEXTS = (
    "Implemented: {ask}.\n\n- `{file}`: `{fn}` changed accordingly\n- `{test}`: new test\n\n"
    "`{test_cmd}` is green.",
    "Done. {decision}.\n\n- `{file}`: updated `{fn}`\n- `{test}`: added a regression test\n\n"
    "`{test_cmd}` passes. Next I would {todo}.",
    "Fixed: {fn} now behaves as agreed ({decision}). All tests pass.\n\nOpen point: {todo}.",
    "I changed `{fn}` in `{file}` and ran `{test_cmd}`: green. Note that {constraint}, so I "
    "left the public interface alone.",
    "Summary of this step:\n1. {decision}\n2. Updated `{file}`\n3. Tests pass\n\nShall I {todo}?",
)
EXPLAIN_TEXTS = (
    "I had a look at `{file}`: `{fn}` is the place to change. Plan: {ask}, then run "
    "`{test_cmd}`. Note that {constraint}. Shall I go ahead?",
    "`{fn}` is called from `{file}` and `{file2}`. Changing it is safe as long as we keep "
    "this rule: {constraint}. Proceed?",
    "Nothing to change in `{file}` for this: the behaviour comes from `{fn}`, which already "
    'follows the decision "{decision}". Still open: {todo}.',
)
REVIEW_PROMPTS = (
    "the author pushed a fix for {fn}; please re-review {file}",
    'does {file} respect our rule "{constraint}"?',
    "is the test in {test} enough, or should we ask for more?",
    "CI is red on PR #{pr}. find out why and tell the author what to change",
    "add a comment asking them to {ask}",
    "compare {file} with main: anything risky?",
)
REVIEW_TEXTS = (
    "Re-reviewed `{file}` on PR #{pr}: the fix for `{fn}` is correct. Remaining: {todo}.",
    "Posted a comment on PR #{pr} asking the author to {ask}.",
    "CI on PR #{pr} fails in `{test}`: {error}. I left a comment with the fix.",
    "Review posted on PR #{pr}.\n\n**Blocking**\n- `{file}`: {fn} ignores the error path "
    "({error}).\n\n**Nits**\n- {constraint}\n- missing test in `{test}`\n\nOtherwise it "
    "matches what we agreed: {decision}.",
    "PR #{pr} looks good to me; approved with two nits:\n- rename the helper next to `{fn}`\n"
    '- add a test in `{test}` for the edge case\n\nIt respects "{decision}".',
)
FLUSH_PROMPT = (
    "Pre-compaction memory flush. Store durable memories now (use "
    "memory/{date}.md; create memory/ if needed). If nothing to store, reply "
    "with NO_REPLY."
)


def fill(rng: random.Random, template: str, project: Project, task: str, **extra: str) -> str:
    """Fill a template with vocabulary from *project*."""
    fail = _pick_failure(rng, project)
    values = {
        "project": project.name,
        "task": task,
        "file": pick(rng, project.files),
        "file2": pick(rng, project.files + project.tests),
        "fn": ident(pick(rng, project.functions)),
        "ask": pick(rng, project.asks),
        "test_cmd": project.test_cmd,
        "test": pick(rng, project.tests),
        "error": fail[1].splitlines()[0].lstrip("E ").strip(),
        "constraint": pick(rng, project.constraints),
        "decision": pick(rng, project.decisions),
        "todo": pick(rng, project.todos),
        "pr": str(rng.randint(96, 180)),
    }
    values.update(extra)
    return template.format(**values)


def _pick_failure(rng: random.Random, project: Project) -> tuple[str, str]:
    return project.failures[rng.randrange(len(project.failures))]


def compaction_summary(
    rng: random.Random, project: Project, task: str, read: list[str], modified: list[str], n: int
) -> str:
    """A compaction summary with OpenClaw's safeguard headings."""

    def bullets(items: tuple[str, ...], k: int, prefix: str = "- ") -> str:
        return "\n".join(prefix + s for s in rng.sample(items, min(k, len(items))))

    files = ", ".join(f"`{p}`" for p in dict.fromkeys(reversed(modified))) or "none yet"
    return (
        f"## Goal\n{task} ({project.name}, checkpoint {n}).\n\n## Progress\nModified: {files}."
        f" Read {len(read)} files so far.\n\n## Decisions\n{bullets(project.decisions, 3)}\n\n"
        f"## Open TODOs\n{bullets(project.todos, 2, '- [ ] ')}\n\n## Constraints/Rules\n"
        f"{bullets(project.constraints, 3)}\n\n## Pending user asks\n"
        f"{bullets(project.asks, 2)}\n\n## Exact identifiers\n"
        + "\n".join(f"- `{s}`" for s in rng.sample(project.identifiers, 4))
    )


def memory_note(
    rng: random.Random, project: Project, task: str, date: str, modified: list[str]
) -> str:
    """The section a memory flush writes to ``memory/<date>.md``."""
    files = ", ".join(f"`{m}`" for m in dict.fromkeys(reversed(modified))) or "nothing yet"
    return (
        f"## {project.name}: {task}\n\nWorking in /home/dev/projects/{project.name} "
        f"({date}). Changed so far: {files}.\n\n### Decisions\n"
        + "".join(f"- {d}\n" for d in rng.sample(project.decisions, 3))
        + "\n### Open\n"
        + "".join(f"- [ ] {t}\n" for t in rng.sample(project.todos, 3))
        + "\n### Rules\n"
        + "".join(f"- {c}\n" for c in rng.sample(project.constraints, 2))
        + "\n### Identifiers\n"
        + "".join(f"- `{i}`\n" for i in rng.sample(project.identifiers, 3))
    )


def generated_exchange(rng: random.Random, project: Project) -> tuple[str, str]:
    """A user request and the agent's answer, for older archived segments."""
    task = pick(rng, project.asks)
    user = fill(rng, pick(rng, USER_PROMPTS), project, task)
    reply = fill(rng, pick(rng, FINAL_TEXTS), project, task)
    return user, reply
