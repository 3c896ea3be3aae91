"""The library installs alone: the wheel holds only ``accounting`` (with ``py.typed``), needs
only numpy, scipy and mpmath, and imports and computes in a fresh venv that has nothing else.

The venv gets numpy, scipy and mpmath at the locked versions from pip's configured index
(PyPI, or a local mirror where pip is configured for one); only when that index cannot be
reached is the test skipped, with the reason. About 7 CPU-s, most of it pip installing numpy
and scipy: with ``--no-compile`` (byte-compiling every installed file was a third of it; the
script compiles what it imports).
"""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORE = {"numpy", "scipy", "mpmath"}
# pip's messages when the index cannot be reached (offline CI): a skip, not a failure.
UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Name or service not known|Network is unreachable|ConnectTimeout"
)
# What the venv runs: the distributions installed in it (read there, instead of a second pip
# process: ~0.9 CPU-s), then every subpackage imports with the core dependencies alone (the
# venv has nothing else), from site-packages, and a small computation gives known numbers.
SCRIPT = """
import sys
from importlib import metadata
print(" ".join(sorted(d.metadata["Name"].lower() for d in metadata.distributions())))
import accounting, accounting.audit, accounting.curves, accounting.filters, accounting.mechanisms
from accounting import RenyiCurve, gaussian_eps, rdp_to_eps, subsampled_gaussian_rdp
site = [p for p in sys.path if p.endswith("site-packages")]
assert accounting.__file__.startswith(site[0]), accounting.__file__
curve = subsampled_gaussian_rdp(q=0.01, sigma=1.1, orders=(2.0, 8.0, 32.0)).scaled(1000)
gauss = gaussian_eps(1e-5, sensitivity=1.0, sigma=2.0)
print(round(rdp_to_eps(curve, 1e-5).eps, 6), round(gauss, 6))
try:
    import experiments
except ModuleNotFoundError:
    print("no experiments")
"""


def _setuptools_at_least(major: int) -> bool:
    try:
        return int(metadata.version("setuptools").split(".")[0]) >= major
    except metadata.PackageNotFoundError:
        return False


def _run(*cmd: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the sources (so no build/ or egg-info lands in the
    repository), with the repository's pyproject.toml deciding what goes in."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("accounting", "experiments", "pipeline"):
        shutil.copytree(REPO / package, src / package, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    # the environment's setuptools builds it when it is recent enough (no index needed), else
    # pip builds in isolation with pyproject's build requirements from the index
    offline = ["--no-build-isolation", "--no-index"] if _setuptools_at_least(68) else []
    built = _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", *offline, "-w", out, src, cwd=src
    )  # fmt: skip
    if built.returncode != 0 and UNREACHABLE.search(built.stdout + built.stderr):
        pytest.skip(f"pip's package index is unreachable: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr[-3000:]
    (path,) = out.glob("filterlab-*.whl")
    return path


def test_wheel_holds_the_library_only_and_needs_the_core_dependencies(wheel):
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_string(whl.read(meta).decode())
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"accounting"}
    assert "accounting/py.typed" in names
    assert "accounting/curves/pld.py" in names
    requires = metadata.get_all("Requires-Dist")
    core = {re.split(r"[<>=!~ ;\[]", r)[0].lower() for r in requires if "extra ==" not in r}
    assert core == CORE
    extras = {re.split(r"[<>=!~ ;\[]", r)[0].lower() for r in requires if "extra ==" in r}
    assert {"pandas", "matplotlib", "hydra-core", "tqdm", "pyarrow"} <= extras


@pytest.mark.slow
def test_accounting_imports_and_computes_in_a_bare_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    lock = REPO / "requirements.lock"
    install = _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-input",
        "--no-compile", "-c", lock, wheel, cwd=tmp_path,
    )  # fmt: skip
    if install.returncode != 0 and UNREACHABLE.search(install.stdout + install.stderr):
        pytest.skip(f"pip's package index is unreachable: {install.stderr.strip()[-300:]}")
    assert install.returncode == 0, install.stderr[-3000:]
    ran = _run(python, "-I", "-c", SCRIPT, cwd=tmp_path)  # -I: nothing from the environment
    assert ran.returncode == 0, ran.stderr[-3000:]
    installed, *lines = ran.stdout.splitlines()
    assert installed.split() == sorted(CORE | {"filterlab"}), installed
    assert lines == [EXPECTED_NUMBERS, "no experiments"]


# eps after 1000 steps of the subsampled Gaussian (q = 0.01, sigma = 1.1; orders 2, 8, 32) and
# of one Gaussian (sigma = 2) at delta = 1e-5, computed by the same functions in the repository
# (Opacus gives 1.798180 for the first; tests/accounting/mechanisms/test_subsampled_gaussian.py).
EXPECTED_NUMBERS = "1.79818 1.993091"
