"""Typed errors. Raised inside, translated only at the edges (CLI exit codes, HTTP statuses, TUI notices)."""

from __future__ import annotations


class ApplianceError(Exception):
    """Base of every error the appliance raises on purpose."""

    title = "Appliance error"


class ConfigError(ApplianceError):
    """The configuration file, an environment override or a command-line option is invalid."""

    title = "Invalid configuration"


class ModelFileError(ApplianceError):
    """A model file is missing, unreadable or does not match its pinned sha256."""

    title = "Model file problem"


class ModelFetchError(ApplianceError):
    """A model could not be downloaded or assembled from its registry packages."""

    title = "Model fetch failed"


class ModelLoadError(ApplianceError):
    """A verified model file could not be loaded (no chat template, wrong format, out of memory)."""

    title = "Model load failed"


class InputError(ApplianceError):
    """A customer message or request field is unacceptable (empty, too long, wrong role)."""

    title = "Invalid input"

    def __init__(self, message: str, *, field: str = "text", limit: int | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.limit = limit


class MessageTooLong(InputError):
    """A message is longer than the configured limit."""

    title = "Message too long"


class SessionNotFound(ApplianceError):
    """No session has the given id."""

    title = "Unknown session"


class StoreError(ApplianceError):
    """The database could not be opened, migrated or written."""

    title = "Storage problem"


class DocumentError(ApplianceError):
    """A knowledge document cannot be taken in (unreadable, encrypted, binary, empty, too large, an
    unknown format); the message names the file, and nothing was changed."""

    title = "Unusable document"


class DocumentNotFound(ApplianceError):
    """No knowledge document has the given name."""

    title = "Unknown document"


class GenerationError(ApplianceError):
    """The model failed while generating an answer."""

    title = "Generation failed"


class Cancelled(ApplianceError):
    """Generation stopped because the caller asked (a client went away, a timeout passed)."""

    title = "Cancelled"


class Busy(ApplianceError):
    """A queue is full; the caller may retry after ``retry_after`` seconds."""

    title = "Busy"

    def __init__(self, message: str, *, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ShuttingDown(ApplianceError):
    """The appliance is stopping and takes no new turns."""

    title = "Shutting down"


class TurnConflict(StoreError):
    """A turn was to be stored at an index another writer took first; nothing was stored.

    The store assigns turn indices; a writer that read the transcript before another turn was
    added finds out here instead of attaching its facts to the wrong turn.
    """

    title = "Conflicting turn"


class FloorConflict(ApplianceError):
    """A change of a conversation's state that its current state does not allow: another operator
    holds it, it is closed, or there is nothing to hand back."""

    title = "Conflict"


class PersonHolds(FloorConflict):
    """A person is asked for or holds the conversation, or it is closed: the model does not answer it."""

    @classmethod
    def of(cls, state: str) -> PersonHolds:
        """The refusal for a conversation in floor ``state``."""
        return cls(f"the conversation is {state}: the model does not answer it")
