"""The session timeline: bars per message, the context curve, markers, style
and the worker that builds the arrays.
"""
