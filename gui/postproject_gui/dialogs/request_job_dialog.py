"""Request a job: kind, inputs, output asset and kind, target root, typed parameters, and
the farm's scheduling: priority, not before, attempt limit and an idempotency key.

Everything is validated as it is typed with the core's own value types (nothing reaches the
production until "Request" is pressed, and then in one transaction). ``ask`` returns a
:class:`RequestSpec` or None.
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QDateTime, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QFontDatabase, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from postproject import (
    EXECUTOR_VOCABULARY,
    AssetId,
    InvalidArgumentError,
    JobRequest,
    RepresentationId,
    RepresentationKind,
)
from postproject.model.jobs import MAX_ATTEMPTS_LIMIT, MAX_PRIORITY, MIN_PRIORITY
from postproject_gui.models.columns import short_id
from postproject_gui.models.parameter_model import ParameterModel
from postproject_gui.services.types import RequestChoices, RequestSpec
from postproject_gui.text import cli_command, params

REP_ID_ROLE = Qt.ItemDataRole.UserRole + 10
ACCESSIBLE = {
    "kind": "Job kind",
    "outputAsset": "Output asset",
    "outputKind": "Output kind",
    "targetRoot": "Target root",
}


class TypeDelegate(QStyledItemDelegate):
    """A combo box of the value types for the Type column."""

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QWidget:
        combo = QComboBox(parent)
        combo.addItems(params.TYPES)
        return combo

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QComboBox)
        editor.setCurrentText(str(index.data()))

    def setModelData(
        self, editor: QWidget, model: object, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        assert isinstance(editor, QComboBox)
        index.model().setData(index, editor.currentText())


class RequestJobDialog(QDialog):
    def __init__(
        self, choices: RequestChoices, production: str | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("requestJobDialog")
        self.setWindowTitle("Request job")
        self.setMinimumWidth(620)
        self._choices, self._production = choices, production
        self._asset_touched = False
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.kind = self._combo("kind", "Job kind, namespaced (org.example:do-something)", editable=True)
        self.kind.addItems(choices.kinds)
        form.addRow("&Kind", self.kind)
        form.addRow("&Inputs", self._build_inputs())
        self.asset = self._combo("outputAsset", "The asset the output will be a representation of")
        for asset_id, name in choices.assets:
            self.asset.addItem(f"{name or 'unnamed'}  ·  {short_id(str(asset_id))}", str(asset_id))
        form.addRow("Output &asset", self.asset)
        self.output_kind = self._combo("outputKind", "Which representation of the asset the job makes")
        for kind in RepresentationKind:
            self.output_kind.addItem(kind.value, kind.value)
        self.output_kind.setCurrentText(RepresentationKind.PROXY.value)
        form.addRow("Output k&ind", self.output_kind)
        self.root = self._combo("targetRoot", "The media root the output is written under (optional)")
        self.root.addItem("(none)", "")
        for name in choices.roots:
            self.root.addItem(name, name)
        form.addRow("&Target root", self.root)
        form.addRow("&Parameters", self._build_params())
        form.addRow("Sc&heduling", self._build_scheduling())
        self.error = QLabel(self)
        self.error.setObjectName("requestError")
        self.error.setProperty("role", "warning")
        self.error.setWordWrap(True)
        self.preview = QLabel(self)
        self.preview.setObjectName("requestPreview")
        self.preview.setProperty("role", "muted")
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.preview.setWordWrap(True)
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.ok = self.buttons.addButton("Request", QDialogButtonBox.ButtonRole.AcceptRole)
        self.ok.setObjectName("requestButton")
        self.ok.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.preview)
        layout.addWidget(self.buttons)
        for signal in (
            self.priority.valueChanged,
            self.max_attempts.valueChanged,
            self.not_before_on.toggled,
            self.not_before.dateTimeChanged,
            self.key.textChanged,
            self.kind.currentTextChanged,
            self.asset.currentIndexChanged,
            self.output_kind.currentIndexChanged,
            self.root.currentIndexChanged,
        ):
            signal.connect(lambda *_: self.validate())
        self.asset.activated.connect(lambda *_: setattr(self, "_asset_touched", True))
        self.validate()

    def _combo(self, name: str, tip: str, *, editable: bool = False) -> QComboBox:
        combo = QComboBox(self)
        combo.setObjectName(name)
        combo.setAccessibleName(ACCESSIBLE[name])
        combo.setToolTip(tip)
        combo.setEditable(editable)
        return combo

    def _build_inputs(self) -> QWidget:
        box = QWidget(self)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.input_filter = QLineEdit(box)
        self.input_filter.setObjectName("inputFilter")
        self.input_filter.setPlaceholderText("Filter by path, asset or id…")
        self.input_filter.setAccessibleName("Filter inputs")
        self.input_filter.setClearButtonEnabled(True)
        self.input_model = QStandardItemModel(self)
        for choice in self._choices.representations:
            item = QStandardItem(
                f"{choice.path}   ({choice.kind.value}, {choice.asset_name or short_id(str(choice.asset_id))})"
            )
            item.setCheckable(True)
            item.setEditable(False)
            item.setData(str(choice.id), REP_ID_ROLE)
            item.setData(str(choice.asset_id), REP_ID_ROLE + 1)
            item.setToolTip(f"representation {choice.id}\nasset {choice.asset_id}")
            self.input_model.appendRow(item)
        self.input_proxy = QSortFilterProxyModel(self)
        self.input_proxy.setSourceModel(self.input_model)
        self.input_proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.input_filter.textChanged.connect(self.input_proxy.setFilterFixedString)
        self.inputs = QListView(box)
        self.inputs.setObjectName("inputList")
        self.inputs.setAccessibleName("Input representations")
        self.inputs.setModel(self.input_proxy)
        self.inputs.setMaximumHeight(130)
        self.input_model.itemChanged.connect(self._input_changed)
        layout.addWidget(self.input_filter)
        layout.addWidget(self.inputs)
        return box

    def _build_params(self) -> QWidget:
        box = QWidget(self)
        layout = QHBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.param_model = ParameterModel(self)
        self.param_view = QTableView(box)
        self.param_view.setObjectName("parameterTable")
        self.param_view.setAccessibleName("Typed parameters")
        self.param_view.setModel(self.param_model)
        self.param_view.setItemDelegateForColumn(1, TypeDelegate(self.param_view))
        self.param_view.verticalHeader().hide()
        self.param_view.horizontalHeader().setStretchLastSection(True)
        self.param_view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.param_view.setColumnWidth(0, 150)
        self.param_view.setColumnWidth(1, 90)
        self.param_view.setMaximumHeight(120)
        self.param_view.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        self.param_view.setToolTip(
            f"NAME is in the executor vocabulary ({EXECUTOR_VOCABULARY}); write VOCABULARY#NAME for another."
        )
        buttons = QVBoxLayout()
        add, remove = QPushButton("Add", box), QPushButton("Remove", box)
        add.setObjectName("addParameter")
        remove.setObjectName("removeParameter")
        add.clicked.connect(lambda: self.param_view.edit(self.param_model.index(self.param_model.add(), 0)))
        remove.clicked.connect(lambda: self.param_model.remove(self.param_view.currentIndex().row()))
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout.addWidget(self.param_view, 1)
        layout.addLayout(buttons)
        self.param_model.validity_changed.connect(self.validate)
        return box

    def _build_scheduling(self) -> QWidget:
        box = QWidget(self)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        self.priority = QSpinBox(box)
        self.priority.setObjectName("priority")
        self.priority.setAccessibleName("Priority")
        self.priority.setRange(MIN_PRIORITY, MAX_PRIORITY)
        self.priority.setPrefix("priority ")
        self.priority.setToolTip(f"{MIN_PRIORITY} to {MAX_PRIORITY}: higher is claimed first (0 by default)")
        self.max_attempts = QSpinBox(box)
        self.max_attempts.setObjectName("maxAttempts")
        self.max_attempts.setAccessibleName("Maximum attempts")
        self.max_attempts.setRange(0, MAX_ATTEMPTS_LIMIT)
        self.max_attempts.setSpecialValueText("attempts: unlimited")
        self.max_attempts.setPrefix("at most ")
        self.max_attempts.setSuffix(" attempts")
        self.max_attempts.setToolTip(
            "How many claims the job may have before a lost or retryable failure fails it (0: unlimited)"
        )
        self.not_before_on = QCheckBox("not before", box)
        self.not_before_on.setObjectName("notBeforeOn")
        self.not_before_on.setToolTip("Hold the job back: workers do not claim it before this instant")
        self.not_before = QDateTimeEdit(QDateTime.currentDateTime(), box)
        self.not_before.setObjectName("notBefore")
        self.not_before.setAccessibleName("Not before")
        self.not_before.setCalendarPopup(True)
        self.not_before.setDisplayFormat("yyyy-MM-dd HH:mm:ss")
        self.not_before.setEnabled(False)
        self.not_before_on.toggled.connect(self.not_before.setEnabled)
        self.key = QLineEdit(box)
        self.key.setObjectName("idempotencyKey")
        self.key.setAccessibleName("Idempotency key")
        self.key.setPlaceholderText("idempotency key (optional)")
        self.key.setToolTip(
            "Requesting again with the same key and the same request returns the first job instead of a new one"
        )
        for widget in (self.priority, self.max_attempts, self.not_before_on, self.not_before, self.key):
            row.addWidget(widget)
        row.setStretchFactor(self.key, 1)
        return box

    # --- values ------------------------------------------------------------------------

    def checked_inputs(self) -> list[RepresentationId]:
        items = (self.input_model.item(r) for r in range(self.input_model.rowCount()))
        return [
            RepresentationId(i.data(REP_ID_ROLE)) for i in items if i.checkState() is Qt.CheckState.Checked
        ]

    def set_inputs(self, ids: list[RepresentationId]) -> None:
        wanted = {str(i) for i in ids}
        for row in range(self.input_model.rowCount()):
            item = self.input_model.item(row)
            item.setCheckState(
                Qt.CheckState.Checked if item.data(REP_ID_ROLE) in wanted else Qt.CheckState.Unchecked
            )

    def set_spec(self, spec: RequestSpec) -> None:
        self.kind.setCurrentText(spec.kind)
        self.set_inputs(list(spec.inputs))
        self.asset.setCurrentIndex(max(0, self.asset.findData(str(spec.output_asset_id))))
        self._asset_touched = True
        self.output_kind.setCurrentText(spec.output_kind.value)
        self.root.setCurrentIndex(max(0, self.root.findData(spec.target_root or "")))
        for prop, value in spec.parameters:
            name = prop.name if prop.vocabulary == EXECUTOR_VOCABULARY else f"{prop.vocabulary}#{prop.name}"
            self.param_model.add(name, *params.display(value))
        self.priority.setValue(spec.priority)
        self.max_attempts.setValue(spec.max_attempts or 0)
        self.not_before_on.setChecked(spec.not_before is not None)
        if spec.not_before is not None:
            self.not_before.setDateTime(
                QDateTime.fromMSecsSinceEpoch(int(spec.not_before.timestamp() * 1000))
            )
        self.key.setText(spec.idempotency_key or "")

    def _input_changed(self, item: QStandardItem) -> None:
        if item.checkState() is Qt.CheckState.Checked and not self._asset_touched:
            index = self.asset.findData(item.data(REP_ID_ROLE + 1))
            if index >= 0:
                self.asset.setCurrentIndex(index)
        self.validate()

    def spec(self) -> RequestSpec:
        """The request as entered (ValueError with a readable reason when it is not valid)."""
        if self.asset.count() == 0:
            raise ValueError("choose the output asset (the production has no assets yet)")
        try:
            request = JobRequest(
                self.kind.currentText().strip(),
                self.checked_inputs(),
                AssetId(self.asset.currentData()),
                RepresentationKind(self.output_kind.currentData()),
                self.root.currentData() or None,
                priority=self.priority.value(),
                not_before=self.not_before_value(),
                max_attempts=self.max_attempts.value() or None,
                idempotency_key=self.key.text().strip() or None,
            )
        except InvalidArgumentError as exc:
            raise ValueError(exc.message) from None
        return RequestSpec(
            request.kind,
            tuple(request.representation_inputs),
            request.output_asset_id,
            request.output_representation_kind,
            request.target_root,
            self.param_model.values(),
            request.priority,
            request.not_before,
            request.max_attempts,
            request.idempotency_key,
        )

    def not_before_value(self) -> datetime | None:
        if not self.not_before_on.isChecked():
            return None
        return datetime.fromtimestamp(self.not_before.dateTime().toMSecsSinceEpoch() / 1000, tz=UTC)

    def validate(self) -> str | None:
        try:
            spec = self.spec()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.ok.setEnabled(False)
            self.preview.setText("")
            return str(exc)
        self.error.setText("")
        self.ok.setEnabled(True)
        if self._production is not None:
            line = cli_command.request_line(
                self._production,
                spec.kind,
                spec.inputs,
                spec.output_asset_id,
                spec.output_kind,
                spec.target_root,
                spec.parameters,
                priority=spec.priority,
                not_before=spec.not_before,
                max_attempts=spec.max_attempts,
                idempotency_key=spec.idempotency_key,
            )
            self.preview.setText(f"Equivalent: {line}")
        return None

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        choices: RequestChoices,
        production: str | None = None,
        initial: RequestSpec | None = None,
    ) -> RequestSpec | None:
        """Show the dialog; the request entered, or None when cancelled."""
        dialog = cls(choices, production, parent)
        if initial is not None:
            dialog.set_spec(initial)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            return dialog.spec()
        finally:
            dialog.deleteLater()
