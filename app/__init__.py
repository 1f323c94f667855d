"""The memlens desktop application: the window and everything that wires it together.

``main_window`` builds the window from ``layout`` (views, tabs, docks), ``status`` (the
status bar with progress and cancel) and ``actions`` (menus and shortcuts); helpers such
as ``inspector`` (the selected session), ``manager`` (writes), ``live`` and ``live_glue``
(live mode), ``pending_glue`` and ``backups_glue`` take the app state, the views and
each other, never the window. ``settings``, ``settings_dialog`` and ``app_config`` hold
the user's settings and LLM providers, ``logs`` the rotating log, ``launcher`` the
``memlens`` entry point (GUI or CLI).
"""
