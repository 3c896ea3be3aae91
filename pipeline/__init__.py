"""The pipeline's own code: what the Snakefile, the Makefile and CI run (config checks, rule
inputs and paths, captions, locks, the determinism check), apart from what experiment jobs
import (experiments/). It may import experiments; experiments never import it
(tests/workflow/test_import_graph.py)."""
