"""patches/openmpi/4.1-parx-lid-selection.patch: its Table 1 copy is parx/table1.{c,h}
verbatim, it applies cleanly to the upstream Open MPI 4.1 tarball (Debian's
`apt-get source --download-only openmpi`, cached under ~/.cache/t2hx), and the patched
components compile and link: libopen-pal (BTL base hook), mca_btl_openib.so and
mca_pml_ob1.so. The configured tree is cached per tarball checksum, so later runs only
rebuild what the patch changes; libmpi itself is not built (about 15 min on 2 cores)."""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.atomic import atomic_write
from tests.test_parx_build import CACHE, JOBS, checksum, locked, run, source_tarball, unpack

PATCH = ROOT / "patches" / "openmpi" / "4.1-parx-lid-selection.patch"
MANIFEST = "t2hx-patched-files.json"


def multiarch() -> str:
    return subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True,
                          check=True).stdout.strip()


def configure_args() -> list[str]:
    """A lean configure: verbs for openib, Debian's libevent/hwloc/PMIx (as Debian's own
    build), nothing this test does not compile."""
    return ["--disable-mpi-fortran", "--disable-mpi-cxx", "--disable-oshmem",
            "--disable-io-romio", "--with-verbs", "--without-ucx", "--without-ofi",
            "--without-psm", "--without-psm2", "--without-cuda", "--without-hcoll",
            "--without-mxm", "--without-portals4", "--with-libevent=external",
            "--with-hwloc=external", f"--with-pmix=/usr/lib/{multiarch()}/pmix2"]


def added_file(path: str) -> str:
    """The content a new-file section of the patch creates."""
    text = PATCH.read_text()
    m = re.search(rf"^\+\+\+ b/{re.escape(path)}\t.*?\n(.*?)(?=^diff |\Z)", text, re.M | re.S)
    assert m, f"{path} is not added by the patch"
    return "".join(line[1:] + "\n" for line in m.group(1).splitlines()
                   if line.startswith("+"))


def touched_files() -> list[str]:
    return re.findall(r"^\+\+\+ b/(\S+)", PATCH.read_text(), re.M)


def existing_files() -> list[str]:
    """Files the patch changes (rather than adds)."""
    return [f for f in touched_files() if "/parx/" not in f]


def pristine_tree(tarball: Path) -> Path:
    """The upstream versions of the files the patch changes, extracted once."""
    tree = CACHE / "openmpi-touched" / tarball.name
    existing = existing_files()
    if not all((tree / f).exists() for f in existing):
        with tarfile.open(tarball) as tar:
            top = tar.next().name.split("/")[0]
            wanted = {f"{top}/{f}" for f in existing}
            members = [m for m in tar.getmembers() if m.name in wanted]
            for m in members:
                m.name = m.name[len(top) + 1:]
            tar.extractall(tree, members=members, filter="data")
    return tree


def patched_copy(tarball: Path, work: Path) -> subprocess.CompletedProcess:
    """Copy the pristine files into ``work`` and apply the patch there."""
    tree = pristine_tree(tarball)
    for f in existing_files():
        (work / f).parent.mkdir(parents=True, exist_ok=True)
        (work / f).write_bytes((tree / f).read_bytes())
    return subprocess.run(["patch", "-p1", "--batch", "-i", str(PATCH)], cwd=work,
                          capture_output=True, text=True)


def configured_tree(tarball: Path) -> Path:
    """The unpacked tarball, configured once (configure bakes in its absolute path, so it
    is configured in place; the stamp is written only after configure succeeded)."""
    tree = CACHE / f"openmpi-build-{checksum(tarball)}"
    stamp = tree / "t2hx-configured.json"
    want = {"tarball": tarball.name, "configure": configure_args()}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return tree
    unpack(tarball, tree)
    run(["./configure", f"--prefix={tree / 'install'}", *want["configure"]], tree,
        "Open MPI configure")
    atomic_write(stamp, json.dumps(want, indent=1) + "\n")
    return tree


def upstream_file(tarball: Path, path: str) -> bytes | None:
    """A file as the tarball has it (None: the tarball has no such file)."""
    with tarfile.open(tarball) as tar:
        for m in tar:
            if m.name.split("/", 1)[-1] == path and m.isfile():
                return tar.extractfile(m).read()  # type: ignore[union-attr]
    return None


def sync_patched(tree: Path, work: Path, tarball: Path) -> None:
    """Make the build tree's touched files equal the freshly patched ones, writing only the
    files whose content differs (unchanged files keep their mtime: no rebuild). Files an
    earlier patch version touched and this one does not go back to upstream."""
    manifest = tree / MANIFEST
    earlier = set(json.loads(manifest.read_text())) if manifest.exists() else set()
    now = set(touched_files())
    for f in sorted(earlier | now):
        want = (work / f).read_bytes() if f in now else upstream_file(tarball, f)
        target = tree / f
        if want is None:
            target.unlink(missing_ok=True)
        elif not target.exists() or target.read_bytes() != want:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(want)
    atomic_write(manifest, json.dumps(sorted(now), indent=1) + "\n")


def build_components(tree: Path) -> str:
    """libopen-pal (framework bases and static components, no DSO components), then the
    two DSOs the patch changes. ob1 has no link dependency on libmpi without CUDA."""
    steps = [
        ["make", JOBS, "-C", "opal", "MCA_opal_FRAMEWORK_COMPONENT_DSO_SUBDIRS="],
        ["make", JOBS, "-C", "opal/mca/common/verbs"],
        ["make", JOBS, "-C", "opal/mca/btl/openib"],
        ["make", JOBS, "-C", "ompi/mca/pml/ob1"],
    ]
    return "".join(run(cmd, tree, "building the patched Open MPI") for cmd in steps)


def link_check(tree: Path, work: Path) -> None:
    """Link an executable against both DSOs, the patched libopen-pal and Debian's libmpi of
    the same release: the linker must resolve every symbol they use."""
    libdirs = subprocess.run(["mpicc", "--showme:libdirs"], capture_output=True, text=True,
                             check=True).stdout.split()
    pal = tree / "opal" / ".libs"
    main = work / "main.c"
    main.write_text("int main(void) { return 0; }\n")
    # --no-as-needed: main uses none of their symbols, and dropped libraries go unchecked
    cmd = ["cc", "-o", str(work / "linkcheck"), str(main),
           "-Wl,--no-as-needed", "-Wl,--no-allow-shlib-undefined",
           str(tree / "ompi/mca/pml/ob1/.libs/mca_pml_ob1.so"),
           str(tree / "opal/mca/btl/openib/.libs/mca_btl_openib.so"),
           f"-L{pal}", "-lopen-pal", *[f"-L{d}" for d in libdirs], "-lmpi", "-lopen-rte",
           f"-Wl,-rpath-link,{pal}:{tree / 'opal/mca/common/verbs/.libs'}"
           f":/usr/lib/{multiarch()}/pmix2/lib"]
    run(cmd, work, "linking against the patched components")


def patch_warnings(log: str, tree: Path) -> list[str]:
    """Compiler warnings located in a file the patch touches. gcc names a file relative to
    where it compiles (``../../opal/...``, ``parx/table1.c``, a bare ``pml_ob1.c``) or
    absolutely; a bare name counts only if no other file in the tree has it (many base.h)."""
    touched = touched_files()
    hits = []
    for line in log.splitlines():
        m = re.match(r"(\S+?):\d+:\d+: warning:", line)
        if not m:
            continue
        rel = re.sub(r"^(\.\.?/)+", "", m.group(1))
        if "/" not in rel and len(list(tree.rglob(rel))) != 1:
            continue
        if any(rel == f or rel.endswith("/" + f) or f.endswith("/" + rel) for f in touched):
            hits.append(line)
    return hits


def dynamic_symbols(lib: Path) -> dict[str, str]:
    out = subprocess.run(["nm", "-D", str(lib)], capture_output=True, text=True, check=True)
    return {line.split()[-1]: line.split()[-2] for line in out.stdout.splitlines()
            if len(line.split()) >= 2}


def test_patch_carries_table1_verbatim() -> None:
    for name in ("table1.c", "table1.h"):
        assert added_file(f"ompi/mca/pml/ob1/parx/{name}") == (ROOT / "parx" / name).read_text()
    assert "GENERATED verbatim copies of t2hx's parx/table1.c" in PATCH.read_text()


def test_patch_applies_to_the_upstream_tarball(tmp_path) -> None:
    tarball = source_tarball("openmpi", "openmpi_4.1.*.orig.tar.*")
    work = tmp_path / "ompi"
    done = patched_copy(tarball, work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "offset" not in done.stdout and "fuzz" not in done.stdout, done.stdout
    assert (work / "ompi/mca/pml/ob1/parx/table1.c").read_text() == \
        (ROOT / "parx" / "table1.c").read_text()
    ob1 = (work / "ompi/mca/pml/ob1/pml_ob1_component.c").read_text()
    assert '"parx_threshold"' in ob1 and "mca_pml_ob1.parx_threshold = 512;" in ob1


@pytest.mark.timeout(1800)
def test_patched_components_compile_and_link(tmp_path) -> None:
    tarball = source_tarball("openmpi", "openmpi_4.1.*.orig.tar.*")
    work = tmp_path / "ompi"
    done = patched_copy(tarball, work)
    assert done.returncode == 0, done.stdout + done.stderr
    with locked(f"openmpi-build-{checksum(tarball)}"):
        tree = configured_tree(tarball)
        sync_patched(tree, work, tarball)
        log = build_components(tree)
        link_check(tree, tmp_path)
    warnings = patch_warnings(log, tree)
    assert not warnings, "\n".join(warnings)
    pal = dynamic_symbols(tree / "opal/.libs/libopen-pal.so")
    ob1 = dynamic_symbols(tree / "ompi/mca/pml/ob1/.libs/mca_pml_ob1.so")
    openib = dynamic_symbols(tree / "opal/mca/btl/openib/.libs/mca_btl_openib.so")
    # the hook lives in libopen-pal; ob1 reads it, openib sets it
    assert pal["opal_btl_base_parx_lids"] in "BD"
    assert ob1["opal_btl_base_parx_lids"] == "U" and openib["opal_btl_base_parx_lids"] == "U"
    assert ob1["mca_pml_ob1_parx_btl"] == "T" and ob1["parx_table1_select"] == "T"
