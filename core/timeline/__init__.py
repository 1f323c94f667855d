"""The arrays of a session timeline (one bar per message, the context curve,
compaction and branch markers) built with numpy for pyqtgraph, and the hover summaries.
"""
