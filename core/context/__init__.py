"""What the model sees and how full it is.

The budget model (every threshold of a session's context), the token breakdown by
section behind the budget gauge, and smart trim in three layers as memory-context runs
it. Pure functions over a loaded :class:`core.transcript.Session`; the timeline and the
trim view read from here.
"""
