"""What every package shares and nothing of the project's own: :mod:`core.errors` (the one base of this project's
errors, and one formatter that turns an exception into one line) and :mod:`core.registry` (the one name -> object
registry: mixers, tasks, model families, studies, report sections). Imports no other package of the project, so
``trainables``, ``search_spaces``, ``study`` and ``analysis`` all may import it.
"""
