"""Planning a study and running it on Ray: the points of a grid (points), checks before launch (preflight), the
cluster (cluster, capacity, ray_env), the Tuner runs (tuner), the whole run (runner), its progress, its lock and
Optuna's journal; re-running finished trials to check them (reproduce)."""
