"""What every package shares: :mod:`core.errors` (the one base of this project's errors, and one formatter that turns
an exception into one line), :mod:`core.registry` (the one name -> object registry: mixers, tasks, model families,
studies, report sections) and :mod:`core.probe_names` (the probe columns: the one vocabulary of what the model families
write and the findings read; torch-free). Imports no other package of the project, so
``trainables``, ``search_spaces``, ``study`` and ``analysis`` all may import it.
"""
