"""baidu-allreduce (our CPU-only patch): ``Verified allreduce for size <N> (<t> per
iteration)``. N counts float elements; ``msg_size`` is bytes (4·N); t is seconds (an optional
trailing ``s`` is accepted).
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

LINE_RE = re.compile(r"Verified allreduce for size (\d+) \(([0-9.eE+-]+)\s*s?\s+per iteration\)")
FLOAT_BYTES = 4


def parse(text: str) -> list[Record]:
    recs = [record("ring-allreduce", "t_avg", "s", to_float(m.group(2)),
                   elements=int(m.group(1)), msg_size=int(m.group(1)) * FLOAT_BYTES)
            for m in LINE_RE.finditer(text)]
    if not recs:
        raise ParseError("no 'Verified allreduce for size …' line")
    return recs
