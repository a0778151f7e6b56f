"""The incident gpuvet was founded on, in every form a user pastes it (tests/fixtures/founding/README.md):
a torch nightly built for HIP 5.7 on a machine whose ROCm is 5.6.1, with hipBLAS / workspace / MIOpen
messages in front.  Each form must give the facts (both versions, and where each was read), `check --from`
must fail RTM021, and `diagnose` must rank the version skew first, above the generic library messages."""
from __future__ import annotations


import pytest

from conftest import ROOT, run_cli
from gpuvet.probes.mentions import parse_mentions
from gpuvet.probes.pasted import parse_report

FOUNDING = ROOT / "tests" / "fixtures" / "founding"
SKEW_FORMS = ["collect_env.txt", "ci_commands.txt", "info_version.txt", "apt_list.txt", "dpkg_l.txt",
              "conda_list_ls_opt.txt", "wheel_docker.txt", "clang_banner.txt",
              # day 3 (d9r): forms the issue does not list
              "pip_show_apt_show.txt", "hip_print_modinfo_ls.txt", "ldd_libtorch_hip.txt", "pip_freeze_dpkg_summary.txt",
              # day 4 (d10r): amd-smi / rocm-smi versions, /opt/rocm-5.6.1 paths under a traceback, a Dockerfile's FROM
              # under a nightly install, a conda env export beside hipconfig --version
              "amd_smi_rocm_smi.txt", "traceback_opt_rocm.txt", "dockerfile_from.txt", "conda_env_export.txt",
              # day 5 (d11r): Arch's pacman -Q, RHEL's rpm -qa and dnf list installed, hipconfig --full, env | grep ROCM
              "pacman_q.txt", "rpm_qa.txt", "dnf_list.txt", "hipconfig_full.txt", "env_rocm_path.txt",
              # day 6 (d12r): names that carry the release in other tools: apt-cache policy, AMD's repository URL in
              # sources.list and apt update, HPC environment modules (module load / module list), Spack specs
              "apt_cache_policy.txt", "apt_sources_update.txt", "lmod_module_load.txt", "spack_spec.txt"]
# the same shapes with the framework built for the installed ROCm: nothing may call them a skew
CONSISTENT_FORMS = ["consistent_amd_smi_rocm_smi.txt", "consistent_traceback_opt_rocm.txt",
                    "consistent_dockerfile_from.txt", "consistent_conda_env_export.txt",
                    "consistent_pacman_q.txt", "consistent_rpm_qa.txt", "consistent_hipconfig_full.txt",
                    "consistent_apt_cache_policy.txt", "consistent_apt_sources_update.txt",
                    "consistent_lmod_module_load.txt", "consistent_spack_spec.txt"]


def _text(name: str) -> str:
    return (FOUNDING / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", SKEW_FORMS)
def test_diagnose_ranks_the_skew_first(name):
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=_text(name))
    assert r.code == 1, r.err
    diags = r.json()["diagnoses"]
    top = diags[0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], (name, [d["cause"] for d in diags])
    facts = " ".join(f["text"] + " " + f.get("source", "") for f in top["facts"])
    assert "5.7" in facts and "5.6" in facts, facts  # both versions ...
    assert "line " in facts  # ... and where each was read


@pytest.mark.parametrize("name", SKEW_FORMS)
def test_check_from_fails_rtm021(name, tmp_path):
    p = tmp_path / name
    p.write_text(_text(name), encoding="utf-8")
    r = run_cli(["check", "--from", str(p), "--format", "json"])
    doc = r.json()
    failed = {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}
    assert "RTM021" in failed, (name, sorted(failed))


@pytest.mark.parametrize("name", CONSISTENT_FORMS)
def test_a_consistent_stack_in_the_same_shape_is_no_skew(name, tmp_path):
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=_text(name))
    diags = r.json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags), (name, diags)
    assert not diags or diags[0]["cause"] != "runtime-mismatch" or "RTM021" not in diags[0]["checks"]
    p = tmp_path / name
    p.write_text(_text(name), encoding="utf-8")
    doc = run_cli(["check", "--from", str(p), "--format", "json"]).json()
    assert "RTM021" not in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}, name


def test_day4_forms_give_both_versions_with_their_lines():
    def rows(fname):
        facts = parse_report(_text(fname), fname)
        return facts.table("runtimes") + facts.table("framework_builds")

    amd = {(r.table, r.get("name"), r.get("version")): r.source for r in rows("amd_smi_rocm_smi.txt")}
    assert "line 4 (amd-smi version" in amd[("runtimes", "rocm", "5.6.1")]
    conda = {(r.table, r.get("name"), r.get("version")): r.source for r in parse_mentions(_text("conda_env_export.txt"), "c")}
    assert "line 10" in conda[("framework_builds", "torch", "2.3.0.dev20240215+rocm5.7")]  # '- torch==...' of the export
    assert "hipconfig --version" in conda[("runtimes", "hip-runtime", "5.6.31062")]
    # a version printed without the hipconfig command above it is no HIP version
    assert not [r for r in parse_mentions("$ echo done\n5.6.31062\n", "x") if r.get("name") == "hip-runtime"]


def test_day5_forms_say_where_the_system_release_was_read():
    def sources(fname):
        facts = parse_report(_text(fname), fname)
        return {(r.get("name"), r.get("version")): r.source for r in facts.table("runtimes")}

    assert "line 3 (installed package rocm-core 5.6.1" in sources("pacman_q.txt")[("rocm", "5.6.1")]
    assert "line 2 (installed package rocm-core 5.6.1.50601" in sources("rpm_qa.txt")[("rocm", "5.6.1")]
    assert "line 4 (installed package rocm-core 5.6.1.50601" in sources("dnf_list.txt")[("rocm", "5.6.1")]
    hc = sources("hipconfig_full.txt")[("rocm", "5.6.1")]  # HIP_PATH (line 5) or ROCM_PATH (line 6) of the output
    assert ("line 5 " in hc or "line 6 " in hc) and "/opt/rocm-5.6.1" in hc, hc
    hc_rows = parse_mentions(_text("hipconfig_full.txt"), "h")  # and hipconfig's own parser, on its own, too
    from gpuvet.probes.hip import parse_hipconfig
    own = [r.source for r in parse_hipconfig(_text("hipconfig_full.txt"), "h") if r.table == "runtimes"]
    assert own == ["h line 6 (hipconfig: ROCM_PATH : /opt/rocm-5.6.1)"], (own, hc_rows)
    # pacman's "name version-pkgrel" only for the ROCm packages, and only as a whole line
    assert not [r for r in parse_mentions("python-numpy 1.26.4-1\nI run rocm-core 5.6.1-1 maybe\n", "x")
                if r.get("name") == "rocm"]
    # the live probe's source stays the command (no line of a pasted text)
    live = [r for r in parse_hipconfig(_text("hipconfig_full.txt"), "/opt/rocm/bin/hipconfig --full") if r.table == "runtimes"]
    assert [r.source for r in live] == ["/opt/rocm/bin/hipconfig --full"]


def test_each_form_gives_its_own_facts():
    def versions(fname, table, **match):
        rows = parse_mentions(_text(fname), fname)
        return {r.get("version") for r in rows if r.table == table and all(r.get(k) == v for k, v in match.items())}

    assert versions("ci_commands.txt", "runtimes", name="rocm") == {"5.6.1"}  # InstalledDir + AMD clang banner
    assert versions("ci_commands.txt", "runtimes", name="hsa-runtime") == {"1.1"}
    assert versions("ci_commands.txt", "framework_builds") == {"2.3.0.dev20240215+rocm5.7"}
    assert versions("info_version.txt", "runtimes", name="rocm") == {"5.6.1"}
    assert versions("apt_list.txt", "runtimes", name="rocm") == {"5.6.1"}
    assert versions("apt_list.txt", "runtimes", name="hip-runtime") == {"5.6.31062"}
    assert versions("conda_list_ls_opt.txt", "runtimes", name="rocm") == {"5.6.1"}
    assert versions("conda_list_ls_opt.txt", "framework_builds") == {"2.3.0.dev20240215+rocm5.7"}
    assert versions("wheel_docker.txt", "runtimes", name="rocm") == {"5.6"}
    assert versions("wheel_docker.txt", "framework_builds") == {"2.3.0.dev20240215+rocm5.7"}
    assert versions("dkms_status.txt", "drivers", vendor="amd") == {"6.1.5"}
    assert versions("collect_env.txt", "runtimes", name="rocm") == {"5.6.1"}
    hip = {r.get("hip") for r in parse_mentions(_text("ci_commands.txt"), "t") if r.table == "framework_builds"}
    assert hip == {"5.7.31921-d1770ee1b"}  # torch.version.hip, printed beside torch.__version__


def test_hipcc_output_is_read_not_reported_missing(tmp_path):
    p = tmp_path / "ci.txt"
    p.write_text(_text("ci_commands.txt"), encoding="utf-8")
    doc = run_cli(["check", "--from", str(p), "--format", "json"]).json()
    titles = " ".join(f["title"] for f in doc["findings"])
    assert "hipcc / hipconfig not installed" not in titles
    facts = parse_report(_text("ci_commands.txt"), "t")
    assert any(r.get("name") == "hipcc" and r.get("version", "").startswith("5.6") for r in facts.table("compilers"))


@pytest.mark.parametrize("text", [
    "We run ROCm 5.6 and PyTorch 2.3 nightly; any idea?\n",  # prose names no release in a tool's shape
    "see https://rocm.docs.amd.com/en/docs-5.6.1/ for details\n",
    "pip install torch --index-url https://download.pytorch.org/whl/rocm5.6\n",
    "Runtime Version:         1.1\n",  # without rocminfo context
    "2.3.0 5.7.31921\n",  # two versions with no torch command shown
])
def test_prose_and_bare_numbers_give_no_release_facts(text):
    rows = parse_mentions(text, "t")
    assert not [r for r in rows if r.table in ("runtimes", "framework_builds")], rows


def test_day6_forms_read_the_release_from_the_name_that_carries_it():
    def rocm(text):
        return sorted({(r.get("version"), r.source.split("(", 1)[-1][:24]) for r in parse_mentions(text, "t")
                       if r.table == "runtimes" and r.get("name") == "rocm"})

    # apt-cache policy without the repository line: the Installed: field of a ROCm meta package
    assert [v for v, _ in rocm("rocm-libs:\n  Installed: 5.6.1.50601-93~22.04\n  Candidate: 5.6.1.50601-93~22.04\n")] \
        == ["5.6.1"]
    assert rocm("rocm-libs:\n  Installed: (none)\n") == []
    assert rocm("python3-yaml:\n  Installed: 5.4.1-1ubuntu1\n") == []
    # the repository URL (sources.list with a trailing slash; apt update's Hit line); "debian" names no release
    assert [v for v, _ in rocm("deb [arch=amd64] http://repo.radeon.com/rocm/apt/3.5.1/ xenial main")] == ["3.5.1"]
    assert [v for v, _ in rocm("Hit:9 https://repo.radeon.com/rocm/apt/5.3 focal InRelease")] == ["5.3"]
    assert rocm("deb [arch=amd64] https://repo.radeon.com/rocm/apt/debian focal main") == []
    assert rocm("Hit:2 https://repo.radeon.com/amdgpu/5.6.1/ubuntu jammy InRelease") == []  # the driver's repository
    # environment modules: a load command and a module list row; another package's version is not ROCm's
    assert [v for v, _ in rocm("module load rocm/6.4.1")] == ["6.4.1"]
    assert [v for v, _ in rocm("  1) craype-x86-trento   2) rocm/5.7.1   3) cray-mpich/8.1.28")] == ["5.7.1"]
    assert rocm("  1) craype-x86-trento   2) libfabric/1.15.2.0") == []
    assert rocm("# module load rocm/5.2.0") == []
    # Spack: the ROCm packages' versions are the release; a framework's own version is not
    assert [v for v, _ in rocm("    ^hsa-rocr-dev@5.2.0%gcc@11.2.0+image~ipo+shared build_type=Release")] == ["5.2.0"]
    assert rocm("py-torch@2.3.0  py-numpy@1.26.4") == []
