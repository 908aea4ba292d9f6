"""The GUI's door into the core: the production service, the feed watcher, and every function
that reads or writes a production (they run on the service's threads, never the GUI thread),
with the plain values they hand to the session, the models and the views.

Nothing here imports a model, a view or an action (the GUI's import contract).
"""
