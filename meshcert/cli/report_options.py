"""The report-file options of every command that writes reports, from the registry's rows.

A command declares one parameter, `outputs: ReportOutputs = NO_OUTPUTS`, and is decorated with
`@report_outputs`: the decorator shows typer (which reads `inspect.signature`) one
`--<format> PATH` option per row of meshcert/reports/registry.py that has a `ReportOption`, in
the registry's order, at the place of that parameter, and calls the command with the paths
given as one mapping, format -> path (the formats not asked for are absent), ready for
`write_reports(report, **outputs)`. The options are read from the registry when typer builds
the command, so a format is one row there and no edit here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from meshcert.reports.registry import NO_OUTPUTS, ReportOutputs, report_options

__all__ = ["NO_OUTPUTS", "ReportOutputs", "report_outputs"]

PARAMETER = "outputs"


def _option_parameters(kind: Any) -> list[inspect.Parameter]:
    """One parameter per format with an option (`--html PATH` as `html: str | None`), of the
    kind of the parameter they replace."""
    return [inspect.Parameter(fmt, kind, default=None,
                              annotation=Annotated[str | None,
                                                   typer.Option(option.flag, help=option.help)])
            for fmt, option in report_options().items()]


class _ReportWriter:
    """A command whose `outputs` parameter typer sees as the registry's options."""

    def __init__(self, command: Callable[..., None]) -> None:
        self.__wrapped__ = command
        self.__name__ = command.__name__
        self.__qualname__ = command.__qualname__
        self.__module__ = command.__module__
        self.__doc__ = command.__doc__
        names = inspect.signature(command).parameters
        if PARAMETER not in names:
            raise TypeError(f"{command.__qualname__} has no {PARAMETER!r} parameter")

    @property
    def __signature__(self) -> inspect.Signature:
        own = inspect.signature(self.__wrapped__, eval_str=True)
        parameters: list[inspect.Parameter] = []
        for parameter in own.parameters.values():
            if parameter.name != PARAMETER:
                parameters.append(parameter)
                continue
            added = _option_parameters(parameter.kind)
            clash = {p.name for p in added} & set(own.parameters)
            if clash:
                raise TypeError(f"{self.__qualname__}: a parameter is named as the format(s) "
                                f"{', '.join(sorted(clash))}")
            parameters += added
        return own.replace(parameters=parameters)

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        signature = self.__signature__
        return {**{p.name: p.annotation for p in signature.parameters.values()},
                "return": signature.return_annotation}

    def __call__(self, **values: Any) -> None:
        formats = report_options()
        outputs = {fmt: values.pop(fmt) for fmt in formats if values.get(fmt) is not None}
        for fmt in formats:
            values.pop(fmt, None)
        self.__wrapped__(**values, **{PARAMETER: outputs})


def report_outputs(command: Callable[..., None]) -> Callable[..., None]:
    """Give `command` the report-file options of the registry in place of its `outputs`
    parameter (see the module's docstring)."""
    return _ReportWriter(command)
