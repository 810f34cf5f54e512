"""Training beyond one process: torchrun data parallelism (distributed) and hyperparameter sweeps
(sweep, and sweep_report's tables of their results)."""
