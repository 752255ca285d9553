"""Where a study's results live (storage: trial files, study.json, failure records, local or object storage) and
the driver's fold of trial files into the study's Delta table (table)."""
