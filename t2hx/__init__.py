"""t2hx: benchmark and reproducibility framework for HPC interconnect studies."""

from pathlib import Path

__version__ = "0.1.0"

#: The project checkout (conf/, hostfiles/, parx/ ... live here).
ROOT = Path(__file__).resolve().parent.parent
