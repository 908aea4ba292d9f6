"""Custom item-data roles shared by models and views."""

from __future__ import annotations

from PySide6.QtCore import Qt

JOB_ID_ROLE = Qt.ItemDataRole.UserRole + 1  # str: the job id
STATE_ROLE = Qt.ItemDataRole.UserRole + 2  # str: the JobState value
HEALTH_ROLE = Qt.ItemDataRole.UserRole + 3  # str: "stuck", "expiring", "live" or ""
SEQUENCE_ROLE = Qt.ItemDataRole.UserRole + 4  # int: a revision sequence
WORKER_ROLE = Qt.ItemDataRole.UserRole + 5  # str: a registered worker's name
PROGRESS_ROLE = Qt.ItemDataRole.UserRole + 6  # float | None: the running attempt's fraction done
