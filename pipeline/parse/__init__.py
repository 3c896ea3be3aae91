"""Parse time: what the Snakefile and the rules files call while Snakemake reads them.

captions     figure captions, docs/captions.yaml rendered for the report
codedeps     the code and config files a script reads: a rule's code inputs
configs      experiment configs as rules read them; the digest that reruns a table
local_gpus   the GPUs this host shows, which decides how many GPU jobs run at once
parse_cache  values computed from file contents alone, kept between Snakemake runs
paths        where rules write: logs, benchmark records, figures
python_m     how a rule starts ``python -m``: warm, its CPU time recorded beside its log
run_config   the ``--config`` keys checked before any rule is read, and the scale
table_check  tables whose sidecar differs from what their rule would make, refused
"""
