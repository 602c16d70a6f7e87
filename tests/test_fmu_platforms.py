"""Cross-platform binaries in the exported FMU (issue 20 item 4): win64, darwin64,
aarch64-darwin and aarch64-linux built on this machine by `zig cc` (PyPI ziglang),
checked with lief (PyPI): each is a shared library of the right format and CPU that
exports every FMI function the linux64 binary exports; the aarch64-linux one needs no
glibc newer than 2.17. test_fmu_emulated.py runs them (wine, qemu-user).

The first cross build on a machine fills zig's cache (its libc/compiler-rt for each
target: minutes for the mingw-w64 runtime); later builds take well under a second."""
import sys
import zipfile

import pytest

from hystmech.fmu import export_fmu
from hystmech.fmu.export import glibc_versions, zig_available

from test_fmu_cases import available

lief = pytest.importorskip("lief")
pytestmark = pytest.mark.skipif(not zig_available(), reason="ziglang is not installed")

EXPECT = {  # folder -> (format, CPU)
    "win64": ("PE", "AMD64"), "darwin64": ("MACHO", "X86_64"),
    "aarch64-darwin": ("MACHO", "ARM64"), "aarch64-linux": ("ELF", "AARCH64"),
    "linux64": ("ELF", "X86_64"),
}


def _exports(binary) -> set:
    names = {getattr(f, "name", str(f)) for f in binary.exported_functions}
    return {n.lstrip("_") for n in names if n.lstrip("_").startswith(("fmi2", "fmi3"))}


def _cpu(binary) -> str:
    if isinstance(binary, lief.PE.Binary):
        return binary.header.machine.name
    if isinstance(binary, lief.MachO.Binary):
        return binary.header.cpu_type.name
    return binary.header.machine_type.name


def _fmt(binary) -> str:
    return {lief.PE.Binary: "PE", lief.MachO.Binary: "MACHO", lief.ELF.Binary: "ELF"}[type(binary)]


def _check(tmp_path, platforms):
    """Export ModifiedDahl (an exp/log/pow user) for linux64 + ``platforms``; every binary
    has the expected format and CPU and exports the linux64 binary's FMI functions."""
    make, _, _ = available()["ModifiedDahl"]
    path = export_fmu(make(), tmp_path / "MD.fmu", platforms=["linux64", *platforms])
    d = tmp_path / "x"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(d)
    bins = {p.parent.name: p for p in (d / "binaries").glob("*/*")}
    assert set(bins) == {"linux64", *platforms}, sorted(bins)
    ref = None
    for folder, p in sorted(bins.items(), key=lambda kv: kv[0] != "linux64"):
        b = lief.parse(str(p))
        if isinstance(b, lief.MachO.FatBinary):
            b = b.at(0)
        assert b is not None, folder
        assert (_fmt(b), _cpu(b)) == EXPECT[folder], folder
        ex = _exports(b)
        if ref is None:
            ref = ex
            assert len(ref) >= 44 and "fmi2DoStep" in ref
        assert ex == ref, (folder, sorted(ref ^ ex))
    return bins


def test_darwin_and_aarch64_binaries_export_every_fmi_function(tmp_path):
    bins = _check(tmp_path, ["darwin64", "aarch64-darwin", "aarch64-linux"])
    assert max(glibc_versions(bins["aarch64-linux"])) <= (2, 17)


@pytest.mark.slow
def test_win64_dll_exports_every_fmi_function(tmp_path):
    """(The first win64 build on a machine compiles zig's mingw-w64 runtime: minutes.)"""
    _check(tmp_path, ["win64"])


def test_fmi3_folder_names_and_bad_platform(tmp_path):
    """FMI 3.0 names the folders <arch>-<os>; an unknown platform is a ValueError naming
    the allowed ones."""
    make, _, _ = available()["Dahl"]
    path = export_fmu(make(), tmp_path / "D3.fmu", fmi_version=3,
                      platforms=["linux64", "aarch64-linux"])
    with zipfile.ZipFile(path) as zf:
        folders = {n.split("/")[1] for n in zf.namelist() if n.startswith("binaries/")
                   and n.count("/") == 2}
    assert folders == {"x86_64-linux", "aarch64-linux"}
    with pytest.raises(ValueError, match="platforms: unknown platform 'win32'.*linux64"):
        export_fmu(make(), tmp_path / "bad.fmu", platforms=["win32"])
