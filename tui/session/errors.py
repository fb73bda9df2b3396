"""The documented errors of the session engine; the CLI turns each into one clear line."""

from __future__ import annotations


class SessionError(Exception):
    """Base class: a session file cannot be used as asked."""


class SessionFormatError(SessionError):
    """The file is not a pi session (no valid header), or cannot be read as text."""


class SessionLockedError(SessionError):
    """Another process holds the write lock on this session file."""


class ReadOnlySessionError(SessionError):
    """A write was attempted on a session opened read-only."""


class EntryNotFoundError(SessionError, KeyError):
    """An entry id is not in the session."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])


class SessionAccessError(SessionError):
    """The operating system refused to read or write the session file (permissions, a full disk, ...)."""


class SessionWriteError(SessionError):
    """An append did not reach the file; the store refuses further appends when the file may be damaged."""


class SessionReplacedError(SessionWriteError):
    """Another program replaced the session file (a new file at its path) while kompakt was writing it."""


class SessionVersionError(SessionFormatError):
    """The header names a session format version kompakt does not know."""
