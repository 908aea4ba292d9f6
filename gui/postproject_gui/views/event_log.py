"""The event log dock: revisions as they arrive from the feed, newest first."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QAbstractItemView, QDockWidget, QHeaderView, QTableView, QWidget

from postproject_gui.models import roles
from postproject_gui.models.event_log_model import EventLogModel

WIDTHS = (56, 80, 240, 100)


class EventLogDock(QDockWidget):
    """Signal: job_activated(str job id) when a revision about one job is activated."""

    job_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Event log", parent)
        self.setObjectName("eventLogDock")
        self.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.view = QTableView(self)
        self.view.setObjectName("eventLog")
        self.view.setAccessibleName("Event log: revisions as they arrive")
        self.view.setToolTip(
            "Revisions committed since the production was opened, newest first. Double-click one about a job to select it."
        )
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(20)
        self.view.setShowGrid(False)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.activated.connect(self._activated)
        self.view.doubleClicked.connect(self._activated)
        self.setWidget(self.view)

    def set_log_model(self, model: EventLogModel) -> None:
        self.view.setModel(model)
        for index, width in enumerate(WIDTHS):
            self.view.setColumnWidth(index, width)

    def _activated(self, index: QModelIndex) -> None:
        model = self.view.model()
        job_id = (
            model.data(index, roles.JOB_ID_ROLE)
            if isinstance(model, EventLogModel) and index.isValid()
            else None
        )
        if job_id:
            self.job_activated.emit(str(job_id))
