"""``python -m experiments.<exp>.run --help``: the experiment's own options and parameters.

Hydra's default help lists every config group of config/ (every experiment's scale folder)
and dumps the whole config. ``config/filterlab/help.yaml`` (pulled in by every scale) sets
``hydra.help.template`` to the ``filterlab_help`` resolver, which ``register`` binds to the
experiment's schema: one line per top-level option (its value and the comment beside it in
config/<exp>.yaml) and one line per ``params`` key (value at the chosen scale, type, the rule
its field declares and its doc), all generated from the config and the schema.
"""

from __future__ import annotations

import re
from typing import Any

from omegaconf import DictConfig, OmegaConf

from experiments.common.config import CONFIG_DIR
from experiments.common.params import deferred, param_lines

RESOLVER = "filterlab_help"
_COMMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):[^#]*#\s*(.+)$")


def _comments(name: str) -> dict[str, str]:
    """``{key: comment}`` of the top-level keys of config/<name>.yaml with a trailing comment."""
    found = {}
    for line in (CONFIG_DIR / f"{name}.yaml").read_text().splitlines():
        if match := _COMMENT.match(line):
            found[match[1]] = match[2].strip()
    return found


def text(name: str, schema: type, root: DictConfig) -> str:
    """The help of experiment ``name`` for the composed config ``root``."""
    scales = "|".join(sorted(p.stem for p in (CONFIG_DIR / "scale").glob("*.yaml")))
    comments = _comments(name)
    options = [f"scale={root.scale.name}  (one of {scales}; config/scale/<scale>.yaml)"]
    raw = OmegaConf.to_container(root, resolve=False)
    assert isinstance(raw, dict)
    for key, value in raw.items():
        key = str(key)
        if key in ("hydra", "params", "scale"):
            continue
        note = comments.get(key)
        options.append(f"{key}={value!s}" + (f"  {note}" if note else ""))

    with deferred():  # the values Hydra composed over the schema's defaults
        merged = OmegaConf.merge(OmegaConf.structured(schema), root.params)

    def value_of(key: str) -> Any:
        return OmegaConf.select(merged, key.removeprefix("params."), throw_on_missing=False)

    lines = [
        f"{name}: python -m experiments.{name}.run [scale=...] [key=value ...] "
        "[params.key=value ...]",
        "A list value sweeps with -m (docs/pipeline.md, Sweeps).",
        "",
        "== Options ==",
        *options,
        "",
        f"== Parameters (params.*, values at scale={root.scale.name}) ==",
        *param_lines(schema, value_of),
        "",
        "Hydra: --cfg job prints the composed config, --hydra-help Hydra's own flags.",
    ]
    return "\n".join(lines)


def register(name: str, schema: type) -> None:
    """Bind the ``filterlab_help`` resolver that ``hydra.help.template`` calls to ``schema``.

    Hydra fills the template with ``string.Template``, so each ``$`` is doubled.
    """

    def resolve(*, _root_: DictConfig) -> str:
        return text(name, schema, _root_).replace("$", "$$")

    OmegaConf.register_new_resolver(RESOLVER, resolve, replace=True)
