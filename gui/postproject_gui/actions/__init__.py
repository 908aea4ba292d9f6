"""User actions (request, cancel, copy) shared by menus, toolbars and the diagram."""
