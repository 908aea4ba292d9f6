"""The main window: wiring only. It lays out the views, places the actions' commands in
menus, toolbars and context menus, connects the views' intents (signals) to the actions and
to the session, and the session's facts to the views. ``app.py`` builds it, and gives it
the function that opens a production (the services and the session)."""
