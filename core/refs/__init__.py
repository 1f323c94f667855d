"""References to places in an agent's memory: ``memlens://open?path=...&entry=...``.

:mod:`core.refs.reference` formats and parses the ``memlens://`` scheme (a data
directory, then optionally a session and an entry, a fact or a segment);
:mod:`core.refs.resolve` checks a reference against a loaded
:class:`core.dataset.load.DataSet` and says what it names; :mod:`core.refs.search`
lists and ranks the sessions, entries, facts and segments a search-everywhere box
offers.
"""
