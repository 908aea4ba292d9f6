"""User actions (request, cancel, retry, regenerate, export, copy): the commands that menus,
toolbars, context menus and the diagram show, and what they do when triggered (confirm with
a dialog, then call the service through the session). Actions may use views; views never
import actions."""
