"""A compliance report as a PDF: heading, figures, the indicator table and a chart of the evidence."""

from __future__ import annotations

import io
from decimal import Decimal
from xml.sax.saxutils import escape

from reportlab.graphics.charts.barcharts import HorizontalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from kindling.compliance.frameworks import CURRENCY_UNIT, METRICS
from kindling.compliance.models import Line, Report
from kindling.platform import money

MARGIN = 18 * mm
WIDTH = A4[0] - 2 * MARGIN
VERIFIED_COLOUR = colors.HexColor("#2f7d4f")
TOTAL_COLOUR = colors.HexColor("#c9d3cc")
HEADER_COLOUR = colors.HexColor("#eef2ef")
# Labels longer than this are cut in the chart; the table shows every code in full.
CHART_LABEL_LENGTH = 34
DECIMALS = {"percent": 1, "hours": 1, "score 1-5": 2}
WITHHELD = "withheld"


def report_pdf(report: Report, *, evidence_head: dict, key_id: str) -> bytes:
    """The report as an A4 PDF document; its footer names the evidence head and the signing key."""
    styles = getSampleStyleSheet()
    small = ParagraphStyle("small", parent=styles["Normal"], fontSize=8, leading=10)
    cell = ParagraphStyle("cell", parent=styles["Normal"], fontSize=8.5, leading=10.5)
    number = ParagraphStyle("number", parent=cell, alignment=TA_RIGHT)
    window = report.window
    story = [
        Paragraph(f"{escape(report.framework.name)}: compliance report", styles["Title"]),
        _facts(report, cell),
        Spacer(0, 4 * mm),
        Paragraph(f"Source of the codes: {escape(report.framework.source)}", small),
        Spacer(0, 6 * mm),
        Paragraph("Indicators", styles["Heading2"]),
        _indicator_table(report, cell, number),
        Spacer(0, 2 * mm),
        Paragraph(
            "Evidence: how many of the period's records behind each indicator carry verifiable evidence "
            "(kindness acts verified at level 3 or above, GPS-verified check-ins, succeeded donations). "
            "Wellbeing figures come from the survey's closed calendar weeks, each published once after it "
            f"ended, from at least 5 people; they are {WITHHELD} when no week of the period is published. "
            "Each indicator is evidence towards its disclosure; most disclosures also ask for narrative "
            "the organization provides itself.",
            small,
        ),
        Spacer(0, 6 * mm),
        KeepTogether([Paragraph("Evidence per indicator", styles["Heading2"]), _evidence_chart(report)]),
    ]
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN,
        title=f"{report.framework.name} compliance report: {report.organization.name}",
        author="Kindling",
        subject=f"{window.period}, {window.start:%Y-%m-%d} to {window.end:%Y-%m-%d}",
    )

    def footer(canvas: Canvas, doc: SimpleDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.setFillColor(colors.grey)
        canvas.drawString(MARGIN, MARGIN / 2, f"Kindling: generated {report.generated_at:%Y-%m-%d %H:%M} UTC")
        canvas.drawRightString(A4[0] - MARGIN, MARGIN / 2, f"Page {doc.page}")
        canvas.setFont("Helvetica", 6.5)
        canvas.drawString(
            MARGIN,
            MARGIN / 2 - 9,
            f"Evidence head {evidence_head['seq']}:{evidence_head['hash']}, signed with key {key_id}",
        )
        canvas.restoreState()

    document.build(story, onFirstPage=footer, onLaterPages=footer)
    return buffer.getvalue()


def _facts(report: Report, style: ParagraphStyle) -> Table:
    window = report.window
    rows = [
        ("Organization", report.organization.name),
        ("Period", f"{window.period}: {window.start:%Y-%m-%d %H:%M} to {window.end:%Y-%m-%d %H:%M} UTC"),
        ("Compliance rate", f"{report.compliance_rate:.1f} %"),
    ]
    table = Table(
        [[Paragraph(f"<b>{label}</b>", style), Paragraph(escape(value), style)] for label, value in rows],
        colWidths=[35 * mm, WIDTH - 35 * mm],
        hAlign="LEFT",
    )
    table.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("LEFTPADDING", (0, 0), (-1, -1), 0)]))
    return table


def _indicator_table(report: Report, cell: ParagraphStyle, number: ParagraphStyle) -> Table:
    header = [Paragraph(f"<b>{text}</b>", cell) for text in ("Code", "Indicator", "Value", "Unit", "Evidence")]
    rows = [header] + [
        [
            Paragraph(escape(line.code), cell),
            Paragraph(escape(line.title), cell),
            Paragraph(_display_value(line, report.organization.locale), number),
            Paragraph(escape(line.unit), cell),
            Paragraph(f"{line.evidence.verified:,} / {line.evidence.total:,}", number),
        ]
        for line in report.lines
    ]
    widths = [38 * mm, None, 22 * mm, 20 * mm, 24 * mm]
    widths[1] = WIDTH - sum(w for w in widths if w)
    table = Table(rows, colWidths=widths, repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), HEADER_COLOUR),
                ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#b8c2bb")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def _display_value(line: Line, locale: str) -> str:
    """The value as the PDF prints it: money as the organization's locale writes it (with the
    amounts it could not convert below), other figures thousands separated with the unit's
    decimals, or `withheld`."""
    if line.value is None:
        return WITHHELD
    if METRICS[line.metric].unit == CURRENCY_UNIT:
        shown = [_money(Decimal(repr(line.value)), line.unit, locale)]
        shown += [
            f"+ {_money(money.major_units(amount, currency), currency, locale)} not converted"
            for currency, amount in (line.unconverted or {}).items()
        ]
        return "<br/>".join(escape(text) for text in shown)
    if line.unit in DECIMALS:
        return f"{line.value:,.{DECIMALS[line.unit]}f}"
    return f"{line.value:,}"


def _money(amount: Decimal, currency: str, locale: str) -> str:
    # The standard PDF fonts have no narrow no-break space, which some locales group digits with.
    return money.formatted(amount, currency, locale).replace("\u202f", "\u00a0")


def _evidence_chart(report: Report) -> Drawing:
    """Horizontal bars per indicator: records with evidence against all records."""
    lines = report.lines
    label_width, bar_band = 150, 26
    height = 40 + bar_band * len(lines)
    drawing = Drawing(WIDTH, height + 30)
    chart = HorizontalBarChart()
    chart.x, chart.y = label_width, 30
    # reportlab takes any number here (its isNumber validator); types-reportlab says int.
    chart.width, chart.height = WIDTH - label_width - 10, height - 30  # type: ignore[assignment]
    # Categories run bottom-up; reversed, the chart lists indicators in table order.
    ordered = list(reversed(lines))
    chart.data = [[line.evidence.verified for line in ordered], [line.evidence.total for line in ordered]]
    chart.categoryAxis.categoryNames = [_short(line.code) for line in ordered]
    chart.categoryAxis.labels.fontName = "Helvetica"
    chart.categoryAxis.labels.fontSize = 7.5
    chart.categoryAxis.labels.boxAnchor = "e"
    chart.categoryAxis.labels.dx = -4
    chart.valueAxis.valueMin = 0
    chart.valueAxis.valueMax = max([1] + [line.evidence.total for line in lines])
    if chart.valueAxis.valueMax <= 10:
        chart.valueAxis.valueStep = 1  # whole records, not fractions of one
    chart.valueAxis.labels.fontSize = 7.5
    chart.valueAxis.labelTextFormat = lambda value: f"{value:,.0f}"
    chart.bars[0].fillColor = VERIFIED_COLOUR
    chart.bars[1].fillColor = TOTAL_COLOUR
    chart.bars.strokeColor = None
    chart.barSpacing = 1
    chart.groupSpacing = 6
    drawing.add(chart)
    legend = Legend()
    legend.x, legend.y = label_width, height + 22
    legend.alignment = "right"
    legend.columnMaximum = 1
    legend.fontSize = 8
    legend.deltax = 120
    legend.colorNamePairs = [(VERIFIED_COLOUR, "with evidence"), (TOTAL_COLOUR, "all records")]
    drawing.add(legend)
    drawing.add(String(0, 4, "Records counted in the period", fontName="Helvetica", fontSize=7, fillColor=colors.grey))
    return drawing


def _short(code: str) -> str:
    return code if len(code) <= CHART_LABEL_LENGTH else code[: CHART_LABEL_LENGTH - 1] + "…"
