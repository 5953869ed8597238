"""Coerce a command's parameters without pydantic when there is nothing to coerce.

typer (0.2x) turns each parameter's value into its annotated type with a
pydantic ``TypeAdapter``, built for the parameter the first time a value is
processed, absent values included. For a command such as ``phasegate
status`` that means importing pydantic's validation machinery and building
four adapters (``--color``'s default, the item name, ``--workflow``,
``--repo``): about 45 ms of a command that otherwise takes less than that.

Two cases need no adapter at all, and are answered here with exactly what
typer's adapter returns:

- an absent value (``None``): typer's own ``RuntimeParam.coerce`` returns
  ``None`` (or ``()`` for a multi-value parameter) without using the adapter;
- a ``str`` value of a parameter annotated ``str`` with no custom parser:
  typer's adapter returns the same string.

Every other value is handed to the adapter typer would have used, built then.
With a typer that coerces otherwise (no ``typer._coercion``), nothing is
changed. The CLI installs this once, before it parses the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
except ImportError:  # another typer: it coerces its own way
    RuntimeParam = None  # type: ignore[assignment,misc]


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _Deferred(RuntimeParam):
        """A parameter's coercion, its adapter built only for a value that needs it."""

        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            found = self.descriptor
            if (
                found.annotation is str
                and type(value) is str
                and found.parameter_info.parser is None
                and found.file_annotation is None
            ):
                return value
            real = build_runtime_param(found)
            param._runtime_param = real  # the next value goes straight to it
            return real._coerce_value(value, param=param, ctx=ctx)


def defer_coercion() -> None:
    """Make every typer parameter (the help options click adds at parse time included)
    build typer's adapter only when a value needs one. Idempotent."""
    if RuntimeParam is None:
        return
    try:
        from typer.core import _TyperParameter
    except ImportError:
        return
    if getattr(_TyperParameter.get_runtime_param, "deferred", False):
        return

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            found = self.type_descriptor
            self._runtime_param = _Deferred(
                parameter_info=found.parameter_info, annotation=found.annotation, descriptor=found
            )
        return self._runtime_param

    get_runtime_param.deferred = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
