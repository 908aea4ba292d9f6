"""The GUI's door into the core: the production service and the feed watcher."""
