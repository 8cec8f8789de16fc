"""What every command shares: the settings from ``--config``/``--set``, and the error edge.

The appliance's typed errors become :class:`Failure`, a ``click.ClickException``: ``error: <message>``
on stderr and exit code 2, whichever command raised them (the lab's commands too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import IO, Any

import click

from appliance.config import Settings, load_settings
from appliance.errors import ApplianceError

EXIT_USAGE = 2


class Failure(click.ClickException):
    """An error at the command line: its message on stderr, exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def edge(func: Callable[..., Any]) -> Callable[..., Any]:
    """Translate the appliance's typed errors into a :class:`Failure`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ApplianceError as exc:
            raise Failure(str(exc)) from exc

    return wrapper


class Context:
    """The group's options, and the settings they select, loaded on first use."""

    def __init__(self, config: str | None, overrides: tuple[str, ...]) -> None:
        self.config = config
        self.overrides = overrides
        self.options: dict[str, object] = {}  # a command's own options, as dotted settings keys
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, overrides=self.overrides, options=self.options)
        return self._settings

    def command(self, *args: str) -> list[str]:
        """This program with the same ``--config`` and ``--set``, running ``args`` (for a child or a hint)."""
        line = ["--config", self.config] if self.config else []
        for item in self.overrides:
            line += ["--set", item]
        return [*line, *args]


pass_ctx = click.make_pass_decorator(Context)
