"""Qt item models that adapt service values for views (they never query the core)."""
