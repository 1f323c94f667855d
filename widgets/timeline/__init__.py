"""The session timeline.

Bars per message, the context curve, markers, style and the job that builds the
arrays.
"""
