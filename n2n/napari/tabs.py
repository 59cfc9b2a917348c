"""The n2n dock: Diagnose noise, Train and Denoise as tabs of one widget.

Docked apart, the three stack in one column as wide as the widest, which left
the canvas a strip of a 1066-px-wide window; as tabs they take one widget's
width, and each tab scrolls rather than stretching the dock.
"""

from qtpy.QtCore import QSize
from qtpy.QtWidgets import QAbstractSpinBox
from qtpy.QtWidgets import QComboBox
from qtpy.QtWidgets import QPushButton
from qtpy.QtWidgets import QScrollArea
from qtpy.QtWidgets import QSizePolicy
from qtpy.QtWidgets import QTabWidget

from n2n.napari import denoise_widget
from n2n.napari import diagnose_widget
from n2n.napari import running
from n2n.napari import train_widget


# The dock's width, in pixels: a 1066-px-wide window keeps more than half its width for the
# canvas beside napari's layer list (271 px in napari 0.9).
WIDTH = 230
# The narrowest a choice or number field gets: it shows the start of a long choice (the
# list that opens shows it whole) and numbers of six digits.
_FIELD_WIDTH = 70


def _narrowed(widget):
  """widget (a QWidget) with its choice and number fields allowed below the width of
  their longest choice or largest number: as tabs of a narrow dock."""
  widget.layout().setContentsMargins(4, 4, 4, 4)
  for field in widget.findChildren(QComboBox):
    field.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
  for field in widget.findChildren(QComboBox) + widget.findChildren(QAbstractSpinBox):
    field.setSizePolicy(QSizePolicy.Preferred, field.sizePolicy().verticalPolicy())
    field.setMinimumWidth(_FIELD_WIDTH)
  for field in widget.findChildren(QAbstractSpinBox):
    # No - and + buttons, whose 40 px the digits need here: the arrow keys and the wheel step.
    field.setButtonSymbols(QAbstractSpinBox.NoButtons)
  for button in widget.findChildren(QPushButton):  # the style's least is wider than the text
    button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text()) + 16)
  return widget


def _scrolled(widget):
  """widget (a QWidget) in a vertical scroll area that follows the tab's width."""
  area = QScrollArea()
  area.setWidgetResizable(True)
  area.setWidget(widget)
  return area


class N2NTabs(QTabWidget):
  """The three widgets as tabs, sharing the viewer (and its runs trained in this session).

  Attributes:
    diagnose, train, denoise: the widgets (diagnose_widget.DiagnoseWidget, ...).
  """

  def __init__(self, napari_viewer):
    super().__init__()
    self.diagnose = diagnose_widget.DiagnoseWidget(napari_viewer)
    self.train = train_widget.TrainWidget(napari_viewer)
    self.denoise = denoise_widget.DenoiseWidget(napari_viewer)
    for name, widget in (('Diagnose noise', self.diagnose), ('Train', self.train),
                         ('Denoise', self.denoise)):
      self.addTab(_scrolled(_narrowed(widget.native)), name)
    # A shipped model the diagnosis recommends as is: Denoise offers it for that layer.
    self.diagnose.diagnosed.connect(self.denoise.follow_diagnosis)
    # The Denoise widget's own watch sees its tab, which stays: this dock is what closes.
    running.when_closed(self, self.denoise.close_model)

  def sizeHint(self):  # pylint: disable=invalid-name  (Qt's name)
    """The width napari docks it at: WIDTH, or the least its tabs take."""
    hint = super().sizeHint()
    return QSize(max(WIDTH, self.minimumSizeHint().width()), hint.height())

  def reset_choices(self, *_):
    """napari calls this as layers come and go: the layer choices of the three follow."""
    for widget in (self.diagnose, self.train, self.denoise):
      widget.reset_choices()
