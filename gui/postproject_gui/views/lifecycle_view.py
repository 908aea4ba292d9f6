"""A view of the lifecycle scene that fits its width (magnified at most 120 %)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QResizeEvent
from PySide6.QtWidgets import QFrame, QGraphicsView, QSizePolicy, QWidget

from postproject_gui.diagram.lifecycle_scene import LifecycleScene

MAX_SCALE = 1.2  # wider panels enlarge the diagram a little, never more


class LifecycleView(QGraphicsView):
    def __init__(self, scene: LifecycleScene, parent: QWidget | None = None) -> None:
        super().__init__(scene, parent)
        self.setObjectName("lifecycleDiagram")
        self.setAccessibleName("Lifecycle state diagram")
        self.setAccessibleDescription(
            "States as boxes, legal transitions as arrows. The highlighted box is the current state; "
            "arrows drawn as buttons are actions available now."
        )
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        scene.sceneRectChanged.connect(lambda _rect: self._fit())

    def sizeHint(self) -> QSize:
        rect = self.sceneRect()
        return QSize(int(rect.width()) + 4, int(rect.height()) + 4)

    def heightForWidth(self, width: int) -> int:
        rect = self.sceneRect()
        scale = min(MAX_SCALE, width / max(rect.width(), 1.0))
        return int(rect.height() * scale) + 4

    def hasHeightForWidth(self) -> bool:
        return True

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        rect = self.sceneRect()
        scale = min(MAX_SCALE, (self.viewport().width() - 2) / max(rect.width(), 1.0))
        self.resetTransform()
        self.scale(scale, scale)
        self.setFixedHeight(int(rect.height() * scale) + 4)
        self.centerOn(rect.center())
