"""Self-contained reports for a bug report: the timeline and a compaction plan as one HTML file.

:mod:`core.export.svg` draws a session's timeline as an SVG chart from its arrays (not a
screenshot); :mod:`core.export.report` lays out the HTML pages (inline CSS, the chart
inline, no external resource), every text redacted and escaped.
"""
