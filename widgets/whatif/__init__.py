"""What-if replay: the session's timeline as it ran above the one other settings give.

:class:`widgets.whatif.view.WhatIfView` replays the selected session with
:func:`core.compaction.whatif.replay_whatif` under a model preset or a window,
reserve, keep-recent and history share of the user's, and draws both context curves
with their compactions, memory flushes and overflow recoveries, x-linked.
"""
