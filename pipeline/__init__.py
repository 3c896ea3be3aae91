"""The pipeline's own code: what the Snakefile, the Makefile and CI run, apart from what
experiment jobs import (experiments/). It may import experiments; experiments never import it
(tests/pipeline/test_import_graph.py). It is not named ``workflow``: in the Snakefile that name
is Snakemake's own object, which an ``import workflow.x`` in a rules file would rebind.

Grouped by when the code runs; a part imports only itself and the parts listed before it:

parse/  read while Snakemake parses the Snakefile and the rules files, so paid by every run,
        dry run and report: rule inputs, paths, configs and the checks that stop a parse.
run/    while a build runs: the lock removed before Snakemake starts, the Snakemake process's
        hooks (job echo, scheduler timer, onstart and onsuccess handlers) and the warm
        launcher every smoke job starts through.
post/   on a finished build: its cost, its logs, the docs' generated blocks, the determinism
        and rerun checks.

Each part's ``__init__`` names its modules and what each is for.
"""
