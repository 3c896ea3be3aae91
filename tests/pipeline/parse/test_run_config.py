"""The Snakefile's `--config` checks and per-scale values (pipeline/parse/run_config.py), as plain
functions; tests/pipeline/test_config_and_targets.py checks them through Snakemake."""

from __future__ import annotations

import pytest

from pipeline.parse.run_config import (
    SCALES,
    check_config,
    is_config_flag,
    other_scale_error,
    other_scales,
    per_scale,
    refuse_absolute_targets,
    refuse_conflicting_config,
)


def test_check_config_fills_in_the_defaults_and_keeps_valid_values():
    assert check_config({}) == ("default", "fail")
    assert check_config({"scale": "smoke", "missing_data": "skip"}) == ("smoke", "skip")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"scal": "smoke"}, r"unknown --config key\(s\) \['scal'\]; valid keys: scale \(one of"),
        ({"scale": "huge"}, r"config scale must be one of \('smoke', 'default', 'paper'\)"),
        ({"missing_data": "ignore"}, "config missing_data must be 'fail' or 'skip', got 'ignore'"),
    ],
)
def test_check_config_names_the_bad_key_or_value_and_the_valid_ones(config, message):
    with pytest.raises(ValueError, match=message):
        check_config(config)


def test_a_key_given_twice_with_different_values_is_refused_the_same_value_is_not():
    refuse_conflicting_config(["scale=smoke", "scale=smoke"], ["snakemake", "--config"])
    refuse_conflicting_config(None, ["snakemake"])
    with pytest.raises(ValueError, match=r"scale is given twice .*\('smoke' and 'paper'\)"):
        refuse_conflicting_config(["scale=smoke", "scale=paper"], ["snakemake", "--config"])
    with pytest.raises(ValueError, match=r"give it once: colour \(unknown key\)"):
        refuse_conflicting_config(["colour=1", "colour=2"], ["snakemake"])


@pytest.mark.parametrize("second", ["--config", "-C", "--config=missing_data=skip"])
def test_config_given_twice_is_refused(second):
    argv = ["snakemake", "--config", "scale=smoke", second, "missing_data=skip"]
    with pytest.raises(ValueError, match="--config is given more than once"):
        refuse_conflicting_config(["missing_data=skip"], argv)
    # the program name is not a flag, however it is spelled
    refuse_conflicting_config([], ["--config", "--config", "scale=smoke"])


@pytest.mark.parametrize("second", ["-Cscale=paper", "-nCscale=paper", "-pnC"])
def test_config_given_twice_in_the_attached_form_is_refused(second):
    """Issue 43: `snakemake -n --config scale=smoke -Cscale=paper` planned the paper run."""
    argv = ["snakemake", "-n", "--config", "scale=smoke", second, "scale=paper"]
    with pytest.raises(ValueError, match="--config is given more than once"):
        refuse_conflicting_config(["scale=paper"], argv)


@pytest.mark.parametrize("word", ["-sCustom.smk", "-c2", "-n", "results/C.csv", "scale=C"])
def test_other_words_are_not_config_flags(word):
    assert not is_config_flag(word)
    refuse_conflicting_config([], ["snakemake", "--config", "scale=smoke", word])


def test_per_scale_picks_the_value_of_its_scale_and_refuses_another():
    assert [per_scale(scale, 1, 2, 3) for scale in SCALES] == [1, 2, 3]
    with pytest.raises(ValueError, match="scale must be one of"):
        per_scale("huge", 1, 2, 3)


def test_other_scales_match_every_scale_but_the_runs():
    assert other_scales("smoke") == "default|paper"
    assert other_scales("paper") == "smoke|default"


def test_other_scale_error_says_which_scale_makes_the_target():
    error = other_scale_error("results", "selection", "default", "/offline.csv", "smoke")
    assert str(error) == (
        "results/selection/default/offline.csv belongs to scale=default and this run is "
        "scale=smoke: run with --config scale=default"
    )


def test_an_absolute_target_under_the_root_names_its_relative_path(tmp_path):
    """Issue 43: `$PWD/results/selection/smoke/offline.csv` gave MissingRuleException."""
    target = f"{tmp_path}/results/selection/smoke/offline.csv"
    with pytest.raises(ValueError, match=r"give it as results/selection/smoke/offline\.csv$"):
        refuse_absolute_targets(["snakemake", "-n", target], tmp_path)
    # the root itself (-d), its Snakefile, a path elsewhere and relative targets are fine
    refuse_absolute_targets(
        [
            "snakemake",
            "-d",
            str(tmp_path),
            "-s",
            f"{tmp_path}/Snakefile",
            "/elsewhere/results/x",
            "results/selection/smoke/offline.csv",
        ],
        tmp_path,
    )
