"""Host probes against real files (tmp dirs) and the FakeSystem."""
import os
import stat

from gpuvet.model.redact import redact_env, redact_text
from gpuvet.probes import host
from gpuvet.probes.system import System
from fakes import FakeSystem


def test_env_vars_selected_and_redacted():
    rows = host.parse_environ({
        "HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz123456",
        "PIP_INDEX_URL": "https://user:s3cret@pypi.example.com/simple", "HOME": "/root",
        "NCCL_DEBUG": "INFO", "CUDA_HOME": "https://bob:pw@example.com/x", "PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True",
    }, "environ")
    vals = {r["name"]: r["value"] for r in rows}
    assert vals["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"
    assert vals["HF_TOKEN"] == "***"
    assert "HOME" not in vals and "PIP_INDEX_URL" not in vals
    assert vals["CUDA_HOME"] == "https://***@example.com/x"
    assert vals["NCCL_DEBUG"] == "INFO" and vals["PYTORCH_HIP_ALLOC_CONF"] == "expandable_segments:True"


def test_redact_text_tokens_and_urls():
    s = "clone https://alice:tok@github.com/x and key ghp_" + "a" * 36 + " API_KEY=abc123 plain"
    out = redact_text(s)
    assert "tok@" not in out and "ghp_" not in out and "abc123" not in out
    assert out.endswith("plain") and "github.com/x" in out
    assert redact_env("MY_SECRET", "x") == "***" and redact_env("PATH", "/usr/bin") == "/usr/bin"


def test_packages_from_real_site_dir(tmp_path):
    site1, site2 = tmp_path / "venv-site", tmp_path / "user-site"
    for site, ver in ((site1, "2.3.1"), (site2, "2.1.0")):
        d = site / f"torch-{ver}.dist-info"
        d.mkdir(parents=True)
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {ver}\nRequires-Dist: filelock\n"
                                    "Requires-Dist: triton==3.0.0; platform_system == \"Linux\"\n"
                                    "Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\n\nbody Requires-Dist: no\n")
    egg = site1 / "Foo_Bar.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: Foo_Bar\nVersion: 0.3\n")
    broken = site1 / "~orch-2.0.0.dist-info"
    broken.mkdir()
    sysm = System({"PATH": "/usr/bin"})
    sysm._paths = [str(site1), str(site2)]
    rows = host.probe_packages(sysm)
    got = sorted((r["name"], r["version"], os.path.basename(r["location"])) for r in rows)
    assert ("torch", "2.3.1", "venv-site") in got and ("torch", "2.1.0", "user-site") in got
    assert ("foo-bar", "0.3", "venv-site") in got
    torch = [r for r in rows if r["name"] == "torch"][0]
    assert torch["requires"] == ["filelock", 'triton==3.0.0; platform_system == "Linux"']


def test_devices_user_container_with_fake_system():
    fs = FakeSystem(files={"/dev/kfd": "", "/dev/dri/renderD128": "", "/.dockerenv": "",
                           "/proc/1/cgroup": "0::/", "/proc/version": "Linux version 6.1"},
                    modes={"/dev/kfd": stat.S_IFCHR | 0o660, "/dev/dri/renderD128": stat.S_IFCHR | 0o660},
                    denied={"/dev/kfd"}, group_ids=[1000, 44], group_names={44: "video", 1000: "user", 0: "root"})
    nodes = {r["path"]: r for r in host.probe_devices(fs)}
    assert set(nodes) == {"/dev/kfd", "/dev/dri/renderD128"}
    assert nodes["/dev/kfd"]["readable"] is False and nodes["/dev/dri/renderD128"]["writable"] is True
    assert nodes["/dev/kfd"]["mode"] == "0660"
    assert host.probe_user(fs)[0]["groups"] == ["user", "video"]
    assert [r["kind"] for r in host.probe_container(fs)] == ["docker"]


def test_os_probe_reads_os_release():
    fs = FakeSystem(files={"/etc/os-release": 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n',
                           "/proc/sys/kernel/osrelease": "6.5.0-35-generic\n"}, pyversion="3.10.12")
    r = host.probe_os(fs)[0]
    assert r["name"] == "Ubuntu 22.04.4 LTS" and r["kernel"] == "6.5.0-35-generic" and r["python"] == "3.10.12"
    assert r["glibc"] == ""  # the fake names no C library: the machine running the test is never read


def test_os_probe_reads_the_c_library_and_uname_through_system():
    fs = FakeSystem(libc="glibc 2.39", uname_=("Linux", "6.8.0-45-generic", "aarch64"))
    r = host.probe_os(fs)[0]
    assert (r["glibc"], r["kernel"], r["arch"]) == ("2.39", "6.8.0-45-generic", "aarch64")
    assert host.probe_os(FakeSystem(libc="musl libc"))[0]["glibc"] == ""
    real = System().libc_version()
    assert real == "" or real.startswith("glibc ")


def test_gcc_version_parse_and_real_probe():
    assert host.parse_gcc_version("12.2.0\n", "gcc")[0]["version"] == "12.2.0"
    assert host.parse_gcc_version("", "gcc") == []
    import shutil
    if shutil.which("gcc"):
        rows = host.probe_host_compiler(System({"PATH": os.environ["PATH"]}))
        assert rows and rows[0]["name"] == "gcc" and rows[0]["version"][0].isdigit()
