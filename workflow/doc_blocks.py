"""Generated blocks of the docs: every number of one scale that a page quotes, from results.

A page marks each block it quotes; the text between the markers is written by this module,
never by hand (issue 30 item 3):

    <!-- generated: NAME (python -m workflow.doc_blocks) -->
    ...
    <!-- generated end: NAME -->

NAME is a key of :data:`BLOCKS`, a function ``(results root, scale) -> markdown`` that reads
only result tables and their provenance sidecars (``results/<exp>/<scale>/*.csv[.json]``,
``results/scoreboard/<scale>.csv``, ``results/build_cost/<scale>.csv``):

    python -m workflow.doc_blocks --scale default             # rewrite every block of DOCS
    python -m workflow.doc_blocks --scale default --check     # exit 1 naming each stale block
    python -m workflow.doc_blocks --scale smoke --results DIR --check README.md

(``make docs`` runs the first.) Every page is rendered before any is written, and each is
written atomically, so a missing result or a broken marker leaves every page as it was.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.common.atomic import atomic_path
from experiments.scoreboard.scoring import summary_lines
from experiments.scoreboard.summary import paper_tables, provenance_line

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose blocks ``python -m workflow.doc_blocks`` rewrites, relative to ROOT.
DOCS = ("README.md", "docs/reproduction.md")
BEGIN = "<!-- generated: {name} (python -m workflow.doc_blocks) -->"
END = "<!-- generated end: {name} -->"
_BEGIN = re.compile(r"<!-- generated: ([a-z0-9_-]+) \(python -m workflow\.doc_blocks\) -->")
_END = re.compile(r"<!-- generated end: [a-z0-9_-]+ -->")
#: Any marker, well-formed or not (``<!--generated``, no space), so a broken one is counted.
_ANY_MARKER = re.compile(r"<!--\s*generated", re.IGNORECASE)


class MissingResults(ValueError):
    """A block's result file or metric is absent: the build of that scale has not run."""


Generator = Callable[[Path, str], str]


@dataclass(frozen=True)
class Block:
    """One generated region of a page: its name and where its text starts and ends."""

    name: str
    start: int  # index of the first character after the begin marker's line
    stop: int  # index of the end marker


def blocks(text: str, page: str = "page") -> list[Block]:
    """The generated blocks of ``text``, in order; a ValueError names a begin marker without
    its end, an end without its begin, a name used twice, or blocks that nest."""
    found: list[Block] = []
    position = 0
    for match in _BEGIN.finditer(text):
        name = match.group(1)
        if not text.startswith("\n", match.end()):
            raise ValueError(f"{page}: block {name!r}: its begin marker must end its line")
        if match.start() < position:
            raise ValueError(f"{page}: block {name!r} begins inside the block before it")
        end = END.format(name=name)
        stop = text.find(end, match.end())
        if stop < 0:
            raise ValueError(f"{page}: block {name!r} has no end marker {end!r}")
        inner = text[match.end() : stop]
        if _BEGIN.search(inner):
            raise ValueError(f"{page}: a block begins inside block {name!r}")
        if any(b.name == name for b in found):
            raise ValueError(f"{page}: block {name!r} appears twice")
        found.append(Block(name, match.end() + 1, stop))
        position = stop + len(end)
    markers = len(_ANY_MARKER.findall(text))
    if markers != 2 * len(found):
        malformed = [
            line.strip()
            for line in text.splitlines()
            if _ANY_MARKER.search(line) and not (_BEGIN.search(line) or _END.search(line))
        ]
        raise ValueError(
            f"{page}: {markers} generated markers for {len(found)} blocks"
            + (f" (malformed: {malformed})" if malformed else "")
            + f"; each block is {BEGIN.format(name='NAME')!r} ... {END.format(name='NAME')!r}"
        )
    return found


def render_page(text: str, results: Path, scale: str, page: str = "page") -> str:
    """``text`` with every block rewritten from ``results`` at ``scale``."""
    out, last = [], 0
    for block in blocks(text, page):
        if block.name not in BLOCKS:
            raise ValueError(f"{page}: unknown block {block.name!r}; known: {sorted(BLOCKS)}")
        try:
            body = BLOCKS[block.name](results, scale).rstrip("\n") + "\n"
        except MissingResults as err:
            raise MissingResults(f"{page}: block {block.name!r}: {err}") from None
        out += [text[last : block.start], body]
        last = block.stop
    return "".join(out) + text[last:]


def stale(old: str, new: str, page: str = "page") -> list[str]:
    """Names of the blocks whose text differs between ``old`` and ``new`` (same markers)."""
    before = {b.name: old[b.start : b.stop] for b in blocks(old, page)}
    return [b.name for b in blocks(new, page) if before.get(b.name) != new[b.start : b.stop]]


def missing_blocks(pages: Sequence[Path]) -> list[str]:
    """The registered blocks (:data:`BLOCKS`) that no page holds, when ``pages`` are all of
    :data:`DOCS` (a subset may leave blocks to the other pages): a block whose markers were
    deleted or misspelt (``<!--generated``) must fail the check, not leave it."""
    if not {(ROOT / rel).resolve() for rel in DOCS} <= {page.resolve() for page in pages}:
        return []
    held = {b.name for page in pages for b in blocks(page.read_text(), str(page))}
    return sorted(set(BLOCKS) - held)


def update(pages: Sequence[Path], results: Path, scale: str, check: bool) -> list[str]:
    """Render every page; without ``check`` write the changed ones (atomically, only after
    every page rendered). Returns ``"<page>: <block>"`` for each block that was stale."""
    missing = missing_blocks(pages)
    if missing:
        raise ValueError(
            f"registered block(s) {missing} are in none of {list(DOCS)} (their markers deleted or "
            f"misspelt); each block is {BEGIN.format(name='NAME')!r} ... "
            f"{END.format(name='NAME')!r}"
        )
    rendered: dict[Path, str] = {}
    disagree: list[str] = []
    for page in pages:
        old = page.read_text()
        new = render_page(old, results, scale, str(page))
        disagree += [f"{page}: {name}" for name in stale(old, new, str(page))]
        if new != old:
            rendered[page] = new
    if not check:
        for page, new in rendered.items():
            with atomic_path(page) as tmp:
                tmp.write_text(new)
    return disagree


# --- reading results ------------------------------------------------------------------------


def table(path: Path) -> pd.DataFrame:
    """A results table (strings kept as written), or MissingResults naming it."""
    if not path.is_file():
        raise MissingResults(f"{path} is missing")
    return pd.read_csv(path, keep_default_na=False)


def sidecar(path: Path) -> dict[str, Any]:
    """The provenance sidecar ``<path>.json`` of a results table."""
    side = path.with_name(path.name + ".json")
    if not side.is_file():
        raise MissingResults(f"{side} (the sidecar of {path.name}) is missing")
    record: dict[str, Any] = json.loads(side.read_text())
    return record


def machine(record: Mapping[str, Any]) -> str:
    """``commit <sha> on <CPU> (<n> CPUs, <GPUs>)``, from a sidecar."""
    git, host = record.get("git", {}), record.get("host", {})
    commit = str(git.get("commit", "unknown"))[:7]
    if git.get("dirty"):
        commit += " (with local changes)"
    gpus = ", ".join(host.get("gpus") or []) or "no GPU"
    cpu = host.get("cpu", "an unknown CPU")
    return f"commit {commit} on {cpu} ({host.get('cpu_count', '?')} CPUs, {gpus})"


# --- the generators -------------------------------------------------------------------------


def scoreboard_summary(results: Path, scale: str) -> str:
    """One line per paper: checked, matched, differ (measured / unexplained), no data."""
    board = table(results / "scoreboard" / f"{scale}.csv")
    return "\n".join(summary_lines(board, scale))


def scoreboard_numbers(results: Path, scale: str) -> str:
    """The build that scored, then one table per paper: each check's figure or table, the
    paper's number beside ours, and whether ours reproduces it."""
    path = results / "scoreboard" / f"{scale}.csv"
    board = table(path)
    return "\n".join([provenance_line(sidecar(path)), "", *paper_tables(board)])


def build_cost(results: Path, scale: str) -> str:
    """The per-rule cost of the build (``python -m workflow.build_cost``'s results file)."""
    path = results / "build_cost" / f"{scale}.csv"
    rows, record = table(path), sidecar(path)
    build = record.get("build", {})
    lines = [
        f"Whole {scale} build at {machine(record)}: {build.get('jobs', '?')} jobs, "
        f"{float(build.get('elapsed_min', 'nan')):.1f} minutes from the first job's start "
        f"({build.get('first_start_utc', '?')}) to the last job's end "
        f"({build.get('last_end_utc', '?')}).",
        "",
        "| experiment | rule | jobs | CPU-minutes | wall-minutes | share of CPU |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows.itertuples():
        lines.append(
            f"| {r.experiment} | {r.rule} | {r.jobs} | {float(r.cpu_min):.1f} "
            f"| {float(r.wall_min):.1f} | {float(r.share):.1%} |"
        )
    cpu = sum(float(c) for c in rows.cpu_min)
    wall = sum(float(w) for w in rows.wall_min)
    lines.append(
        f"| **total** | | {sum(int(j) for j in rows.jobs)} | {cpu:.1f} | {wall:.1f} | 100.0% |"
    )
    return "\n".join(lines)


def build_cost_line(results: Path, scale: str) -> str:
    """The first line of :func:`build_cost`: machine, commit, jobs and elapsed minutes."""
    return build_cost(results, scale).splitlines()[0]


@dataclass(frozen=True)
class Quote:
    """Metrics a page quotes: a full-match pattern of their keys (one row per key, in the
    order ``metrics`` returns them), how a number is printed, what they are."""

    pattern: str
    fmt: str
    what: str


def shown(value: Any, fmt: str) -> str:
    """A metric as a block prints it: a bool as True / False, a number with ``fmt``."""
    return str(value) if isinstance(value, bool) else format(value, fmt)


def metrics(results: Path, experiment: str, scale: str, source: str) -> tuple[dict[str, Any], str]:
    """``experiments.<experiment>.metrics`` on ``results/<experiment>/<scale>/``, and a line
    naming the run that wrote its ``source`` table there (commit, machine, date)."""
    folder = results / experiment / scale
    record = sidecar(folder / source)
    values = importlib.import_module(f"experiments.{experiment}.metrics").metrics(folder)
    line = (
        f"From `results/{experiment}/{scale}/` ({source}: {machine(record)}, "
        f"{record.get('timestamp_utc', '?')})."
    )
    return values, line


def quotes(experiment: str, source: str, entries: Sequence[Quote]) -> Generator:
    """A generator: the metrics of ``experiments.<experiment>.metrics`` on
    ``results/<experiment>/<scale>/`` that ``entries`` name, under a line naming the run that
    wrote its ``source`` table (commit, machine, date). A pattern no key matches is a
    MissingResults."""

    def render(results: Path, scale: str) -> str:
        values, line = metrics(results, experiment, scale, source)
        lines = [line, "", "| metric | value | what it is |", "|---|---:|---|"]
        for q in entries:
            keys = [k for k in values if re.fullmatch(q.pattern, k)]
            if not keys:
                raise MissingResults(
                    f"no metric {q.pattern!r} is computable from {results / experiment / scale}"
                )
            lines += [f"| `{k}` | {shown(values[k], q.fmt)} | {q.what} |" for k in keys]
        return "\n".join(lines)

    return render


TAYLOR = (
    Quote("t_rdp", ".0f", "T_RDP at eps = 10: the last t the RDP filter reaches"),
    Quote(
        "realisation_min_survival_to_t_rdp", ".3f", "realisation level: min P(T >= t), t <= T_RDP"
    ),
    Quote("realisation_survival_after_t_rdp", ".3f", "realisation level: P(T >= T_RDP + 1)"),
    Quote("realisation_survival_at_n", ".3f", "realisation level: P(T >= N), N = 48"),
    Quote("realisation_mean_stopping_time", ".1f", "realisation level: E[T] at eps = 10"),
    Quote("rdp_early_lead", ".3f", "max over t <= T_RDP of P_RDP(T >= t) - P_real(T >= t)"),
    Quote(
        "claims_hold_eps_(?:min|max)",
        "g",
        "smallest / largest swept eps where all four claims hold",
    ),
    Quote("eps_reaching_n_.*", "g", "smallest swept eps with P(T >= N) >= 1/2 (nan: none)"),
    Quote("rule_(?:delta_tilde|theta)", ".4e", "Sec. V-B: the pair the text's rule selects"),
    Quote("tight_delta", ".7e", "the delta for which the printed pair is tight"),
    Quote(
        "(?:rule|published)_objective", ".3f", "Phi^-1(1 - delta~) + Phi^-1(1 - theta) of each pair"
    ),
    Quote("puredp_mean_stopping_time_.*", ".1f", "Sec. V-A instance: E[T] under X = 0 / 1 (<= 40)"),
)
ADULT = (
    Quote(
        r"baseline_(?:val|test)_acc(?:_sd)?", ".4f", "non-DP baseline: mean (s.d.) over its runs"
    ),
    Quote(r"split_n_\w+", ".0f", "rows of the training / validation / test part"),
    Quote(r"frac_above_threshold_\w+", ".2f", "Fig. 2c: accepted releases above the threshold"),
    Quote(r"(?:plain|svt)_(?:mean|median)_eps", ".4g", "accepted eps, mean / median over repeats"),
    Quote(r"(?:plain|svt)_mean_val_acc", ".4f", "accepted validation accuracy, mean"),
    Quote(r"(?:plain|svt)_repeats_at_last_level", ".0f", "repeats accepted only at the last eps"),
    Quote(r"variant_\w+_baseline_(?:val|test)_(?:acc|sd)", ".4f", "a variant's baseline (s.d.)"),
    Quote(r"seed_spread_baseline_.*", ".4f", "the baseline over the seeds: s.d., min, max"),
    Quote("seed_spread_n", ".0f", "seeds in that spread (the paper reading's and seed_<k>)"),
)
RESIDUE = (
    Quote(
        "nu_(?:naive|residue)_[abc]",
        ".5f",
        "Fig. 1 panel (a)-(c): nu of the naive / residue update",
    ),
    Quote(
        "naive_max_gap_[abc]",
        ".1e",
        "Fig. 1: largest type-II gap of the naive update to the budget",
    ),
    Quote(
        "residue_query_max_gap_[abc]",
        ".1e",
        "Fig. 1: largest gap of residue (x) query to the budget",
    ),
    Quote(r"excess_fig[23]_\w+", ".3f", "Figs. 2, 3: worst-case excess over the budget (type II)"),
    Quote(r"counts_\w+", ".3g", "queries admitted at the smallest eps of each mu, and their ratio"),
)
SELECTION = (
    Quote(r"argmin_threshold_t\d+", ".3f", "Fig. 2: the threshold minimising the loss at t"),
    Quote(
        r"heatmap_improved_fraction(?:_rho.*)?", ".3f", "Fig. 1: share of cells where ex-post wins"
    ),
    Quote(r"heatmap_gain_first_t_(?:mean|max)_rho.*", ".4f", "Fig. 1: gain at t = 3 over sigma_X"),
    Quote("heatmap_min_difference", ".4f", "Fig. 1: smallest ex-ante minus ex-post"),
    Quote(
        r"mc_(?:mean|sd|numeric)_s[0-9.]+_d(?:2|10|1000)",
        ".4g",
        "Figs. 3, 6: MC mean / s.d., the bound",
    ),
    Quote("rnm_(?:max|min)_difference", ".3g", "Figs. 7, 8: post-processing minus ours, max / min"),
    Quote(r"eps90_(?:gaussian_ours|gaussian_post|ratio)_\w+_d\d+", ".4f", "eps at 90% accuracy"),
    Quote(
        r"eps90_(?:exponential|permute_and_flip|laplace_\w+)_\w+_d\d+", ".4f", "eps90, baselines"
    ),
    Quote(r"readings_supporting_ours_.*", ".0f", "calibration readings under which ours wins"),
    Quote(r"ours_beats_laplace_(?:post|rnm)_.*", "", "ours below Laplace RNM's eps90 (2 readings)"),
    Quote(r"em_pf_sensitivity_to_lose_.*", ".2f", "EM/PF sensitivity (x 1/N) at which ours wins"),
    Quote(r"(?:fsrc|filter|composition)_mean_.*", ".3f", "online: mean final eps per sigma_X"),
    Quote(r"f1_(?:bikes|lcl|near)_s.*", ".2f", "online: mean F1 per sigma_X"),
    Quote(r"fsrc_paper_reading_max_gap_.*", ".4f", "FSRC, paper's delta_t = 1/N: max |eps - ours|"),
    Quote(
        r"fsrc_paper_reading_max_delta_.*", ".3f", "FSRC, paper's delta_t: its union-bound delta"
    ),
)


def selection_readings(results: Path, scale: str) -> str:
    """Figs. 12b, 15: eps90 of EM / permute-and-flip under each calibration reading, per task,
    and ours (``eps90_<mech>_<task>_<reading>``, ``eps90_gaussian_ours_<task>``)."""
    values, line = metrics(results, "selection", scale, "calibration.csv")
    found = [re.fullmatch(r"eps90_exponential_(\w+_d\d+)_(\w+)", k) for k in values]
    tasks = list(dict.fromkeys(m.group(1) for m in found if m))
    readings = list(dict.fromkeys(m.group(2) for m in found if m))
    if not tasks:
        raise MissingResults(f"no calibration metrics in {results / 'selection' / scale}")
    rows = [line, "", "| reading | " + " | ".join(f"EM / PF, {t}" for t in tasks) + " |"]
    rows.append("| --- |" + " --- |" * len(tasks))
    for r in readings:
        em = [values[f"eps90_exponential_{t}_{r}"] for t in tasks]
        pf = [values[f"eps90_permute_and_flip_{t}_{r}"] for t in tasks]
        cells = [f"{e:.4f} / {f:.4f}" for e, f in zip(em, pf, strict=True)]
        rows.append(f"| `{r}` | " + " | ".join(cells) + " |")
    ours = [f"{values.get(f'eps90_gaussian_ours_{t}', float('nan')):.4f}" for t in tasks]
    rows.append("| ours (Gaussian RNM, delta = 0) | " + " | ".join(ours) + " |")
    return "\n".join(rows)


def _delta(value: float) -> str:
    """A sensitivity as the docs write it: ``1/N`` below 1, ``none finite`` for inf."""
    if value == float("inf"):
        return "none finite"
    return f"{value:g}" if value >= 1 else f"1/{round(1 / value):,}"


def selection_scalings(results: Path, scale: str) -> str:
    """Figs. 5, 19, 20 under each LCL scaling: its valid Delta, days, the day of the series'
    maximum and its value, days above rho, FSRC / filter per sigma_X, F1 at the first and last
    sigma_X and the two captions' claims (``..._scaling_<name>`` metrics)."""
    values, line = metrics(results, "selection", scale, "scalings.csv")
    names = [k.removeprefix("n_days_scaling_") for k in values if k.startswith("n_days_scaling_")]
    if not names:
        raise MissingResults(f"no scalings metrics in {results / 'selection' / scale}")
    sigmas = [
        k.rsplit("_sx", 1)[1]
        for k in values
        if k.startswith(f"fsrc_over_filter_scaling_{names[0]}_sx")
    ]
    shown_sigmas = ", ".join(x.replace("p", ".") for x in sigmas)
    rows = [
        line,
        "",
        "| scaling | valid Delta | days | max (day, value) | days >= rho "
        f"| FSRC / filter at sigma_X = {shown_sigmas} | F1 at {sigmas[0].replace('p', '.')} / "
        f"{sigmas[-1].replace('p', '.')} | Fig. 5 / Fig. 19 claim |",
        "| --- | --- | ---: | --- | ---: | --- | --- | --- |",
    ]
    held = {True: "holds", False: "fails"}
    for n in names:
        tag = f"scaling_{n}"
        ratios = ", ".join(f"{values[f'fsrc_over_filter_{tag}_sx{x}']:.3f}" for x in sigmas)
        f1 = f"{values[f'f1_{tag}_sx{sigmas[0]}']:.2f} / {values[f'f1_{tag}_sx{sigmas[-1]}']:.2f}"
        claims = " / ".join(
            held[bool(values.get(f"fsrc_below_filter_{c}_{tag}"))] for c in ("0p04", "above_0p06")
        )
        delta = _delta(values[f"valid_sensitivity_{tag}"])
        rows.append(
            f"| `{n}` | {delta} | {values[f'n_days_{tag}']:.0f} "
            f"| {values[f'max_day_{tag}']:.0f}, {values[f'max_value_{tag}']:.3f} "
            f"| {values[f'n_above_{tag}']:.0f} | {ratios} | {f1} | {claims} |"
        )
    return "\n".join(rows)


BLOCKS: dict[str, Generator] = {
    "scoreboard-summary": scoreboard_summary,
    "scoreboard-numbers": scoreboard_numbers,
    "build-cost": build_cost,
    "build-cost-line": build_cost_line,
    "taylor-numbers": quotes("taylor_survival", "survival.csv", TAYLOR),
    "adult-numbers": quotes("adult_synth", "baseline.csv", ADULT),
    "residue-numbers": quotes("residue_filters", "fig1.csv", RESIDUE),
    "selection-numbers": quotes("selection", "offline.csv", SELECTION),
    "selection-readings": selection_readings,
    "selection-scalings": selection_scalings,
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help=f"pages (default: {', '.join(DOCS)})")
    parser.add_argument("--scale", required=True, help="the results' scale (smoke, default, paper)")
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="results root")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    pages = args.pages or [ROOT / p for p in DOCS]
    try:
        disagree = update(pages, args.results, args.scale, args.check)
    except MissingResults as err:
        sys.exit(
            f"results missing for scale {args.scale!r}: {err} (build them first: "
            f"make figures SCALE={args.scale}); no page written"
        )
    except ValueError as err:
        sys.exit(f"{err}; no page written")
    if args.check and disagree:
        sys.exit(
            "blocks that disagree with the results:\n"
            + "\n".join(f"  {d}" for d in disagree)
            + f"\nrewrite them with: python -m workflow.doc_blocks --scale {args.scale}"
        )
    verb = "disagree" if args.check else "rewritten"
    print(f"{len(disagree)} block(s) {verb}" + "".join(f"\n  {d}" for d in disagree))


if __name__ == "__main__":
    main()
