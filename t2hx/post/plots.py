"""Run gnuplot on a template from ``paper/gnuplot/`` with a data file, writing PNG and PDF.

pandas prepares the numbers; gnuplot only draws. Each figure ``<stem>.png``/``<stem>.pdf`` has
its data file ``<stem>.dat`` next to it, so anyone can re-plot or check the numbers. Terminals:
``pngcairo`` and ``pdfcairo`` (both in Debian's gnuplot-nox 5.4).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from t2hx import ROOT
from t2hx.errors import T2hxError

GNUPLOT_DIR = ROOT / "paper" / "gnuplot"
TIMEOUT = 120


class PlotError(T2hxError):
    """gnuplot is missing or failed on a template."""


def fmt(value: Any) -> str:
    """A data-file cell: numbers with 10 significant digits, NaN for missing."""
    if value is None:
        return "NaN"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)) or hasattr(value, "__float__"):
        try:
            f = float(value)
        except (TypeError, ValueError):
            return str(value)
        if math.isnan(f):
            return "NaN"
        if f.is_integer() and abs(f) < 1e15:
            return str(int(f))
        return format(f, ".10g")
    text = str(value)
    return text.replace("\t", " ").replace("\n", " ") or "NaN"


def table_text(header: list[str] | None, rows: list[list[Any]], comment: str = "") -> str:
    lines = [f"# {line}" for line in comment.splitlines()]
    if header is not None:
        lines.append("\t".join(header))
    lines.extend("\t".join(fmt(v) for v in row) for row in rows)
    return "\n".join(lines) + "\n"


def gp_string(text: str) -> str:
    """A gnuplot single-quoted string literal (only '' needs escaping)."""
    return "'" + str(text).replace("'", "''") + "'"


def gp_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "1"
    return gp_string(value)


def render(template: str, datafile: Path, stem: Path, variables: dict[str, Any]) -> list[Path]:
    """Draw ``stem.png`` and ``stem.pdf`` from ``datafile`` with ``paper/gnuplot/<template>.gp``."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        raise PlotError("gnuplot not found", fix="run/setup installs gnuplot-nox")
    tpl = GNUPLOT_DIR / f"{template}.gp"
    if not tpl.is_file():
        raise PlotError("gnuplot template missing", file=tpl)
    base = {"gpdir": str(GNUPLOT_DIR), "datafile": str(datafile), "title": "", "extra": "",
            "keys": ""}
    base.update(variables)
    script = []
    outputs = []
    for term in ("png", "pdf"):
        out = stem.with_suffix(f".{term}")
        outputs.append(out)
        settings = dict(base, termtype=term, outfile=str(out) + ".tmp")
        script += [f"{k} = {gp_value(v)}" for k, v in settings.items()]
        script.append(f"load {gp_string(str(tpl))}")
        script.append("set output")
    proc = subprocess.run([gnuplot], input="\n".join(script) + "\n", capture_output=True,
                          text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        for out in outputs:
            Path(str(out) + ".tmp").unlink(missing_ok=True)
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise PlotError(f"gnuplot failed: {last}", file=tpl)
    for out in outputs:
        tmp = Path(str(out) + ".tmp")
        if out.suffix == ".pdf":
            _fix_pdf_date(tmp)
        tmp.replace(out)
    return outputs


PDF_DATE = re.compile(rb"/CreationDate \(D:\d{14}Z\)")


def _fix_pdf_date(path: Path) -> None:
    """cairo stamps the wall clock into every PDF (and ignores SOURCE_DATE_EPOCH): a fixed
    date of the same length keeps the xref offsets valid and replays byte-identical."""
    data = path.read_bytes()
    path.write_bytes(PDF_DATE.sub(b"/CreationDate (D:19700101000000Z)", data, count=1))
