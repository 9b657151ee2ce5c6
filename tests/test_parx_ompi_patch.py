"""patches/openmpi/4.1-parx-lid-selection.patch: its Table 1 copy is parx/table1.{c,h}
verbatim, and it applies cleanly to the upstream Open MPI 4.1 tarball (Debian's
`apt-get source --download-only openmpi`, cached under ~/.cache/t2hx)."""

from __future__ import annotations

import re
import subprocess
import tarfile
from pathlib import Path

from t2hx import ROOT
from tests.test_parx_build import CACHE, source_tarball

PATCH = ROOT / "patches" / "openmpi" / "4.1-parx-lid-selection.patch"


def added_file(path: str) -> str:
    """The content a new-file section of the patch creates."""
    text = PATCH.read_text()
    m = re.search(rf"^\+\+\+ b/{re.escape(path)}\t.*?\n(.*?)(?=^diff |\Z)", text, re.M | re.S)
    assert m, f"{path} is not added by the patch"
    return "".join(line[1:] + "\n" for line in m.group(1).splitlines()
                   if line.startswith("+"))


def test_patch_carries_table1_verbatim() -> None:
    for name in ("table1.c", "table1.h"):
        assert added_file(f"ompi/mca/pml/ob1/parx/{name}") == (ROOT / "parx" / name).read_text()
    assert "GENERATED verbatim copies of t2hx's parx/table1.c" in PATCH.read_text()


def touched_files() -> list[str]:
    return re.findall(r"^--- a/(\S+)", PATCH.read_text(), re.M)


def test_patch_applies_to_the_upstream_tarball(tmp_path) -> None:
    tarball = source_tarball("openmpi", "openmpi_4.1.*.orig.tar.*")
    tree = CACHE / "openmpi-touched" / tarball.name
    existing = [f for f in touched_files() if "/parx/" not in f]
    if not all((tree / f).exists() for f in existing):
        with tarfile.open(tarball) as tar:
            top = tar.next().name.split("/")[0]
            wanted = {f"{top}/{f}" for f in existing}
            members = [m for m in tar.getmembers() if m.name in wanted]
            for m in members:
                m.name = m.name[len(top) + 1:]
            tar.extractall(tree, members=members, filter="data")
    work = tmp_path / "ompi"
    for f in existing:
        (work / f).parent.mkdir(parents=True, exist_ok=True)
        (work / f).write_bytes((tree / f).read_bytes())
    done = subprocess.run(["patch", "-p1", "--batch", "-i", str(PATCH)], cwd=work,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "offset" not in done.stdout and "fuzz" not in done.stdout, done.stdout
    assert (work / "ompi/mca/pml/ob1/parx/table1.c").read_text() == \
        (ROOT / "parx" / "table1.c").read_text()
    ob1 = (work / "ompi/mca/pml/ob1/pml_ob1_component.c").read_text()
    assert '"parx_threshold"' in ob1 and "mca_pml_ob1.parx_threshold = 512;" in ob1
