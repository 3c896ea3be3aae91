# Data layer: data/raw (fetched, verified) -> data/processed (tidy). Included first by the
# Snakefile. Exposes to experiment rules:
#   PROCESSED       {"adult": ..., "adult_domain": ..., "bikes": ..., "mnist": ...,
#                    "lcl_matrix": ..., "lcl_daily": ..., "near_matrix": ..., "near_daily": ...}
#   DATA_AVAILABLE  {"adult": True, ..., "near": False}: required datasets are always True (they
#                   are fetched, or the run stops with a clear message) unless
#                   --config missing_data=skip; an optional dataset (NEAR), or any dataset
#                   under missing_data=skip, is True only if a local copy of its raw files
#                   exists (data/raw or the mirror). Experiments check it for their datasets.
#   PROCESSED_DEFAULT  processed files of the available datasets and their sidecars (rule all
#                   depends on them).
# fetch_raw has no code inputs: its output is pinned by the manifest's sha256, which
# preprocessing verifies again on every run. Logs: logs/data/.
import re
import sys

from experiments.data.fetch import is_available, load_manifest
from experiments.data.preprocess import OUTPUTS, RAW

MANIFEST_ENTRIES = load_manifest("data/manifest.yaml")


def _processed(name):
    """Processed files of dataset `name`, each with its sidecar <file>.json (the sha256 the
    loaders check): a deleted sidecar reruns the preprocessing, as a deleted file does."""
    return [f"data/processed/{out}{sidecar}" for out in OUTPUTS[name] for sidecar in ("", ".json")]


PROCESSED = {
    "adult": "data/processed/adult.csv",
    "adult_domain": "data/processed/adult_domain.json",
    "bikes": "data/processed/bikes.csv",
    "mnist": "data/processed/mnist.npz",
    "lcl_matrix": "data/processed/lcl_daily_kwh.parquet",
    "lcl_daily": "data/processed/lcl_daily.csv",
    "near_matrix": "data/processed/near_daily_kwh.parquet",
    "near_daily": "data/processed/near_daily.csv",
}
DATA_AVAILABLE = {
    name: all(
        (not MANIFEST_ENTRIES[path].optional and MISSING_DATA == "fail")
        or is_available(MANIFEST_ENTRIES[path], "data/raw")
        for path in paths
    )
    for name, paths in RAW.items()
}
for _name in sorted(name for name, ok in DATA_AVAILABLE.items() if not ok):
    if MISSING_DATA == "skip" and not all(MANIFEST_ENTRIES[p].optional for p in RAW[_name]):
        print(f"data: no local raw copy of {_name} (missing_data=skip): its figures are skipped",
              file=sys.stderr)
PROCESSED_DEFAULT = [
    out for name in sorted(RAW) if DATA_AVAILABLE[name] for out in _processed(name)
]


localrules:
    fetch_raw,


rule fetch_raw:
    """Copy from the local mirror or download, verify sha256, rename atomically."""
    output:
        "data/raw/{path}",
    wildcard_constraints:
        path="|".join(re.escape(p) for p in sorted(MANIFEST_ENTRIES)),
    log:
        "logs/data/fetch_raw_{path}.log",  # logs/data/<rule>[_<wildcards>]: pipeline.post.log_audit
    benchmark:
        bench_path("data", "fetch_raw", "path")
    priority: lambda w: LONG_JOBS_FIRST if w.path.startswith("mnist/") else 0
    shell:
        PYTHON_M + " experiments.data.fetch --raw-dir data/raw {wildcards.path:q} > {log:q} 2>&1"


for _name in sorted(RAW):

    rule:
        name:
            f"preprocess_{_name}"
        input:
            raw=[f"data/raw/{p}" for p in RAW[_name]],
            code=code_inputs("experiments.data.preprocess"),
        output:
            _processed(_name),
        params:
            dataset=_name,
        threads: 1
        priority: LONG_JOBS_FIRST if _name == "mnist" else 0
        resources:
            runtime=10,
            mem_mb=4000,
        log:
            f"logs/data/preprocess_{_name}.log",
        benchmark:
            bench_path("data", f"preprocess_{_name}")
        shell:
            PYTHON_M + " experiments.data.preprocess dataset={params.dataset}"
            " raw_dir=data/raw out_dir=data/processed > {log} 2>&1"
