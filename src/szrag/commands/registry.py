"""The command registry: built-ins, installed plugins and commands a host adds at run time.

Plugins are packages that declare entry points in the ``szrag.commands`` group. An entry point
may load to a ``CommandSpec``, an iterable of them, or a function ``register(registry)``::

    [project.entry-points."szrag.commands"]
    deploy = "mypackage.commands:register"

A plugin that fails to load is logged and listed in ``registry.plugin_errors``; it never
stops the others.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from szrag.commands.model import SLASH_PREFIX, CommandSpec, Handler

log = logging.getLogger("szrag.commands")

ENTRY_POINT_GROUP = "szrag.commands"


@dataclass(frozen=True)
class PluginError:
    """An entry point that could not be loaded or registered."""

    entry_point: str
    message: str


def normalise_command_id(value: str) -> str:
    """``/sz-hash``, ``sz-hash``, ``/hash`` and ``HASH`` all name the command ``hash``."""
    value = value.strip().lower()
    value = value.removeprefix("/")
    return value.removeprefix(SLASH_PREFIX.removeprefix("/"))


class CommandRegistry:
    """Commands by id, each with a unique slash name."""

    def __init__(self, specs: Iterable[CommandSpec] = ()) -> None:
        self._specs: dict[str, CommandSpec] = {}
        self._lock = threading.Lock()
        self.plugin_errors: list[PluginError] = []
        for spec in specs:
            self.register(spec)

    def register(self, spec: CommandSpec, *, replace: bool = False) -> CommandSpec:
        """Add a command; an id or slash name already taken is an error unless ``replace``."""
        with self._lock:
            clash = self._specs.get(spec.id)
            if clash is None:
                clash = next((s for s in self._specs.values() if s.name == spec.name), None)
            if clash is not None and not replace:
                raise ValueError(f"command {spec.id!r} ({spec.name}) is already registered")
            if clash is not None:
                self._specs.pop(clash.id, None)
            self._specs[spec.id] = spec
        return spec

    def command(
        self,
        id: str,
        description: str,
        *,
        category: str = "general",
        usage: str = "",
        sensitive: bool = False,
        timeout: float | None = None,
    ) -> Callable[[Handler], Handler]:
        """Decorator that registers the function below it as the handler of ``id``."""

        def decorate(handler: Handler) -> Handler:
            self.register(
                CommandSpec(
                    id=id,
                    description=description,
                    handler=handler,
                    category=category,
                    usage=usage,
                    sensitive=sensitive,
                    timeout=timeout,
                )
            )
            return handler

        return decorate

    def unregister(self, command_id: str) -> CommandSpec | None:
        """Remove a command; returns what was removed."""
        with self._lock:
            return self._specs.pop(normalise_command_id(command_id), None)

    def get(self, command_id: str) -> CommandSpec | None:
        """A command by id or slash name, or None."""
        key = normalise_command_id(command_id)
        spec = self._specs.get(key)
        if spec is not None:
            return spec
        wanted = command_id.strip().lower()
        return next((s for s in self._specs.values() if s.name.lower() == wanted), None)

    def suggestions(self, command_id: str, limit: int = 3) -> list[str]:
        """Registered ids that look like ``command_id``."""
        key = normalise_command_id(command_id)
        return difflib.get_close_matches(key, sorted(self._specs), n=limit, cutoff=0.6)

    def ids(self) -> list[str]:
        """Every command id, sorted."""
        return sorted(self._specs)

    def specs(self) -> list[CommandSpec]:
        """Every command, sorted by id."""
        return [self._specs[key] for key in self.ids()]

    def __iter__(self) -> Iterator[CommandSpec]:
        return iter(self.specs())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, command_id: object) -> bool:
        return isinstance(command_id, str) and self.get(command_id) is not None

    def load_plugins(self, group: str = ENTRY_POINT_GROUP) -> list[PluginError]:
        """Register the commands of every installed plugin; returns the failures."""
        from importlib import metadata  # about 10 ms: only a registry that takes plugins reads it

        errors: list[PluginError] = []
        for entry_point in sorted(metadata.entry_points(group=group), key=lambda ep: ep.name):
            label = f"{entry_point.name} = {entry_point.value}"
            try:
                self._register_plugin(entry_point.load())
            except Exception as error:
                log.warning("command plugin %s failed: %s", label, error)
                errors.append(PluginError(label, f"{type(error).__name__}: {error}"))
        self.plugin_errors.extend(errors)
        return errors

    def _register_plugin(self, loaded: Any) -> None:
        if isinstance(loaded, CommandSpec):
            self.register(loaded)
        elif callable(loaded):
            loaded(self)
        elif isinstance(loaded, Iterable):
            specs = list(loaded)
            bad = [item for item in specs if not isinstance(item, CommandSpec)]
            if bad:
                raise TypeError(f"expected CommandSpec items, got {type(bad[0]).__name__}")
            for spec in specs:
                self.register(spec)
        else:
            raise TypeError(
                f"entry point must give a CommandSpec, an iterable of them or a register "
                f"function, not {type(loaded).__name__}"
            )


def builtin_registry() -> CommandRegistry:
    """A fresh registry holding the built-in commands only."""
    from szrag.commands.builtins import register_builtins

    registry = CommandRegistry()
    register_builtins(registry)
    return registry


_default: CommandRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> CommandRegistry:
    """The process-wide registry: built-ins plus installed plugins, created on first use."""
    global _default
    with _default_lock:
        if _default is None:
            registry = builtin_registry()
            registry.load_plugins()
            _default = registry
        return _default


def get_command(command_id: str) -> CommandSpec | None:
    """A command of the default registry by id or slash name."""
    return default_registry().get(command_id)
