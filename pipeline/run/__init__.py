"""Run time: while a build runs, in the Snakemake process or as the start of each job.

echo             Snakemake's job echo in lines that fit a terminal
orphan_sidecars  sidecars whose file is gone, removed when a run starts (``onstart``)
report_hint      where the report is, printed when a run succeeds (``onsuccess``)
scheduler_timer  one pending scheduler re-check, none that keeps a finished run alive
snakemake_lock   the lock of a killed run removed before Snakemake starts (``make``)
warm             ``python -m pipeline.run.warm MODULE``: a job forked warm, its CPU time recorded
warm_server      the server that warm jobs are forked from
"""
