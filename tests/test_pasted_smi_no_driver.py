"""A pasted rocm-smi / amd-smi that printed only "Driver not initialized (amdgpu not found in modules)" (the
real capture from the Debian 12 VM's ROCm 5.2 rocm-smi) is recognised: beside a GPU on the PCI bus it is the
amdgpu-not-loaded finding (DRV026), alone it is a report with nothing to check, never "unrecognisable"."""
from conftest import FIXTURES, REAL

SMI = str(REAL / "debian12-cpu-rocm52" / "rocm-smi.txt")
LSPCI = str(FIXTURES / "amd" / "pasted" / "lspci-grep-vga-vega10.txt")


def test_rocm_smi_without_driver_beside_lspci_is_drv026(cli):
    r = cli(["check", "--from", SMI, "--from", LSPCI, "--format", "json"])
    assert r.code == 1, r.err
    doc = r.json()
    drv026 = next(f for f in doc["findings"] if f["code"] == "DRV026")
    assert drv026["outcome"] == "failed" and "(rocm-smi ran)" in drv026["title"]
    assert any("amdgpu not found in modules" in e["text"] for e in drv026["evidence"])
    assert all(i["recognised"] for i in doc["meta"]["inputs"])


def test_rocm_smi_error_alone_is_recognised(cli, tmp_path):
    r = cli(["check", "--from", SMI, "--fail-on", "never"])
    assert r.code == 0, r.err
    amd = tmp_path / "amd-smi.txt"
    amd.write_text("AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded\n")
    r2 = cli(["check", "--from", str(amd), "--from", LSPCI, "--format", "json"])
    f = next(f for f in r2.json()["findings"] if f["code"] == "DRV026")
    assert f["outcome"] == "failed" and "(amd-smi ran)" in f["title"]


def test_prose_saying_driver_not_initialized_stays_unrecognised(cli, tmp_path):
    p = tmp_path / "prose.txt"
    p.write_text("The driver was not initialized yesterday, so I rebooted.\n")
    assert cli(["check", "--from", str(p)]).code == 3
