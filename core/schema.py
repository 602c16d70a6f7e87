"""Typed schemas of scenario tables: which keys a runner reads and what each one holds.

A scenario file is data: before a runner sees it, every table is checked against the
runner's declared schema (declared in :mod:`hystmech.runners`). An unknown key is an
error naming the nearest valid key (a typo such as ``alfa`` never runs silently with a
default); a string or boolean where a number belongs, a fraction where a count belongs
(``n = 2.7``) or a non-finite number is an error naming the key. All errors are
:class:`~hystmech.scenario.ScenarioError` (a ValueError: the CLI exits with code 2).

Spec vocabulary (small on purpose, read by :func:`check`):

``REAL``   finite int or float (not bool)
``COUNT``  whole number >= 0 (int, or a float with no fraction such as 1e5)
``INT``    whole number of any sign
``BOOL``   true / false
``STR``    string; ``Str("a", "b")`` restricts it to those choices
``List(s, min_len=1, max_len=None)``  array whose items match s (never empty unless
           min_len=0)
``FILE_STEM``  name of a file written into --out (no path: stays inside --out)
``Table({...}, required=(...), extra=None)``  sub-table with its own keys; ``extra``
           is the spec of keys not listed (e.g. element parameters), None = refused
``MapOf(t)``   table of named sub-tables, each matching t (``[cases.free]``)
``ArrayOf(t)`` array of tables (``[[cases]]``), each matching t
``Required(s)`` a table the scenario must have
``ELEMENT`` an element table: ``type`` names a class of hystmech.components, the other
           keys must be parameters of its constructor (numbers or arrays of numbers)
"""
from __future__ import annotations

import difflib
import inspect
import math
from dataclasses import dataclass, field

from .components import get_element_class
from .runner_io import ScenarioError, nearest  # noqa: F401  (nearest: re-exported)
from .safeio import check_output_name

# keys load_scenario adds to a config (never read from the file): not checked here
INTERNAL_KEYS = ("_path",)


def _error(msg: str):
    return ScenarioError(msg)


class Spec:
    what = "a value"

    def check(self, where: str, value) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def _kind(value) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


class _Real(Spec):
    what = "a finite number"

    def check(self, where, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _error(f"{where} must be a number (got {_kind(value)})")
        if not math.isfinite(value):
            raise _error(f"{where} must be a finite number (got {value!r})")


class _Whole(Spec):
    def __init__(self, nonneg: bool):
        self.nonneg = nonneg
        self.what = "a whole number >= 0" if nonneg else "a whole number"

    def check(self, where, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _error(f"{where} must be {self.what} (got {_kind(value)})")
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise _error(f"{where} must be {self.what} (got {value!r})")
        if self.nonneg and value < 0:
            raise _error(f"{where} must be {self.what} (got {value!r})")


class _Bool(Spec):
    what = "true or false"

    def check(self, where, value):
        if not isinstance(value, bool):
            raise _error(f"{where} must be true or false (got {_kind(value)})")


class Str(Spec):
    what = "a string"

    def __init__(self, *choices: str):
        self.choices = tuple(choices)

    def check(self, where, value):
        if not isinstance(value, str):
            raise _error(f"{where} must be a string (got {_kind(value)})")
        if self.choices and value not in self.choices:
            near = difflib.get_close_matches(value, self.choices, n=1, cutoff=0.5)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise _error(f"{where} must be one of {', '.join(map(repr, self.choices))} "
                         f"(got {value!r}){hint}")


REAL = _Real()
COUNT = _Whole(nonneg=True)
INT = _Whole(nonneg=False)
BOOL = _Bool()
STR = Str()


class List(Spec):
    """An array of items matching ``item``, of min_len (default 1: an empty array is
    never what a scenario means) to max_len items."""

    def __init__(self, item: Spec, min_len: int = 1, max_len: int | None = None):
        self.item, self.min_len, self.max_len = item, min_len, max_len
        self.what = f"an array of {item.what}s"

    def check(self, where, value):
        if not isinstance(value, list):
            raise _error(f"{where} must be an array (got {_kind(value)})")
        if len(value) < self.min_len:
            raise _error(f"{where} must hold at least {self.min_len} item(s) (got {len(value)})")
        if self.max_len is not None and len(value) > self.max_len:
            raise _error(f"{where} must hold at most {self.max_len} item(s) (got {len(value)})")
        for i, v in enumerate(value):
            self.item.check(f"{where}[{i}]", v)


@dataclass
class Table(Spec):
    keys: dict = field(default_factory=dict)
    required: tuple = ()
    extra: Spec | None = None
    what: str = "a table"

    def check(self, where, value):
        if not isinstance(value, dict):
            raise _error(f"[{where}] must be a table (got {_kind(value)})")
        # unknown keys first: a typo is the likely reason a required key is missing
        for k, v in value.items():
            spec = self.keys.get(k, self.extra)
            if spec is None:
                raise _error(f"unknown key {k!r} in [{where}]{nearest(k, self.keys)}")
            spec.check(_join(where, k), v)
        for k in self.required:
            if k not in value:
                raise _error(f"{_join(where, k)} is missing")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


class MapOf(Spec):
    what = "a table of tables"

    def __init__(self, item: Table):
        self.item = item

    def check(self, where, value):
        if not isinstance(value, dict):
            raise _error(f"[{where}] must be a table of tables (got {_kind(value)})")
        for k, v in value.items():
            self.item.check(_join(where, k), v)


class ArrayOf(Spec):
    what = "an array of tables"

    def __init__(self, item: Table, min_len: int = 1):
        self.item, self.min_len = item, min_len

    def check(self, where, value):
        if not isinstance(value, list):
            raise _error(f"[[{where}]] must be an array of tables (got {_kind(value)})")
        if len(value) < self.min_len:
            raise _error(f"[[{where}]] must hold at least {self.min_len} table(s) "
                         f"(got {len(value)})")
        for i, v in enumerate(value):
            self.item.check(f"{where}[{i}]", v)


class _Number(Spec):
    """An element parameter: a number, an array of numbers, or an array of arrays."""

    what = "a number or an array of numbers"

    def check(self, where, value):
        if isinstance(value, list):
            for i, v in enumerate(value):
                self.check(f"{where}[{i}]", v)
            return
        REAL.check(where, value)


NUMBER = _Number()


class Element(Spec):
    """An element table: ``type`` (a class of hystmech.components), optional
    ``constructor`` (a classmethod), the rest the constructor's keyword arguments.
    ``type_required=False`` lets a runner supply the class (e.g. MaxwellSlip.from_heights);
    ``keys`` declares extra runner keys (e.g. a belt tensioner's ``model``)."""

    what = "an element table"

    def __init__(self, keys: dict | None = None, type_required: bool = True,
                 params: tuple = ()):
        self.keys = dict(keys or {})
        self.type_required = type_required
        self.params = tuple(params)     # parameters known when no type is given

    def check(self, where, value):
        if not isinstance(value, dict):
            raise _error(f"[{where}] must be a table (got {_kind(value)})")
        allowed = None
        if "type" in value:
            STR.check(_join(where, "type"), value["type"])
            allowed = element_parameters(value["type"], value.get("constructor"), where)
        elif self.type_required and not set(value) & set(self.keys):
            raise _error(f"{_join(where, 'type')} is missing (e.g. type = \"Dahl\")")
        elif self.params:
            allowed = list(self.params)
        for k, v in value.items():
            if k in ("type",):
                continue
            if k == "constructor":
                STR.check(_join(where, k), v)
                continue
            if k in self.keys:
                self.keys[k].check(_join(where, k), v)
                continue
            if allowed is not None and k not in allowed:
                raise _error(f"unknown parameter {k!r} in [{where}]"
                             f"{nearest(k, list(allowed) + list(self.keys))}")
            NUMBER.check(_join(where, k), v)


ELEMENT = Element()


def element_parameters(typ: str, constructor, where: str) -> list[str]:
    """Keyword parameters of an element class (or of its named constructor)."""
    cls = get_element_class(str(typ))
    factory = cls
    if constructor is not None:
        factory = getattr(cls, str(constructor), None)
        if factory is None or not callable(factory):
            raise _error(f"{_join(where, 'constructor')}: {typ} has no constructor {constructor!r}")
    return [p for p in inspect.signature(factory).parameters if p != "self"]


class _Name(Spec):
    """A scenario name: it becomes the default output directory runs/NAME, so it may not
    be a path (no separators, no leading dot)."""

    what = "a plain name"

    def check(self, where, value):
        STR.check(where, value)
        ok = value and not value.startswith(".") and all(c.isalnum() or c in "._-+" for c in value)
        if not ok:
            raise _error(f"{where} must be a plain name of letters, digits and ._-+ (it names "
                         f"the output directory runs/NAME; got {value!r})")


class _FileStem(Spec):
    """The stem of a file a runner writes into --out (a figure's name): a plain name, so
    that it lands inside --out (see :func:`hystmech.safeio.check_output_name`)."""

    what = "a plain file name"

    def check(self, where, value):
        STR.check(where, value)
        check_output_name(value, where)


FILE_STEM = _FileStem()


class Required(Spec):
    """A table the runner cannot do without (``Required(Table({...}))``)."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.what = spec.what

    def check(self, where, value):
        self.spec.check(where, value)


# keys every scenario may carry besides the runner's tables
TOP_LEVEL = {"title": STR, "reference": STR, "runner": STR, "name": _Name(),
             "description": STR}


def check(cfg: dict, tables: dict, runner: str) -> None:
    """Check a scenario's config against the schema ``tables`` of ``runner``:
    {table name: Spec}. Raises ScenarioError (exit 2) on the first problem."""
    for k, v in cfg.items():
        if k in INTERNAL_KEYS:
            continue
        spec = TOP_LEVEL.get(k) or tables.get(k)
        if spec is None:
            what = "table" if isinstance(v, (dict, list)) else "key"
            raise _error(f"unknown {what} {k!r} for runner {runner!r}"
                         f"{nearest(k, list(tables) + list(TOP_LEVEL))}")
        spec.check(k, v)
    for k, spec in tables.items():
        if isinstance(spec, Required) and k not in cfg:
            raise _error(f"runner {runner!r} needs the [{k}] table")
