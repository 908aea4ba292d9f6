"""The monitor's texts, Qt-free: times and ages, live progress, the equivalent ``postproject``
command lines, typed job parameters (written and parsed), and a production's location as
shown (never with its password)."""
