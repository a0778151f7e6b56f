"""PKG: companion and other Python distributions (companions, duplicates, broken metadata, numpy)."""
from __future__ import annotations

from collections import defaultdict

from gpuvet.kb import query as q
from gpuvet.model.versions import parse_requirement

from .base import Context, Fail, Pass, Skip, Unknown, check, ev, fix
from .common import COMPANIONS, _companion_cmd, _install_cmd, _packages, _torch, _variant


# ---------------------------------------------------------------------------------------------------
@check(code="PKG100", name="companion-built-for-other-torch", severity="error",
       tables=("packages",), cause="companion-mismatch", component="companion-package")
def companion_built_for_other_torch(ctx: Context):
    """What it does:
    Compares torchvision, torchaudio and triton (pytorch-triton-rocm on ROCm) with the versions the
    installed torch release pins, from the knowledge base's torch_releases table and from the
    companion's own ``Requires-Dist: torch==X`` when its metadata was read.

    Why is this bad?
    torchvision and torchaudio ship C++ operators compiled against one torch release; loaded with
    another they fail with "undefined symbol", "operator torchvision::nms does not exist" or a silent
    fall back to slow paths.  torch.compile (inductor) imports private triton APIs that change between
    triton releases ("cannot import name 'triton_key'").  pip does not always keep them in step: an
    unpinned ``pip install torchvision`` or another package's requirement pulls a different torch.

    Example:
    torch 2.2.2 with triton 2.3.0 (torch 2.2 pins triton 2.2.0); torch 2.3.1 with torchvision 0.19.0
    (built for torch 2.4).

    Fix:
    Install the companions from the same index as torch, pinned to the release's versions, e.g.
    ``pip install torch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 --index-url
    https://download.pytorch.org/whl/cu121``.

    References:
    https://github.com/pytorch/vision#installation
    https://pytorch.org/get-started/previous-versions/
    https://github.com/coreweave/ml-containers/issues/64
    """
    build, version = _torch(ctx)
    pkgs = _packages(ctx)
    present = [n for n in COMPANIONS if n in pkgs]
    if version is None:
        yield Skip("torch is not installed")
        return
    if not present:
        yield Skip("no torchvision, torchaudio or triton installed")
        return
    release = q.torch_release(ctx.kb, version)
    tv = q.parse_version(version)
    # a nightly / pre-release pins the companion builds of its own date, not the release's pins: only
    # the companions' own Requires-Dist on torch can be judged
    nightly = tv is not None and (tv.is_devrelease or tv.is_prerelease)
    unknown: list[str] = []
    for name in present:
        r = pkgs[name]
        have = str(r.get("version", ""))
        # 1. the companion's own requirement on torch (exact pins in official wheels); without its metadata
        # (a pasted pip list, a compat description), the KB's record of that wheel's Requires-Dist
        reqs = list(r.get("requires", []) or [])
        pin = None if reqs else q.extension_pin(ctx.kb, name, have)
        if pin is not None:
            reqs = [f"torch{pin['torch']}"]
        for req in reqs:
            rq = parse_requirement(req)
            if rq is None:
                continue
            if rq[0].lower() == "torch" and rq[1] and tv is not None \
                    and not rq[1].contains(tv, prereleases=True):
                yield Fail(f"{name} {have} requires torch{rq[1]} but torch {version} is installed",
                           why=f"{name} {have} was built against another torch release; its compiled operators "
                               "do not load, or load and misbehave, with this one.",
                           evidence=[ev(r, f"{name} {have}: Requires-Dist {req}" +
                                        (f" (KB companions, {pin['source']})" if pin is not None else "")),
                                     ev(build, f"torch {version}")],
                           fixes=[_companion_fix(release, _variant(release, build, version) if release else None,
                                                 name, version)])
                break
        else:
            if nightly:
                continue
            if release is None:
                unknown.append(f"torch {version} is not in the KB's torch_releases")
                continue
            want = release.companions.get(name)
            if not want:
                if name.startswith(("triton", "pytorch-triton")):
                    continue  # releases before 2.0 pin no triton
                unknown.append(f"the KB records no {name} pin for torch {release.version}")
                continue
            if q.minor_of(have) != q.minor_of(want):
                yield Fail(f"{name} {have} is not the release torch {release.version} pins ({name} {want})",
                           why=f"torch {release.version} was released with {name} {want}; {name} {have} was built "
                               "for another torch release and its compiled parts (or, for triton, the private APIs "
                               "torch.compile imports) do not match.",
                           evidence=[ev(r, f"{name} {have}"), ev(build, f"torch {version}"),
                                     ev(None, f"KB torch_releases {release.version}: {name} {want} ({release.source})")],
                           fixes=[_companion_fix(release, _variant(release, build, version), name, version)])
    if unknown:
        yield Unknown("; ".join(dict.fromkeys(unknown)))
    yield Pass(f"{', '.join(present)} match torch {version}")


def _companion_fix(release, variant, name: str, version: str):
    """A fix that does what it says: install that one companion at the pinned version; only when the KB
    has no pin, reinstall torch with its companions (and say so)."""
    cmd = _companion_cmd(release, variant, name) if release is not None else None
    if cmd:
        return fix(f"install {name} {release.companions[name]}, the release torch {version} pins", cmd, safe=True)
    if release is not None:
        return fix(f"reinstall torch {release.latest} with the companions it pins", _install_cmd(release, variant),
                   safe=True)
    return fix(f"install the {name} built for torch {version}")


# ---------------------------------------------------------------------------------------------------
@check(code="PKG105", name="numpy2-with-torch-built-for-numpy1", severity="error",
       tables=("packages",), cause="companion-mismatch", component="companion-package")
def numpy2_with_torch_built_for_numpy1(ctx: Context):
    """What it does:
    Reports NumPy 2 installed next to a torch release whose wheels were compiled against NumPy 1.x
    (torch older than 2.3), from the knowledge base's python_rules table.

    Why is this bad?
    Extension modules compiled against NumPy 1.x cannot run with NumPy 2's ABI: importing torch prints
    "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0 as it may crash", and
    ``tensor.numpy()`` / ``torch.from_numpy`` raise "RuntimeError: Numpy is not available".

    Example:
    torch 2.1.2 with numpy 2.0.1 (a ``pip install -U numpy`` or a package requiring numpy>=2).

    Fix:
    ``pip install "numpy<2"``, or upgrade to torch 2.3 or newer, the first release built against
    NumPy 2.

    References:
    https://numpy.org/devdocs/numpy_2_0_migration_guide.html
    https://github.com/pytorch/pytorch/issues/107302
    """
    build, version = _torch(ctx)
    pkgs = _packages(ctx)
    np_row = pkgs.get("numpy")
    if version is None or np_row is None:
        yield Skip("needs both torch and numpy installed")
        return
    rules = [r for r in q.python_rules(ctx.kb, "numpy-abi") if r.get("package") == "torch"]
    if not rules:
        yield Unknown("the KB has no NumPy ABI rule")
        return
    npv = str(np_row.get("version", ""))
    for rule in rules:
        if q.spec_contains(rule["package_versions"], version) and q.spec_contains(rule["numpy"], npv):
            yield Fail(f"numpy {npv} with torch {version}, which was built against NumPy 1.x",
                       why=f"{rule['message']}: torch's NumPy bridge fails to load (tensor.numpy(), torch.from_numpy).",
                       evidence=[ev(np_row, f"numpy {npv}"), ev(build, f"torch {version}"),
                                 ev(None, f"KB python_rules {rule['id']} ({rule['source']})")],
                       fixes=[fix("install NumPy 1.x", "pip install 'numpy<2'", safe=True),
                              fix("or upgrade torch to 2.3 or newer")])
            return
    yield Pass(f"numpy {npv} works with torch {version}")


@check(code="PKG063", name="distribution-installed-twice", severity="warning",
       tables=("packages",), cause="companion-mismatch", component="companion-package")
def distribution_installed_twice(ctx: Context):
    """What it does:
    Finds a Python distribution installed in two places on the interpreter's path (a venv and the
    user site, two site-packages, conda and pip) with different versions.

    Why is this bad?
    Only the first copy on sys.path is imported, while pip and collect_env may report the other: a
    torch or companion upgrade "does nothing", or extensions compiled against one copy load with the
    other ("undefined symbol").

    Example:
    torch 2.1.0 in ~/.local/lib/python3.10/site-packages and torch 2.3.1 in the venv.

    Fix:
    Uninstall the copy you do not want (``pip uninstall`` in that environment, or remove the user-site
    copy), or run with ``PYTHONNOUSERSITE=1``.

    References:
    https://packaging.python.org/en/latest/specifications/recording-installed-packages/
    """
    by_name = defaultdict(list)
    for r in ctx.facts.table("packages"):
        if r.get("location") in ("pip", "conda"):  # pasted lists: one line per tool, not an install
            continue
        by_name[r.get("name")].append(r)
    for name, rows in sorted(by_name.items()):
        versions = {r.get("version") for r in rows}
        locations = {r.get("location") for r in rows}
        if len(rows) > 1 and len(versions) > 1 and len(locations) > 1:
            first = rows[0]
            yield Fail(f"{name} is installed {len(rows)} times: " + ", ".join(f"{r.get('version')} in {r.get('location')}" for r in rows),
                       why=f"Python imports {first.get('version')} from {first.get('location')}; tools may report another copy.",
                       evidence=[ev(r, f"{name} {r.get('version')} at {r.source}") for r in rows],
                       fixes=[fix(f"remove the copy you do not use, e.g. pip uninstall {name} in that environment", safe=False)])


@check(code="PKG064", name="distribution-metadata-broken", severity="warning",
       tables=("packages",), cause="other", component="companion-package")
def distribution_metadata_broken(ctx: Context):
    """What it does:
    Reports installed distributions whose metadata has no readable version (an interrupted install,
    a half-removed package, a ``~orch`` leftover directory).

    Why is this bad?
    pip's resolver and importlib.metadata see a broken entry: upgrades fail or skip the package, and
    checks that compare versions cannot run for it.

    Example:
    ``~orch-2.1.0.dist-info`` left in site-packages by an interrupted ``pip install``.

    Fix:
    Remove the broken directory and reinstall the distribution.

    References:
    https://packaging.python.org/en/latest/specifications/recording-installed-packages/
    """
    for r in ctx.facts.table("packages"):
        name = r.get("name", "")
        if not r.get("version") or name.startswith("~"):
            yield Fail(f"{name or '?'} has broken metadata at {r.source}",
                       evidence=[ev(r, f"{r.source}: no version")],
                       fixes=[fix(f"delete {r.source} and reinstall the distribution")])


CHECKS = [distribution_installed_twice, distribution_metadata_broken, companion_built_for_other_torch, numpy2_with_torch_built_for_numpy1]
