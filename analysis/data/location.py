"""Where one study's results live: a local directory or an object-store URI, read in place.

Small files (``study.json``, ``failed/*.json``, listings) go through pyarrow's filesystems; Parquet and the
Delta table go through polars and ``deltalake``, which reach object storage with :meth:`Location.options`
(credentials and endpoint from the usual ``AWS_*`` environment variables, as for pyarrow). Nothing is
downloaded first.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.fs as pafs


def _env_options() -> dict[str, str]:
    """Options for polars' and deltalake's object-store clients that pyarrow takes from the environment itself:
    a plain-HTTP endpoint (``AWS_ENDPOINT_URL=http://...``, e.g. a local S3 stand-in) must be allowed."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or ""
    return {"allow_http": "true"} if endpoint.startswith("http://") else {}


@dataclass(frozen=True)
class Location:
    """A study directory: ``uri`` is an absolute local path or a URI (``s3://bucket/prefix/study``)."""

    uri: str
    storage_options: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def of(cls, where: str | Path | Location) -> Location:
        """A Location from a path, a URI or a Location (returned as is)."""
        if isinstance(where, Location):
            return where
        text = str(where)
        if "://" in text and not text.startswith("file://"):
            return cls(text.rstrip("/"))
        return cls(str(Path(text.removeprefix("file://")).expanduser().resolve()))

    @property
    def is_local(self) -> bool:
        return "://" not in self.uri

    @property
    def name(self) -> str:
        """The last part of the path (the study directory's name)."""
        return self.uri.rstrip("/").rsplit("/", 1)[-1]

    def join(self, *parts: str) -> str:
        """A path or URI under the study directory."""
        return "/".join([self.uri, *parts])

    def options(self) -> dict[str, str]:
        """Storage options for polars and deltalake (empty for local paths)."""
        return {} if self.is_local else {**_env_options(), **self.storage_options}

    @functools.cached_property
    def _fs(self) -> tuple[pafs.FileSystem, str]:
        if self.is_local:
            return pafs.LocalFileSystem(), self.uri
        fs, root = pafs.FileSystem.from_uri(self.uri)
        return fs, root.rstrip("/")

    def _inner(self, relative: str) -> str:
        return f"{self._fs[1]}/{relative}" if relative else self._fs[1]

    def list_files(self, sub: str, suffix: str) -> list[str]:
        """The files ``<sub>/*<suffix>`` (not temporary ones), as paths or URIs, sorted. One listing request."""
        fs, _ = self._fs
        infos = fs.get_file_info(pafs.FileSelector(self._inner(sub), allow_not_found=True))
        names = sorted(i.base_name for i in infos if i.type == pafs.FileType.File
                       and i.base_name.endswith(suffix) and ".tmp" not in i.base_name
                       and not i.base_name.startswith("."))
        return [self.join(sub, n) for n in names]

    def list_dirs(self, sub: str) -> list[str]:
        """The names of the directories in ``<sub>/``, sorted."""
        fs, _ = self._fs
        infos = fs.get_file_info(pafs.FileSelector(self._inner(sub), allow_not_found=True))
        return sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)

    def read_bytes(self, relative: str) -> bytes | None:
        """A small file's contents, or None when it does not exist."""
        fs, _ = self._fs
        try:
            with fs.open_input_stream(self._inner(relative)) as stream:
                data: bytes = stream.read()  # pyarrow has no type information: its read() is Any here
                return data
        except FileNotFoundError:
            return None
        except OSError as error:  # pyarrow's S3 client says "Path does not exist" as a plain OSError
            if "does not exist" in str(error) or "NoSuchKey" in str(error):
                return None
            raise

    def exists(self, relative: str) -> bool:
        """Whether a file or directory exists under the study directory."""
        fs, _ = self._fs
        found: bool = fs.get_file_info(self._inner(relative)).type != pafs.FileType.NotFound
        return found

    def delete(self, path: str) -> None:
        """Delete a file this Location listed (gone already: nothing to do). Only the driver's fold deletes."""
        fs, root = self._fs
        try:
            fs.delete_file(root + path[len(self.uri):])
        except FileNotFoundError:
            pass

    def open_input_file(self, path: str) -> pafs.NativeFile:
        """A random-access handle on a file this Location listed (a path or URI from :meth:`list_files`)."""
        fs, root = self._fs
        return fs.open_input_file(root + path[len(self.uri):])


def key_of(path: str) -> str:
    """The trial key of ``.../<trial_key>.parquet``."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0]
