"""The force-element protocol shared by every hysteresis law.

A force element relates a relative displacement u(t) [m] and its rate v = du/dt [m/s]
to a force F(t) [N] through an internal state x (a float64 vector of fixed size).

Every element offers the same few pieces, so that the same object can be driven by an
imposed displacement (``hystmech.drive``), sit inside an assembly
(``hystmech.systems``) and be exported as an FMU (``hystmech.fmu``):

``kind``
    ``"smooth"``: ẋ = rate(x, u, v) is an ODE with a continuous right-hand side
    (Dahl, LuGre, Duhem, modified Dahl, viscous + Dahl, Bouc-Wen).
    ``"inclusion"``: ẋ + ∂I_box(x) ∋ rate(x, u, v), the state is confined to a box
    [box_lo, box_hi] and the resolvent of the inclusion is the projection onto it
    (Masing, Maxwell-slip; Bastien et al. (2007), eqs. (A.7)-(A.9)).
    ``"operator"``: a rate-independent operator with its own memory update and no
    rate (relay, Preisach).

``p``, ``x0``, ``n_states``, ``params``
    validated parameters packed as a float64 vector for the kernels, the initial
    state, its size, and the constructor's keyword arguments.

Kernels (plain numeric functions, numba-compiled, kept apart from the class):

``advance(x, u0, u1, dt, v, p, rtol)``
    advance x in place over one input segment on which u moves linearly from u0 to
    u1 in dt seconds with velocity v (v = (u1 - u0)/dt unless the user gave v).
    Exact where the law allows (e.g. Dahl, LuGre with v constant), adaptive
    Runge-Kutta to relative tolerance ``rtol`` otherwise, projection for inclusions,
    memory update for operators.
``force(x, u, v, p) -> F``
    the output force [N].
``rate(x, u, v, p, out)``
    fills ``out`` with ẋ (smooth part for inclusions; ``None`` for operators).
``jac(x, u, v, p, J)``
    fills J, shape (n+1, n+2): rows 0..n-1 are ∂ẋ/∂(x, u, v), row n is ∂F/∂(x, u, v).
    ``None`` where not provided (solvers then use finite differences).
``pjac(x, u, v, p, Jp)`` (optional)
    fills Jp, shape (n+1, p.size): rows 0..n-1 are ∂ẋ/∂p, row n is ∂F/∂p (the forward
    sensitivity equations of identify/assembly.py; ``None``: the law's parameters
    cannot be fitted there).
``affine(v, dt, p, out)`` (optional, one-state laws whose exact segment update is affine)
    fills out[0:4] so that x_new = out[0]·x + out[1] and F = out[2]·x_new + out[3] for a
    segment of velocity v and duration dt; drive() then reuses the map across segments
    that share v and dt.
``slope(x, u, v, p) -> dF/du`` (optional)
    the tangent on the active branch (direction sgn(v), increasing for v = 0), for
    Newton solvers (the rod) and stability bounds.
``state_copy(src, dst, p)`` (optional)
    copies into dst the part of the state src that advance and force read (a Preisach
    operator: the live part of its memory stack), so that a host's trial copy costs
    what the memory holds, not its capacity; ``None``: hosts copy every state.
``state_commit(src, dst, p)`` (optional)
    commits a trial: src is dst advanced by one ``advance`` call; copies into dst only
    what that call can have changed of the part ``state_copy`` copies (a Preisach
    operator: the stack's header and at most three entries), so a host's commit costs
    O(1); ``None``: hosts commit with ``state_copy``.

Declared attributes and methods that hosts read (every host reads these and nothing
else; no host switches on a class name):

``x_scale``        natural size of each state (error norms of adaptive integrators);
                   ones unless the law knows better.
``n_report_states`` how many leading states hosts record per sample (default all).
``parts``          the parallel parts of a sum (``()`` for a single law).
``stored_energy(X, U)`` energy stored in the element [J] at states X (m, n_states) and
                   deflections U (m,), or None when the law does not separate stored
                   from dissipated energy (the energy account then lumps it in).
``initial_tangent()`` dF/du [N/m] at x0, u = 0 on a loading branch.
``kernel_source()`` (source, {name: kernel}) when ``advance``/``force`` are generated
                   code over named kernels (a sum), so that a host can compile them
                   into a module it caches; None for module-level kernels (default).
``p_layout`` / ``p_names()`` the name of every slot of ``p`` (the kernels' and the C
                   twin's layout, in order); laws whose p has a variable length
                   (Maxwell-slip, Preisach, sums) describe it in ``p_names()``.
                   ``check_p(p)`` raises unless a vector has this element's layout.
``kernel_p(work)``  the vector a host may pass to the Python kernels instead of ``p``:
                   ``p`` followed by parameter-derived data (e.g. the tabulated arc
                   length of the power-law laws, power_law_table.py) that makes
                   ``advance`` faster for the same result (to ~1e-13), possibly with
                   a memo keyed by the exact state it belongs to (never a different
                   result for a state, so trial/commit is unaffected): a fresh vector
                   per call, for one loop at a time; ``p`` itself unless the law has
                   such data worth building for ``work`` segments. The C twins take
                   ``p``.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

KINDS = ("smooth", "inclusion", "operator")


@dataclass(frozen=True)
class Param:
    """One constructor parameter as the law's table (``param_info``) describes it: name,
    SI unit, ``meaning`` (what it is in the law's equation) and ``range`` (the full set
    the constructor accepts: "in (0, inf)", "in [-1, 1]", "any real", or relative to
    another parameter, ">= Fc"). ``doc`` is "meaning, range" unless given."""

    name: str
    unit: str
    doc: str = ""
    meaning: str = ""
    range: str = ""

    def __post_init__(self):
        if not self.doc and (self.meaning or self.range):
            object.__setattr__(self, "doc", ", ".join(t for t in (self.meaning, self.range) if t))


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type (a string or boolean where a number belongs).

    Both a TypeError (what it is) and a ValueError (so callers and the CLI that report
    bad parameter values with exit code 2 treat it the same way)."""


def _short(value) -> str:
    r = repr(value)
    return r if len(r) <= 40 else r[:37] + "..."


def _real_scalar(name: str, value) -> float:
    """``value`` as a Python float if it is a real scalar: int/float, a NumPy integer or
    floating scalar, or a 0-d array of those. bool and str are refused: True is not 1 N
    and "2.5" is not a number (a TOML or JSON typo should not run)."""
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a real scalar (got an array of shape {value.shape})")
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be a real number, not a boolean (got {_short(value)})")
    if isinstance(value, (str, bytes)):
        raise ParameterTypeError(f"{name} must be a real number, not a string (got {_short(value)})")
    if not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"{name} must be a real number (got {type(value).__name__} "
                                 f"{_short(value)})")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a finite real number (got {_short(value)})") from None


def check_finite(name: str, value) -> float:
    """Return ``value`` as a float, or raise ValueError naming ``name`` if not finite
    (ParameterTypeError, also a TypeError, for bool, str and non-real types)."""
    x = _real_scalar(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number (got {_short(value)})")
    return x


class ParameterRangeError(ValueError):
    """A parameter outside its admissible range (``check_range``); carries ``name``,
    ``value`` and ``allowed`` (e.g. "[0, inf)") so that a caller that computed the value
    (a fit) can report it as its own result rather than as the user's input."""

    def __init__(self, msg: str, name: str, value: float, allowed: str):
        super().__init__(msg)
        self.name, self.value, self.allowed = name, value, allowed


def check_range(name: str, value, lo: float | None = None, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False) -> float:
    """Check lo (<|<=) value (<|<=) hi and return the value as float.

    The ValueError names the parameter and the allowed range, e.g.
    ``rho must be in (0, inf) (got -1.0)``.
    """
    x = check_finite(name, value)
    ok = True
    if lo is not None:
        ok &= (x > lo) if lo_open else (x >= lo)
    if hi is not None:
        ok &= (x < hi) if hi_open else (x <= hi)
    if not ok:
        left = "(" if (lo_open or lo is None) else "["
        right = ")" if (hi_open or hi is None) else "]"
        lo_s = "-inf" if lo is None else f"{lo:g}"
        hi_s = "inf" if hi is None else f"{hi:g}"
        allowed = f"{left}{lo_s}, {hi_s}{right}"
        raise ParameterRangeError(f"{name} must be in {allowed} (got {x!r})", name, x, allowed)
    return x


def check_positive(name: str, value) -> float:
    return check_range(name, value, lo=0.0, lo_open=True)


def check_nonnegative(name: str, value) -> float:
    return check_range(name, value, lo=0.0)


def check_array(name: str, value, ndim: int = 1, min_len: int = 1) -> np.ndarray:
    """Return a finite float64 array of dimension ``ndim`` or raise ValueError naming it
    (ParameterTypeError for booleans or strings among the values)."""
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a {ndim}-D array of finite numbers") from None
    kind = raw.dtype.kind
    if kind == "b":
        raise ParameterTypeError(f"{name} must hold real numbers, not booleans")
    if kind in "USa":
        raise ParameterTypeError(f"{name} must hold real numbers, not strings")
    if kind == "O":
        for v in raw.ravel():
            if isinstance(v, (bool, np.bool_, str, bytes)):
                raise ParameterTypeError(f"{name} must hold real numbers (got {v!r})")
    if kind == "c":
        raise ParameterTypeError(f"{name} must hold real numbers, not complex ones")
    try:
        a = np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a {ndim}-D array of finite numbers") from None
    if a.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array (got shape {a.shape})")
    if a.size < min_len:
        raise ValueError(f"{name} must hold at least {min_len} value(s) (got {a.size})")
    bad = ~np.isfinite(a)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(f"{name} must be finite: {int(bad.sum())} non-finite value(s), "
                         f"first at index {i}")
    return a


class ForceElement:
    """Base class of every force element (see the module docstring for the protocol).

    Subclasses set the class attributes ``kind``, ``param_info`` (tuple of Param,
    constructor order), ``state_names`` and the kernels, and implement
    ``__init__`` with keyword-only arguments that validates and calls
    ``self._setup(params, p, x0)``.
    """

    kind: str = "smooth"
    param_info: tuple[Param, ...] = ()
    # names of the slots of p in order (fixed-length laws); see p_names()
    p_layout: tuple[str, ...] = ()
    state_names: tuple[str, ...] = ()
    citation: str = ""

    # numba-compiled kernels (see module docstring); subclasses override
    advance: Callable | None = None
    force: Callable | None = None
    rate: Callable | None = None
    jac: Callable | None = None
    # pjac(x, u, v, p, Jp): ∂(ẋ, F)/∂p, (n_states + 1, p.size); None: not available
    pjac: Callable | None = None
    # the p slots pjac differentiates (None: all of them); e.g. a LuGre with a user's
    # Stribeck curve g reads only σ0, σ1 from p
    pjac_names: tuple | None = None
    affine: Callable | None = None

    slope: Callable | None = None
    # state_copy(src, dst, p): copy the states advance and force read; None: all of them
    state_copy: Callable | None = None
    # state_commit(src, dst, p): dst <- src, src being dst advanced once; None: state_copy
    state_commit: Callable | None = None
    # operators' forward sensitivities in their linear parameters (identify/assembly.py):
    # force_tan(x, S, u, du, p, DP, out), advance_tan(x, S, u0, u1, du0, du1, p, DP),
    # resum(x, p, S, DP), tangent_directions(name) -> [(label, value, ∂p/∂θ)] and
    # zero_direction() (∂p/∂θ of another element's parameter)
    force_tan: Callable | None = None
    advance_tan: Callable | None = None
    resum: Callable | None = None
    tangent_directions: Callable | None = None
    zero_direction: Callable | None = None

    # inclusions: the box that confines the state (arrays of length n_states)
    box_lo: np.ndarray | None = None
    box_hi: np.ndarray | None = None
    # inclusions with a symmetric box set by parameters: box_p[j] is the index in p of
    # the half-width of state j's box (identify/assembly.py differentiates the projection)
    box_p: np.ndarray | None = None

    # the parallel parts of a sum; () for a single law (see combine.SumElement)
    parts: tuple = ()
    # leading states recorded per sample; None: all (set in _setup)
    n_report_states: int | None = None

    def _setup(self, params: dict, p, x0) -> None:
        self.params = dict(params)
        self.p = np.ascontiguousarray(np.asarray(p, dtype=np.float64).ravel())
        self.x0 = np.ascontiguousarray(np.asarray(x0, dtype=np.float64).ravel())
        self.n_states = int(self.x0.size)
        # declared defaults; a law's constructor may refine them after _setup
        self.x_scale = np.ones(self.n_states)
        if type(self).n_report_states is None:
            self.n_report_states = self.n_states
        if self.kind not in KINDS:
            raise TypeError(f"{type(self).__name__}.kind must be one of {KINDS}")
        if self.declares_p_layout():
            names = self.p_names()
            if len(names) != self.p.size:
                raise TypeError(f"{type(self).__name__}: p has {self.p.size} slots but its "
                                f"declared layout names {len(names)}")

    # -- declared parameter layout ------------------------------------------------------
    def p_names(self) -> tuple[str, ...]:
        """The name of every slot of ``p`` for this element, in order (the layout the
        kernels and the C twin share); ``p_layout`` unless the law overrides this, and
        p[0], p[1], ... for a (user) law that declares none."""
        if self.p_layout:
            return tuple(self.p_layout)
        return tuple(f"p[{i}]" for i in range(self.p.size))

    @classmethod
    def declares_p_layout(cls) -> bool:
        """True when the law declares its p layout (``p_layout`` or its own
        ``p_names``); every law of hystmech's registry does."""
        return bool(cls.p_layout) or cls.p_names is not ForceElement.p_names

    def check_p(self, p) -> np.ndarray:
        """``p`` as a float64 vector if it has this element's layout (length of
        ``p_names()``, finite), else ValueError naming the first bad slot."""
        a = np.asarray(p, dtype=np.float64).ravel()
        names = self.p_names()
        if a.size != len(names):
            raise ValueError(f"{self.name}: p must have {len(names)} slots "
                             f"({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}), "
                             f"got {a.size}")
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise ValueError(f"{self.name}: p[{bad[0]}] ({names[bad[0]]}) must be finite")
        return a

    # -- declared protocol methods ------------------------------------------------------
    def stored_energy(self, X, U):
        """Energy stored in the element [J] at states X (m, n_states) and deflections
        U (m,) [m], as an array (m,); None when the law does not separate stored from
        dissipated energy (default)."""
        return None

    def demagnetized_state(self) -> np.ndarray:
        """The virgin (AC-demagnetised) memory of an operator; x0 for other laws."""
        return self.x0.copy()

    def kernel_p(self, work: int = 0) -> np.ndarray:
        """``p``, or ``p`` followed by parameter-derived data for the Python kernels
        (see the module docstring) when the host will advance about ``work``
        segments."""
        return self.p

    def kernel_source(self, kernels=("advance", "force")):
        """``(source, names)`` when this element's ``advance`` and ``force`` are
        generated code: the source defining them as plain functions, and the kernels it
        calls by name ({name: numba function}); None for a law whose kernels are
        module-level functions (default). A host compiles the source into its own
        module (drive() caches its loop on disk when every named kernel is importable)."""
        return None

    def initial_tangent(self) -> float:
        """dF/du [N/m] at the initial state x0, u = 0, on a loading branch (v > 0);
        from ``slope`` when the law has one, else a one-sided finite difference of
        ``advance``/``force``."""
        x = self.x0.copy()
        if self.slope is not None:
            return float(python_of(self.slope)(x, 0.0, 1e-300, self.p))
        du = 1e-7 * (float(np.max(np.abs(self.x_scale))) if self.n_states else 1.0) or 1e-7
        python_of(self.advance)(x, 0.0, du, 1.0, du, self.p, 1e-10)
        force = python_of(self.force)
        return (float(force(x, du, du, self.p))
                - float(force(self.x0.copy(), 0.0, du, self.p))) / du

    # -- conveniences ------------------------------------------------------------------
    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def smooth(self) -> bool:
        """True when the element is a smooth ODE (integrable by BDF)."""
        return self.kind == "smooth"

    def with_params(self, **changes) -> "ForceElement":
        """A new element of the same law with some constructor parameters changed."""
        kw = dict(self.params)
        kw.update(changes)
        return type(self)(**kw)

    def force_of(self, x, u: float, v: float) -> float:
        """Output force [N] for state ``x`` at displacement ``u`` and velocity ``v``."""
        return float(self.force(np.asarray(x, dtype=np.float64), float(u), float(v), self.p))

    def rate_of(self, x, u: float, v: float) -> np.ndarray:
        """State rate ẋ for state ``x`` (smooth part for inclusions)."""
        if self.rate is None:
            raise TypeError(f"{self.name} is a rate-independent operator without a state rate")
        out = np.empty(self.n_states)
        self.rate(np.asarray(x, dtype=np.float64), float(u), float(v), self.p, out)
        return out

    def __add__(self, other) -> "ForceElement":
        """Parallel combination: forces add, states concatenate (combine.SumElement)."""
        from .combine import SumElement

        if not isinstance(other, ForceElement):
            return NotImplemented
        return SumElement(self, other)

    def __radd__(self, other):
        # lets sum([a, b, c]) start from 0
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items()
                         if not callable(v) and not isinstance(v, np.ndarray))
        return f"{self.name}({args})"


def is_compiled(fn) -> bool:
    """True if ``fn`` is a numba dispatcher (so it can be passed to compiled loops)."""
    return hasattr(fn, "py_func") and hasattr(fn, "signatures")


def python_of(fn):
    """The Python function behind kernel ``fn`` (``fn`` itself when it is not a numba
    dispatcher), for one evaluation from Python: compiling a kernel that has no disk
    cache (a sum's generated kernels, a closure) costs 0.2-0.5 s of CPU per process,
    far more than calling its Python body once (Model.stability_limit,
    :meth:`ForceElement.initial_tangent`)."""
    return fn.py_func if is_compiled(fn) else fn


def jit_user_callable(fn, name: str):
    """numba-compile a user callable of one float (an envelope g, h_u, f ...).

    Returns the compiled function, or None when numba cannot compile it (the element
    then runs through the pure-Python version of its kernels: correct but slow).
    """
    import numba

    if is_compiled(fn):
        return fn
    try:
        jf = numba.njit(fn)
        jf(0.0)
        return jf
    except Exception:  # noqa: BLE001 - anything numba rejects falls back to Python
        return None
