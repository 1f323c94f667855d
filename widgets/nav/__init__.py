"""Navigation widgets: the search-everywhere popup (Ctrl+K).

It lists sessions, entries, facts and segments, ranked by
:func:`core.refs.search.rank_items` as the user types.
"""
