"""Models adapt values: Qt item models over what the service read, and the Qt-free figures
and documents computed from those values (the dashboard's series, snapshot JSON). They
never query the core and never import the service's threads."""
