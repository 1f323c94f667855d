"""One plot of the what-if panel: a context curve with its compactions, lines and events.

:class:`Lane` is created once per plot and fed with :meth:`Lane.show`; each marker
carries its record (a compaction, a flush, an overflow) for the tooltip and the click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]

from core.compaction.whatif import WhatIfCompaction, WhatIfFlush, WhatIfOverflow
from core.io.text import cut
from widgets.timeline.style import THRESHOLD_STYLES, short_tokens

if TYPE_CHECKING:
    from core.compaction.whatif_audit import CompactionLoss

MAX_LABELS = 40
"""More compactions than this in one plot: markers only, their figures in the tooltips."""
REAL_COLOR, SIMULATED_COLOR = "#4c78a8", "#f58518"
COMPACTION_COLOR, FLUSH_COLOR, OVERFLOW_COLOR = "#e45756", "#9467bd", "#d62728"
KIND_NAMES = {"real": "as it ran", "simulated": "what-if"}


def loss_text(loss: CompactionLoss, top: int = 3) -> str:
    """A compaction's loss: its share, what it lost for good, the first lost items."""
    t = loss.total
    who = "its summary" if loss.kind == "real" else "memlens's offline summary of the cut"
    lines = [
        f"Loss {t.loss:.0%}: {t.missing + t.lost:,} of {t.items:,} items not in {who}; "
        f"{t.lost:,} lost for good (no later message has them)"
    ]
    lines += [f"  lost: {i.category}: {cut(i.text, 80)}" for i in loss.lost_items(top)]
    return "\n".join(lines)


def tip_text(item: object, loss: CompactionLoss | None = None) -> str:
    """The tooltip of a marker: a compaction's figures (and *loss*), a flush's, an overflow's."""
    if isinstance(item, WhatIfCompaction):
        head = f"{KIND_NAMES[item.kind]}: compaction after #{item.index} ({item.reason})"
        body = (
            f"{item.tokens_before:,} -> {item.tokens_after:,} tokens; "
            f"{item.summarized:,} messages summarised, {item.kept:,} kept"
        )
        lost = loss_text(loss) if loss is not None else ""
        parts = (head, body, item.detail, lost)
        return "\n".join(x for x in parts if x) + "\nClick: show the entry"
    if isinstance(item, WhatIfFlush):
        return f"memory flush before #{item.index}: {item.reason}\nClick: show the entry"
    if isinstance(item, WhatIfOverflow):
        steps = " -> ".join(x.kind for x in item.steps)
        end = "recovered" if item.recovered else "the run fails with the overflow error"
        return f"overflow at #{item.index}: {item.tokens:,} tokens; {steps} ({end})"
    return ""


class Lane:
    """One plot: a context curve, its compactions and lines, flushes and overflows."""

    def __init__(self, plot: pg.PlotItem, name: str, color: str, on_click: Any) -> None:
        self.plot, self.name = plot, name
        self.curve = pg.PlotDataItem(pen=pg.mkPen(color, width=1.6))
        self.curve.setDownsampling(auto=True, method="peak")
        self.curve.setClipToView(True)
        self.drops = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(COMPACTION_COLOR, width=1))
        self.markers = self._scatter("t", COMPACTION_COLOR, on_click)
        self.flushes = self._scatter("d", FLUSH_COLOR, on_click)
        self.overflows = self._scatter("x", OVERFLOW_COLOR, on_click)
        for item, what in ((self.curve, "curve"), (self.drops, "drops")):
            item.setObjectName(f"{name}_{what}")
            plot.addItem(item)
        for item, what in ((self.markers, "markers"), (self.flushes, "flushes")):
            item.setObjectName(f"{name}_{what}")
        self.overflows.setObjectName(f"{name}_overflows")
        self.lines: dict[str, pg.InfiniteLine] = {}
        for key in ("window", "compaction", "flush"):
            colour, style = THRESHOLD_STYLES[key]
            line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(colour, style=style))
            line.setObjectName(f"{name}_{key}_line")
            # the window's label above its line, the others below theirs: never on each other
            anchor = (0, 1) if key == "window" else (0, 0)
            line.label = pg.InfLineLabel(line, "", position=0.01, anchors=[anchor, anchor])
            line.label.setColor(colour)
            line.hide()
            plot.addItem(line, ignoreBounds=True)
            self.lines[key] = line
        self.labels: list[pg.TextItem] = []
        self._comps: tuple[WhatIfCompaction, ...] = ()
        self._losses: tuple[CompactionLoss, ...] = ()

    def set_losses(self, losses: tuple[CompactionLoss, ...]) -> None:
        """The loss of each compaction shown (in their order), for the markers' tooltips."""
        self._losses = losses

    def _loss_of(self, item: object) -> CompactionLoss | None:
        for n, c in enumerate(self._comps):
            if c is item:
                return self._losses[n] if n < len(self._losses) else None
        return None

    def _scatter(self, symbol: str, color: str, on_click: Any) -> pg.ScatterPlotItem:
        item = pg.ScatterPlotItem(
            symbol=symbol,
            size=12,
            pen=pg.mkPen(color, width=1.4),
            brush=pg.mkBrush(color),
            hoverable=True,
            tip=lambda x, y, data: tip_text(data, self._loss_of(data)),
        )
        item.setZValue(5)
        item.sigClicked.connect(on_click)
        self.plot.addItem(item)
        return item

    def show(
        self,
        curve: tuple[int, ...],
        comps: tuple[WhatIfCompaction, ...],
        lines: dict[str, tuple[int, str]],
        text: Any,
        flushes: tuple[WhatIfFlush, ...] = (),
        overflows: tuple[WhatIfOverflow, ...] = (),
    ) -> None:
        """Draw *curve* (one value per message) with *comps* and the other events.

        *lines* maps ``window``, ``compaction`` and ``flush`` to a value and a label
        (0: hidden); *text* is the palette's text colour for the labels.
        """
        self._comps, self._losses = comps, ()
        self.curve.setData(x=np.arange(len(curve), dtype=np.float64), y=np.asarray(curve, float))
        # a compaction happens between the message before it and the next one
        xs = [c.position - 0.5 for c in comps]
        self.markers.setData(x=xs, y=[c.tokens_before for c in comps], data=list(comps))
        pairs = [(x, v) for x, c in zip(xs, comps, strict=True)
                 for v in (c.tokens_before, c.tokens_after)]  # fmt: skip
        self.drops.setData(x=[p[0] for p in pairs], y=[p[1] for p in pairs])
        self.flushes.setData(
            x=[f.position for f in flushes], y=[f.tokens for f in flushes], data=list(flushes)
        )
        self.overflows.setData(
            x=[o.position for o in overflows], y=[o.tokens for o in overflows],
            data=list(overflows),
        )  # fmt: skip
        for key, line in self.lines.items():
            value, label = lines.get(key, (0, ""))
            line.setVisible(value > 0)
            line.setPos(value)
            line.label.setFormat(f"{label} {value:,}")
        for label_item in self.labels:
            self.plot.removeItem(label_item)
        self.labels = []
        if len(comps) <= MAX_LABELS:
            end = max(len(curve), 1)
            for x, c in zip(xs, comps, strict=True):
                # centred on its marker; near an edge, beside it so it stays in view
                ax = 0.0 if x < 0.06 * end else 1.0 if x > 0.94 * end else 0.5
                item = pg.TextItem(
                    f"{short_tokens(c.tokens_before)}→{short_tokens(c.tokens_after)}",
                    color=text,
                    anchor=(ax, 1.15),
                )
                item.setPos(x, c.tokens_before)
                item.setObjectName(f"{self.name}_label#{len(self.labels)}")
                self.plot.addItem(item, ignoreBounds=True)
                self.labels.append(item)

    def recolor(self, text: Any) -> None:
        """The labels in the palette's text colour (after a theme change)."""
        for item in self.labels:
            item.setColor(text)
