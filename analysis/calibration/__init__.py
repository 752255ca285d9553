"""The verdicts' stated confidence, held to its word: studies of known truth replayed through the project's own
statistics (:mod:`~analysis.calibration.world`, :mod:`~analysis.calibration.findings`,
:mod:`~analysis.calibration.time_findings`, :mod:`~analysis.calibration.simulate`), the intervals on held-out seeds of
the authors' release (:mod:`~analysis.calibration.holdout`), and noise models wrong in known ways that these must
catch (:mod:`~analysis.calibration.controls`). Proof, not runtime: it imports :mod:`analysis.stats`, which never
imports it (tests/test_layout.py); the tests and bench/ run it.
"""
