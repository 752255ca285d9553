"""Your own code as plugins: modules that register mixers, tasks or model families, imported the same way in the
driver and in every Ray worker.

A plugin is a module whose import registers what it defines (``@MIXERS.register``, a task registry's ``register``,
:func:`trainables.catalog.register_family`). Three ways in, one mechanism:

* an installed package's entry point in the group ``attention_studies.plugins`` (``[project.entry-points.
  "attention_studies.plugins"] my_mixers = "my_pkg.mixers"``): loaded whenever a registry is first used; this
  project's own model families come in this way too (its pyproject.toml);
* a study's ``plugins`` (``Study(..., plugins=("my_pkg.mixers",))``): loaded with the study;
* a study file (``study run path/to/file.py:NAME``): the file itself, run with its folder on ``sys.path`` as a script
  is, and every module of that folder it imports.

Each loaded plugin is recorded (:class:`Plugin`: where it came from, its distribution's version, a hash of its
source, what it registered). The hash the driver records is taken when it reads the record (:func:`record`,
:func:`user_plugins`, :func:`runtime_env`: at a study's launch), not at the module's first import: a plugin edited in
a notebook after its import is recorded as the code the workers import at launch, and a worker whose copy differs
refuses it (:func:`activate`). The driver ships its record to the workers (:func:`runtime_env`: the code through Ray's
``py_modules``, the record in an environment variable, a worker setup hook that imports it), and a worker imports
exactly those modules and checks each hash against the driver's (:func:`activate`) before a trial runs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from core import errors
from core.errors import OneLineError
from core.registry import REGISTRATIONS

GROUP = "attention_studies.plugins"
#: The environment variable that carries the driver's plugin record to the workers.
ENVIRONMENT = "ATTENTION_STUDIES_PLUGINS"
SETUP_HOOK = "trainables.plugins.activate_from_environment"
STUDY_FILE_PREFIX = "_study_file_"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = ("core", "trainables", "study", "search_spaces", "analysis")


class PluginError(OneLineError, ValueError):
    """A plugin that cannot be imported, or that differs between the driver and a worker; the message names it."""


@dataclasses.dataclass(frozen=True)
class Plugin:
    """One imported plugin module.

    Attributes:
        module: its import name (a study file: ``_study_file_<stem>``).
        origin: ``entry point``, ``study``, ``study file`` or ``study file's folder``.
        path: its source: a ``.py`` file, or a package's folder.
        sha256: of its source (a package: every ``.py`` file under its folder, by relative path).
        version: the version of the installed distribution it belongs to (None: not installed).
        registered: what it registered, e.g. ``mixer 'relu_attn'``: every registration crediting it or one of its
            submodules (core.registry.Registration: a class's own module, or an object among its globals).
        ship: what travels to remote workers through Ray's ``py_modules`` (its top-level module or package);
            None for this project's own code, which every node has installed.
    """

    module: str
    origin: str
    path: str
    sha256: str
    version: str | None = None
    registered: tuple[str, ...] = ()
    ship: str | None = None

    @property
    def project(self) -> bool:
        """Part of attention-studies itself (its families' entry points): covered by the rows' code_version."""
        return self.module.split(".")[0] in PROJECT_PACKAGES

    @property
    def label(self) -> str:
        """``my_pkg.mixers 0.1.0 sha256:1a2b3c4d5e6f`` (a study file by its file name)."""
        name = Path(self.path).name if self.origin == "study file" else self.module
        return " ".join(x for x in (name, self.version, f"sha256:{self.sha256[:12]}") if x)

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "registered": list(self.registered)}


_LOADED: dict[str, Plugin] = {}


def loaded() -> list[Plugin]:
    """Every plugin this process has imported, in the order it imported them, each hashed now (its source as it is
    on disk at this moment: what a study launched now ships to its workers)."""
    return [dataclasses.replace(p, sha256=_hash_now(p)) for p in _LOADED.values()]


def _hash_now(plugin: Plugin) -> str:
    """The plugin's source hashed now; its import-time hash when the source is gone (nothing newer to record)."""
    try:
        return _hash(Path(plugin.path))
    except OSError:
        return plugin.sha256


def user_plugins() -> list[Plugin]:
    """The loaded plugins that are not part of this project, hashed now: what rows and study.json record."""
    return [p for p in loaded() if not p.project]


def rows_label(plugins: list[dict[str, Any]]) -> str | None:
    """The ``plugins`` column of a trial's rows from the driver's :func:`record`: every user plugin's label,
    ``; ``-separated (None: the study ran none, and its rows have no such column)."""
    labels = [p.label for p in (Plugin(**{**d, "registered": tuple(d["registered"])}) for d in plugins)
              if not p.project]
    return "; ".join(labels) if labels else None


@functools.cache
def load_installed() -> tuple[Plugin, ...]:
    """Import every installed entry point of :data:`GROUP` (once per process); the project's families among them."""
    found = []
    for entry in sorted(metadata.entry_points(group=GROUP), key=lambda e: (e.dist.name if e.dist else "", e.name)):
        version = entry.dist.version if entry.dist else None
        found.append(load_module(entry.value.split(":")[0], origin="entry point", version=version))
    return tuple(found)


def load_module(name: str, *, origin: str = "study", version: str | None = None) -> Plugin:
    """Import the module ``name`` as a plugin (again: the recorded one); PluginError naming it if the import fails."""
    if name in _LOADED:
        return _LOADED[name]
    try:
        module = importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - any failure of the user's module becomes one line naming it
        raise PluginError(f"invalid plugin module {name!r} ({origin}): {errors.one_line(error, at=True)}") from None
    return _record(module, origin, version=version or _distribution_version(name))


def load_study_file(path: Path) -> Any:
    """Run a study file as the module ``_study_file_<stem>``, with its folder on ``sys.path`` (as running a script
    puts it): the file and every module of that folder it imports become plugins. Returns the module.

    SyntaxErrors and the file's own exceptions propagate (search_spaces names the line).
    """
    path = path.resolve()
    name = STUDY_FILE_PREFIX + path.stem
    if name in sys.modules and name in _LOADED and _LOADED[name].path == str(path):
        return sys.modules[name]
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    modules_before = set(sys.modules)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a module up by name, as for any imported module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    for sibling in sorted(set(sys.modules) - modules_before - {name}):
        source = getattr(sys.modules[sibling], "__file__", None)  # some modules carry a made-up relative one
        if (isinstance(source, str) and Path(source).is_absolute() and Path(source).is_relative_to(path.parent)
                and sibling not in _LOADED):
            _record(sys.modules[sibling], "study file's folder")
    _record(module, "study file")
    return module


def _record(module: Any, origin: str, *, version: str | None = None) -> Plugin:
    """Record an imported module as a plugin: its source, hash, and what it registered (:func:`_registered`)."""
    name = module.__name__
    source = _source(module)
    plugin = Plugin(module=name, origin=origin, path=str(source), sha256=_hash(source), version=version,
                    registered=_registered(name), ship=_shipped_path(name, module))
    _LOADED[name] = plugin
    if not plugin.project:
        errors.YOUR_PACKAGES.add(name.split(".")[0])  # its frames are your code even where it is installed
    return plugin


def _registered(name: str) -> tuple[str, ...]:
    """What module ``name`` (with its submodules) registered, whenever it was imported: the registrations that
    credit it (a class or function defined there, or an explicit ``module=``), and those of objects without a module
    of their own that one of its globals holds (``FAMILY = register_family(Family(...))``). No stack walking."""
    mine = [m for key, m in list(sys.modules.items()) if (key == name or key.startswith(f"{name}.")) and m is not None]
    held = {id(value) for m in mine for value in list(vars(m).values())}
    return tuple(f"{r.kind} {r.name!r}" for r in REGISTRATIONS
                 if (r.module is not None and (r.module == name or r.module.startswith(f"{name}.")))
                 or (r.module is None and id(r.obj) in held))


def _source(module: Any) -> Path:
    """A module's source: its ``.py`` file, or a package's folder."""
    locations = getattr(module, "__path__", None)
    if locations:
        return Path(next(iter(locations))).resolve()
    if not getattr(module, "__file__", None):
        raise PluginError(f"invalid plugin module {module.__name__!r}: it has no source file (a namespace package "
                          "without a folder, or a built-in); allowed: a module or package with Python files")
    return Path(module.__file__).resolve()


def _hash(source: Path) -> str:
    """sha256 of a file, or of a folder's ``.py`` files (each relative path and content, in sorted order)."""
    digest = hashlib.sha256()
    files = sorted(source.rglob("*.py")) if source.is_dir() else [source]
    for file in files:
        if source.is_dir():
            digest.update(str(file.relative_to(source)).encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


def _distribution_version(module: str) -> str | None:
    """The version of the installed distribution that provides the top-level package of ``module``."""
    top = module.split(".")[0]
    for dist in _distributions().get(top, []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _shipped_path(name: str, module: Any) -> str | None:
    """The top-level module or package that Ray's ``py_modules`` ships for plugin ``name`` (None: this project's
    own code, installed on every node). A study file ships itself: a worker imports it by its file name."""
    top = name.split(".")[0]
    if top in PROJECT_PACKAGES:
        return None
    if name.startswith(STUDY_FILE_PREFIX):
        return str(Path(module.__file__).resolve())
    spec = importlib.util.find_spec(top)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return str(Path(next(iter(spec.submodule_search_locations))).resolve())
    return str(Path(spec.origin).resolve()) if spec.origin else None


def record() -> list[dict[str, Any]]:
    """The JSON of every loaded plugin, in load order: what :func:`runtime_env` ships to the workers."""
    return [p.to_json() for p in loaded()]


def runtime_env() -> dict[str, Any] | None:
    """Ray's ``runtime_env`` that makes every worker import what this process imported: the user plugins' code
    (``py_modules``), the record (an environment variable) and the setup hook that imports them at worker start.
    None when there are no plugins of yours: this project's own are installed on every node, and each trial imports
    and checks them itself (:func:`ensure_active`), so Ray's workers start as they always did."""
    mine = user_plugins()
    if not mine:
        return None
    env: dict[str, Any] = {"env_vars": {ENVIRONMENT: json.dumps([p.to_json() for p in mine])},
                           "worker_process_setup_hook": SETUP_HOOK}
    shipped = sorted({p.ship for p in mine if p.ship})
    if shipped:
        env["py_modules"] = shipped
    return env


_ACTIVATION_ERROR: list[str] = []


def activate_from_environment() -> None:
    """Ray's worker setup hook: import the driver's plugins of yours (:func:`activate`), before anything of the job
    runs in this worker (the project's own are imported by the trial, :func:`ensure_active`). A failure is kept, not
    raised here (a worker that fails to start would be retried as an infrastructure fault): :func:`ensure_active`
    raises it in the trial, where it fails that trial once with its message."""
    text = os.environ.get(ENVIRONMENT)
    if not text:
        return
    try:
        activate(json.loads(text))
    except PluginError as error:
        _ACTIVATION_ERROR.append(str(error))


def ensure_active(plugins: list[dict[str, Any]]) -> None:
    """In a trial: raise the setup hook's failure, else import (or, when the hook did, check) the driver's plugins
    ``plugins`` (:func:`record`), which the trial also gets as a parameter: a Ray that was started without this
    project's runtime_env (a notebook's own ``ray.init()``) still imports them, from the paths this node has."""
    if _ACTIVATION_ERROR:
        raise PluginError(_ACTIVATION_ERROR[0])
    activate(plugins)


def activate(plugins: list[dict[str, Any]]) -> None:
    """Import the driver's plugins here, in the driver's order, and check that each is the driver's code (its
    hash); PluginError naming the module, its origin and both hashes otherwise."""
    for spec in plugins:
        name = spec["module"]
        here = _LOADED.get(name)
        if here is None:
            if spec["origin"] == "study file":
                here = _record(_load_shipped_study_file(spec), spec["origin"])
            else:
                here = load_module(name, origin=spec["origin"], version=spec.get("version"))
        if here.sha256 != spec["sha256"]:
            raise PluginError(f"plugin {name!r} ({spec['origin']}) differs here from the driver's: sha256 "
                              f"{here.sha256[:12]} at {here.path}, driver {spec['sha256'][:12]} at {spec['path']}; "
                              "allowed: the same code on every node (install the same version, or let the study "
                              "ship it: docs/extending.md)")


def _load_shipped_study_file(spec: dict[str, Any]) -> Any:
    """A study file on a worker: the driver's path if this node has it, else the copy Ray's ``py_modules`` shipped
    (importable by the file's name), run as the same module ``_study_file_<stem>`` as in the driver."""
    name, path = spec["module"], Path(spec["path"])
    if name in sys.modules:
        return sys.modules[name]
    stem = name.removeprefix(STUDY_FILE_PREFIX)
    shipped = importlib.util.find_spec(stem)
    source = Path(shipped.origin) if shipped is not None and shipped.origin else path
    if not source.is_file():
        raise PluginError(f"study file {path} is neither on this node nor shipped here as module {stem!r}")
    module_spec = importlib.util.spec_from_file_location(name, source)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module

