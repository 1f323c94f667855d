"""One session read closely: the navigator of sessions, the message view, and
the context the model saw at an entry.
"""
