"""How a study runs, in the order a run flows through it (each subpackage imports only the ones below it;
tests/test_layout.py checks it):

* ``cli/``: the `study` command, one module per subcommand;
* ``run/``: planning a study and running it on Ray (which points, checked before launch, the cluster, the Tuner
  runs, progress, one run per study);
* ``trial/``: what runs inside a Ray worker for one trial (the entry, the Tune adapter around a family's
  ``train``, where it trains, the trial's identity);
* ``tracking/``: experiment trackers fed by a trial's rows;
* ``results/``: where results live (trial files, study.json) and the fold of trial files into the study's table.
"""
