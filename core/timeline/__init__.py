"""The arrays of a session timeline, built with numpy for pyqtgraph.

One bar per message, the context curve, compaction and branch markers, and the hover
summaries.
"""
