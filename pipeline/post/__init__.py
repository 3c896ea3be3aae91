"""After a build: commands run on a finished build (``make figures``, ``make docs``, CI).

build_cost   CPU and wall minutes per rule, from the jobs' benchmark records
determinism  two clean smoke builds must give the same bytes (``make determinism``)
doc_blocks   the docs' generated blocks, every quoted number from a build's results
log_audit    long jobs without progress lines and backend noise in the job logs
rerun_check  chosen outputs of a finished build rebuilt in a copy and compared
slurm_plan   the SLURM plan (jobs, hours per resource class) from a dry run, for the docs
"""
