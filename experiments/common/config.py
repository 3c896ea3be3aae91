"""Experiment parameters for the selected scale (smoke | default | paper).

Pattern (see README "How to add a sweep"): the primary config ``config/<exp>.yaml`` has
``defaults: [{scale: default}, _self_]``, common parameters under ``params:`` and per-scale
overrides under ``by_scale: {smoke: {...}, default: {...}, paper: {...}}``. The shared group
``config/scale/<name>.yaml`` sets ``scale.name``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf


def params(cfg: DictConfig | Mapping[str, Any]) -> DictConfig:
    """Return ``cfg.params`` deep-merged with ``cfg.by_scale[cfg.scale.name]`` (scale wins).

    Raises ``ValueError`` when ``scale.name`` is missing or ``by_scale`` has no entry for it,
    so that a typo such as ``scale=smok`` or a forgotten scale block fails before any work.
    The result is a fresh, fully resolved copy (interpolations see the whole config).
    """
    conf = OmegaConf.create(
        OmegaConf.to_container(cfg, resolve=False) if isinstance(cfg, DictConfig) else dict(cfg)
    )
    name = OmegaConf.select(conf, "scale.name")
    if not isinstance(name, str) or not name:
        raise ValueError("cfg.scale.name must be set (add `defaults: [{scale: default}, _self_]`)")
    if conf.get("params") is None:
        conf.params = {}
    by_scale = conf.get("by_scale")
    if by_scale is not None:
        if name not in by_scale:
            raise ValueError(
                f"scale {name!r} has no entry under by_scale; available: {sorted(by_scale.keys())}"
            )
        conf.params = OmegaConf.merge(conf.params, by_scale[name] or {})
    return OmegaConf.create(OmegaConf.to_container(conf.params, resolve=True))
