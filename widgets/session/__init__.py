"""One session read closely.

The navigator of sessions, the message view, and the context the model saw at an
entry.
"""
