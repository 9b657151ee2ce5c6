"""Raw outputs a whole-study case keeps beside the perflogs (seed 003's workloads, seed 004's
job histories): ``log/<campaign>/<kind>/<system>/<partition>/<case>/``, written whole."""

from __future__ import annotations

import shutil
from pathlib import Path

from t2hx.atomic import staged_dir
from t2hx.paths import log_root


def keep_files(check, kind: str, case: str, files: dict[str, str]) -> None:
    """Copy stage files (name in the stage → name kept) into the case's folder, or keep the
    old record when anything fails. Nothing in a dry run."""
    if check.is_dry_run():
        return
    final = log_root() / check.campaign / kind / check.current_system.name / \
        check.current_partition.name / case
    with staged_dir(final) as tmp:
        for src, dst in files.items():
            shutil.copyfile(Path(check.stagedir) / src, tmp / dst)
