"""The environment is pinned: requirements.lock holds exact versions of everything installed,
every install path uses it, and the versions a provenance sidecar records are the locked ones.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from experiments.common.provenance import package_versions

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements.lock"


def _lock() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", f"not an exact pin: {line}"
            pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def test_lock_pins_every_dependency_exactly_and_installs_from_pypi():
    pins = _lock()
    assert "filterlab" not in pins
    assert pins["torch"] == "2.13.0"  # a looser pin downloads a multi-GB CUDA build
    assert all("+" not in version for version in pins.values()), "local labels (+cpu) break PyPI"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]
    for line in declared:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is a dependency but not in requirements.lock"
        assert requirement.specifier.contains(pins[name]), f"lock {name}=={pins[name]} vs {line}"


def test_provenance_records_the_locked_versions():
    pins = _lock()
    recorded = package_versions()
    assert {"numpy", "scipy", "pandas", "torch", "snakemake"} <= set(recorded)
    for name, version in recorded.items():
        if name == "filterlab":
            continue
        key = canonicalize_name(name)
        assert key in pins, f"{name} is recorded in sidecars but not locked"
        assert Version(version).public == pins[key], (
            f"{name} {version} installed, {pins[key]} locked: reinstall with "
            "`pip install -c requirements.lock -e '.[experiments,dev]'` or run `make lock`"
        )


def test_every_install_path_uses_the_lock():
    dry = subprocess.run(
        ["make", "-n", "-B", "setup"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    installs = [line for line in dry.splitlines() if "pip install" in line]
    assert len(installs) == 2 and all("-c requirements.lock" in line for line in installs)
    assert "make test" in (REPO / ".ci" / "run").read_text()
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-c requirements.lock" in pip_section
    assert "torch==2.13.0" in pip_section
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python == "python=3.11"
    header = LOCK.read_text().splitlines()[0]
    assert re.search(r"Python 3\.11", header)
