"""`puffertank build`: the image chain base -> envs -> lib, one idea per module.

debian.py    the Debian 12 base, made locally with debootstrap when no registry answers
options.py   BuildOptions: what the user asked for, validated
resolve.py   pip's settings, the CA bundle for pip, which torch (wheelhouse, index, PyPI)
plan.py      the stages, their build contexts and content hashes: plan_chain() -> [StagePlan]
buildkit.py  finding a BuildKit-capable docker client and running one build
chain.py     build_chain(): executes the plans under the machine-wide lock, reusing what matches
timings.py   what builds took, sizes, and the budgets table
cli.py       the `puffertank build` subcommand
"""
