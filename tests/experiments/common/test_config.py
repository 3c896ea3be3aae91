"""Experiment configuration: precedence (command line > scale file > common), schemas, sweeps."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from snakemake_command import python_m_cmd

from experiments.common.config import CONFIG_DIR, compose_config, load_params
from experiments.taylor_survival.schema import Params as TaylorParams

ROOT = Path(__file__).resolve().parents[3]
SCALES = ("smoke", "default", "paper")
EXPERIMENTS = sorted(p.parent.name for p in ROOT.glob("experiments/*/schema.py"))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_every_experiment_config_composes_and_validates(exp: str, scale: str) -> None:
    assert (CONFIG_DIR / f"{exp}.yaml").exists(), f"{exp} has a schema but no config/{exp}.yaml"
    schema = importlib.import_module(f"experiments.{exp}.schema").Params
    cfg = compose_config(exp, scale)
    assert cfg.scale.name == scale
    load_params(cfg, schema)
    assert "by_scale" not in cfg, "per-scale values belong in config/<exp>/scale/<scale>.yaml"


def test_scale_file_overrides_common_and_command_line_wins() -> None:
    common = load_params(compose_config("taylor_survival", "default"), TaylorParams)
    smoke = load_params(compose_config("taylor_survival", "smoke"), TaylorParams)
    assert common.sigmas == [2.0] and smoke.sigmas == [2.0, 3.0]  # scale file over common
    assert smoke.puredp.n_paths == 400 and smoke.puredp.eps_hi == 0.5  # nested deep merge
    cli = compose_config("taylor_survival", "smoke", ["params.sigmas=[0.5]", "params.n_paths=7"])
    ran = load_params(cli, TaylorParams)
    assert ran.sigmas == [0.5] and ran.n_paths == 7  # the command line wins over the scale file


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("params.n_paths=0", "n_paths"),
        ("params.n_paths=-5", "n_paths"),
        ("params.chunk=0", "chunk"),
        ("params.sigmas=[]", "sigmas"),
        ("params.deltas=[2.0]", "deltas"),
        ("params.plot_eps=[99]", "plot_eps"),
        ("params.pairs=[nope]", "pairs"),
        ("params.n_paths=many", "n_paths"),
        ("+params.n_path=3", "n_path"),
        ("params.puredp.eps_lo=-1", "puredp.eps_lo"),
    ],
)
def test_bad_parameters_are_refused_naming_the_key(override: str, key: str) -> None:
    cfg = compose_config("taylor_survival", "smoke", [override])
    with pytest.raises(ValueError, match=rf"params\.{key}"):
        load_params(cfg, TaylorParams)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("+params.n_path=3", "params.n_path: unknown key 'n_path', did you mean 'n_paths'?"),
        (
            "+params.puredp.budgt=3",
            "params.puredp.budgt: unknown key 'budgt', did you mean 'budget'?",
        ),
        ("+params.zzz=3", "params.zzz: unknown key 'zzz'. Valid keys of Params: ['chunk', "),
    ],
)
def test_unknown_key_gets_the_closest_valid_key(override: str, message: str) -> None:
    cfg = compose_config("taylor_survival", "smoke", [override])
    with pytest.raises(ValueError, match=re.escape(message)):
        load_params(cfg, TaylorParams)


def test_unknown_top_level_override_is_refused_by_hydra() -> None:
    with pytest.raises(Exception, match="sigmass"):
        compose_config("taylor_survival", "smoke", ["params.sigmass=[1.0]"])


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` in the repository root, warm."""
    return subprocess.run(
        python_m_cmd(module, *args), cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_readme_sweep_recipe_runs_each_value_to_its_own_file(tmp_path: Path) -> None:
    """docs/pipeline.md "Sweeps": a multirun over a list parameter does what it says."""
    page = (ROOT / "docs" / "pipeline.md").read_text()
    assert "params.sigmas='[0.5],[1.0],[2.0]'" in page
    out = tmp_path / "survival.csv"
    done = _run(
        "experiments.taylor_survival.run",
        "-m",
        "scale=smoke",
        "params.sigmas=[0.5],[1.0],[2.0]",
        "params.eps=[10]",
        "params.plot_eps=[10]",
        "params.deltas=[published]",
        "params.n_paths=200",
        f"out={out}",
    )
    assert done.returncode == 0, done.stderr
    for job, sigma in enumerate([0.5, 1.0, 2.0]):
        table = tmp_path / f"survival.{job}.csv"
        assert set(pd.read_csv(table).sigma) == {sigma}
        record = json.loads(table.with_name(table.name + ".json").read_text())
        assert record["params"]["sigmas"] == [sigma]  # the sidecar records what ran
        assert record["params"]["n_paths"] == 200
        assert f"params.sigmas=[{sigma}]" in record["overrides"]
    assert not out.exists()


def test_app_refuses_bad_params_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    done = _run("experiments.taylor_survival.run", "scale=smoke", "params.n_paths=0", f"out={out}")
    assert done.returncode != 0
    assert "params.n_paths must be > 0" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_app_refuses_an_empty_table(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    script = (
        "import sys, pandas as pd\n"
        "from experiments.common.app import experiment_main\n"
        "from experiments.common.job import Table\n"
        "from experiments.taylor_survival.schema import Params\n"
        f"sys.argv = ['run', 'scale=smoke', 'out={out}']\n"
        "empty = {'survival': Table(lambda job, p, rng: pd.DataFrame())}\n"
        "experiment_main('taylor_survival', Params, empty)()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert "the run produced an empty table" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_top_level_keys_do_not_shadow_config_groups(exp: str) -> None:
    """A key named like a config folder (another experiment's name) cannot be overridden."""
    groups = {p.name for p in CONFIG_DIR.iterdir() if p.is_dir()}
    keys = set(compose_config(exp, "smoke").keys()) - {"scale"}
    assert not keys & groups, f"config/{exp}.yaml keys {sorted(keys & groups)} shadow groups"


def test_a_mistyped_override_key_gets_a_suggestion_before_hydra_runs():
    """Hydra refuses `params.sigmass=1` (not in struct) without naming an alternative; the
    entry point checks override keys against the schema first (issue 22 item 6)."""
    from experiments.common.config import check_override_keys
    from experiments.filter_comparison.schema import Params as FcParams

    with pytest.raises(
        ValueError, match=r"params\.sigmass: unknown key 'sigmass', did you mean 'sigmas'"
    ):
        check_override_keys(["scale=smoke", "params.sigmass=[1]"], FcParams)
    with pytest.raises(ValueError, match=r"params\.gradients\.clipp: .*did you mean 'clip'"):
        check_override_keys(["params.gradients.clipp=2"], FcParams)
    # valid keys, list indices, additions and non-params overrides pass
    check_override_keys(
        ["params.gradients.clip=2", "params.sigmas[0]=3", "+params.x=1", "table=a"], FcParams
    )


@pytest.mark.parametrize("arg", ["sclae=smoke", "+sclae=smoke", "++sclae=smoke", "~sclae"])
def test_a_mistyped_top_level_key_is_refused_with_a_suggestion(arg: str, monkeypatch) -> None:
    """Hydra advises `+sclae=smoke` for `sclae=smoke`, which then runs at the default scale
    with a stray key (issue 32 item 6): the entry point refuses both before Hydra runs."""
    from experiments.common.app import experiment_main
    from experiments.common.job import Table

    def never(job, params, rng):
        raise AssertionError("the table must not be built")

    monkeypatch.setattr(sys, "argv", ["run", arg, "out=never.csv"])
    app = experiment_main("taylor_survival", TaylorParams, {"survival": Table(never)})
    with pytest.raises(ValueError, match=r"unknown top-level key 'sclae', did you mean 'scale'\?"):
        app()


def test_a_params_field_given_at_top_level_is_pointed_to_params() -> None:
    from experiments.common.config import check_top_level_keys

    with pytest.raises(ValueError, match=r"'sigmas', did you mean 'params\.sigmas'\?"):
        check_top_level_keys(["sigmas=[1]"], "taylor_survival", TaylorParams)


@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_every_top_level_key_the_rules_and_configs_use_is_accepted(exp: str) -> None:
    """The keys the Snakemake rules pass (rules.smk) and every key of the composed config."""
    from experiments.common.config import check_top_level_keys

    schema = importlib.import_module(f"experiments.{exp}.schema").Params
    rules = (ROOT / "experiments" / exp / "rules.smk").read_text()
    used = set(re.findall(r"\b([a-z_]+)(?:\.[a-z_.]+)?=\{", rules))
    keys = set(compose_config(exp, "smoke").keys()) | used
    args = [f"{key}=1" for key in sorted(keys)]
    args += ["-m", "--cfg", "job", "hydra.verbose=true", f"+{exp}/scale=smoke", "params.seed=1"]
    check_top_level_keys(args, exp, schema)
