"""Files the API hands out: RFC 4180 CSV safe to open in a spreadsheet, and their download headers."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Iterable, Sequence

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


@dataclasses.dataclass(frozen=True)
class ExportFile:
    """A file to download: its name, media type and bytes."""

    filename: str
    media_type: str
    content: bytes
    extra_headers: tuple[tuple[str, str], ...] = ()

    @property
    def headers(self) -> dict[str, str]:
        """Headers that make a browser save the file under its name."""
        return {
            "Content-Type": self.media_type,
            "Content-Disposition": f'attachment; filename="{self.filename}"',
            **dict(self.extra_headers),
        }


def neutralised(cell: object) -> str:
    """The cell as text, with a leading apostrophe when a spreadsheet would take it for a formula."""
    text = "" if cell is None else str(cell)
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """RFC 4180 CSV (CRLF line ends, quotes only where needed) of a header row and data rows."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([neutralised(cell) for cell in row] for row in rows)
    return out.getvalue()
