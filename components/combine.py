"""Parallel combination of force elements: F = F_1 + F_2 + ... (``a + b`` or
``SumElement(a, b, ...)``).

All parts see the same displacement u and velocity v; their forces add and their
states are concatenated (part i owns x[o_i : o_i + n_i] and p[q_i : q_i + m_i]).
The kernels are generated as flat source that calls each part's own kernels on its
slices, then numba-compiled, so a sum runs at the speed of its parts (e.g. a
linear-elastic moment law EI·K plus a Preisach operator, or the spring k0 and the
damper c of the Masing model with viscous damping, Bastien et al. (2007), eq. (11c)).

kind: "operator" if any part is an operator, else "inclusion" if any part is one,
else "smooth". box: the parts' boxes concatenated (±inf for unconstrained states).
rate / jac / slope / pjac exist when every part provides them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .base import ForceElement, is_compiled

# p = concatenation of the parts' p vectors


def _flatten(elements):
    out = []
    for el in elements:
        if isinstance(el, ForceElement) and el.parts:
            out.extend(el.parts)  # a sum of sums is flat (declared protocol: parts)
        elif isinstance(el, ForceElement):
            out.append(el)
        else:
            raise ValueError(f"elements must be hystmech force elements "
                             f"(got {type(el).__name__})")
    return out


def _sl(o, n):
    return f"{o}:{o + n}"


def _build_source(parts, offs, poffs, n, have_rate, have_jac, have_slope, have_pjac=False):
    lines = ["def advance(x, u0, u1, dt, v, p, rtol):"]
    for i, el in enumerate(parts):
        lines.append(f"    adv{i}(x[{_sl(offs[i], el.n_states)}], u0, u1, dt, v, "
                     f"p[{_sl(poffs[i], el.p.size)}], rtol)")
    lines.append("    return")
    lines.append("")
    lines.append("def force(x, u, v, p):")
    lines.append("    F = 0.0")
    for i, el in enumerate(parts):
        lines.append(f"    F += frc{i}(x[{_sl(offs[i], el.n_states)}], u, v, "
                     f"p[{_sl(poffs[i], el.p.size)}])")
    lines.append("    return F")
    lines.append("")
    if have_rate:
        lines.append("def rate(x, u, v, p, out):")
        for i, el in enumerate(parts):
            s = _sl(offs[i], el.n_states)
            lines.append(f"    rat{i}(x[{s}], u, v, p[{_sl(poffs[i], el.p.size)}], out[{s}])")
        lines.append("    return")
        lines.append("")
    if have_slope:
        lines.append("def slope(x, u, v, p):")
        lines.append("    S = 0.0")
        for i, el in enumerate(parts):
            lines.append(f"    S += slp{i}(x[{_sl(offs[i], el.n_states)}], u, v, "
                         f"p[{_sl(poffs[i], el.p.size)}])")
        lines.append("    return S")
        lines.append("")
    if have_jac:
        lines.append("def jac(x, u, v, p, J):")
        lines.append(f"    for i in range({n + 1}):")
        lines.append(f"        for j in range({n + 2}):")
        lines.append("            J[i, j] = 0.0")
        for i, el in enumerate(parts):
            o, k = offs[i], el.n_states
            # a part's J has rows (its states, F) and columns (its states, u, v)
            lines.append(f"    Jp = np.zeros(({k + 1}, {k + 2}))")
            lines.append(f"    jac{i}(x[{_sl(o, k)}], u, v, p[{_sl(poffs[i], el.p.size)}], Jp)")
            if k:
                lines.append(f"    for i in range({k}):")
                lines.append(f"        for j in range({k}):")
                lines.append(f"            J[{o} + i, {o} + j] = Jp[i, j]")
                lines.append(f"        J[{o} + i, {n}] = Jp[i, {k}]")
                lines.append(f"        J[{o} + i, {n + 1}] = Jp[i, {k + 1}]")
                lines.append(f"    for j in range({k}):")
                lines.append(f"        J[{n}, {o} + j] = Jp[{k}, j]")
            lines.append(f"    J[{n}, {n}] += Jp[{k}, {k}]")
            lines.append(f"    J[{n}, {n + 1}] += Jp[{k}, {k + 1}]")
        lines.append("    return")
        lines.append("")
    if have_pjac:
        # ∂(ẋ, F)/∂p: each part's block on its own states and parameters, ∂F summed
        q = sum(el.p.size for el in parts)
        lines.append("def pjac(x, u, v, p, J):")
        lines.append(f"    for i in range({n + 1}):")
        lines.append(f"        for j in range({q}):")
        lines.append("            J[i, j] = 0.0")
        for i, el in enumerate(parts):
            o, k, c, m = offs[i], el.n_states, poffs[i], el.p.size
            lines.append(f"    Jq = np.zeros(({k + 1}, {m}))")
            lines.append(f"    pjc{i}(x[{_sl(o, k)}], u, v, p[{_sl(c, m)}], Jq)")
            lines.append(f"    for j in range({m}):")
            if k:
                lines.append(f"        for i in range({k}):")
                lines.append(f"            J[{o} + i, {c} + j] = Jq[i, j]")
            lines.append(f"        J[{n}, {c} + j] = Jq[{k}, j]")
        lines.append("    return")
        lines.append("")
    return "\n".join(lines)


class SumElement(ForceElement):
    """Parallel sum of force elements: F = Σ F_i(x_i, u, v), x = (x_1, x_2, ...).

    ``SumElement(a, b, c)`` or ``a + b + c``; nested sums are flattened. The parts keep
    their own parameters (``.parts``); p and x0 are their concatenations.
    """

    def p_names(self) -> tuple[str, ...]:
        """The parts' layouts concatenated, each slot named part<i>.<name>."""
        return tuple(f"part{i}.{nm}" for i, el in enumerate(self.parts)
                     for nm in el.p_names())

    param_info = ()
    citation = "parallel combination (forces add)"

    def __init__(self, *elements):
        parts = _flatten(elements)
        if not parts:
            raise ValueError("elements must hold at least one force element (got none)")
        self.parts = tuple(parts)
        kinds = [el.kind for el in parts]
        self.kind = ("operator" if "operator" in kinds else
                     "inclusion" if "inclusion" in kinds else "smooth")
        offs, poffs, o, q = [], [], 0, 0
        for el in parts:
            offs.append(o)
            poffs.append(q)
            o += el.n_states
            q += el.p.size
        n = o
        self.state_offsets = tuple(offs)
        self.param_offsets = tuple(poffs)
        have_rate = all(el.rate is not None for el in parts)
        have_jac = all(el.jac is not None for el in parts)
        have_slope = all(el.slope is not None for el in parts)
        have_pjac = all(el.pjac is not None and el.pjac_names is None for el in parts)
        compiled = all(is_compiled(fn) for el in parts
                       for fn in (el.advance, el.force,
                                  el.rate if have_rate else el.force,
                                  el.jac if have_jac else el.force,
                                  el.slope if have_slope else el.force,
                                  el.pjac if have_pjac else el.force))
        ns = {"np": np}
        for i, el in enumerate(parts):
            ns[f"adv{i}"], ns[f"frc{i}"] = el.advance, el.force
            ns[f"rat{i}"], ns[f"jac{i}"] = el.rate, el.jac
            ns[f"slp{i}"], ns[f"pjc{i}"] = el.slope, el.pjac
        src = _build_source(parts, offs, poffs, n, have_rate, have_jac, have_slope, have_pjac)
        self.source = src
        self._ns = ns
        exec(compile(src, f"<SumElement of {len(parts)} parts>", "exec"), ns)
        deco = njit if compiled else (lambda f: f)
        self.advance = deco(ns["advance"])
        self.force = deco(ns["force"])
        self.rate = deco(ns["rate"]) if have_rate else None
        self.jac = deco(ns["jac"]) if have_jac else None
        self.slope = deco(ns["slope"]) if have_slope else None
        self.pjac = deco(ns["pjac"]) if have_pjac else None

        names = []
        for i, el in enumerate(parts):
            own = tuple(el.state_names)
            for j in range(el.n_states):
                names.append(f"{i}.{own[j] if j < len(own) else f'x{j}'}")
        self.state_names = tuple(names)
        p = np.concatenate([el.p for el in parts]) if q else np.zeros(0)
        x0 = np.concatenate([el.x0 for el in parts]) if n else np.zeros(0)
        self._setup({"elements": self.parts}, p, x0)
        self.x_scale = (np.concatenate([np.asarray(el.x_scale, dtype=float).ravel() for el in parts])
                        if n else np.zeros(0))
        if any(el.box_lo is not None or el.box_hi is not None for el in parts):
            lo, hi = [], []
            for el in parts:
                lo.append(np.full(el.n_states, -np.inf) if el.box_lo is None
                          else np.asarray(el.box_lo, dtype=float))
                hi.append(np.full(el.n_states, np.inf) if el.box_hi is None
                          else np.asarray(el.box_hi, dtype=float))
            self.box_lo = np.concatenate(lo)
            self.box_hi = np.concatenate(hi)
        # drive() stores the leading states: all of them, unless only the last part
        # limits its report (e.g. an operator with a long memory)
        rep = [el.n_report_states for el in parts]
        if all(r == el.n_states for r, el in zip(rep[:-1], parts[:-1])):
            self.n_report_states = n - parts[-1].n_states + rep[-1]

    def kernel_source(self, kernels=("advance", "force")):
        """(source defining ``kernels`` (advance and force always), {adv<i>, frc<i>, ...:
        the parts' kernels it calls}), or None when the sum lacks one of them: drive()
        and the rod build their loops from it in the generated-code cache when every
        part's kernels are module-level (the exec'd kernels cannot be cached)."""
        want = {k: k in kernels for k in ("rate", "jac", "slope", "pjac")}
        have = {"rate": self.rate, "jac": self.jac, "slope": self.slope, "pjac": self.pjac}
        if any(have[k] is None for k, w in want.items() if w):
            return None
        src = _build_source(self.parts, self.state_offsets, self.param_offsets,
                            self.n_states, want["rate"], want["jac"], want["slope"],
                            want["pjac"])
        tags = ["adv", "frc"] + [t for k, t in (("rate", "rat"), ("jac", "jac"),
                                                 ("slope", "slp"), ("pjac", "pjc")) if want[k]]
        return src, {f"{t}{i}": self._ns[f"{t}{i}"] for i in range(len(self.parts))
                     for t in tags}

    def stored_energy(self, X, U):
        """Σ of the parts' stored energies [J] (parts that store none add nothing);
        None when no part reports one."""
        X = np.asarray(X, dtype=float).reshape(-1, self.n_states)
        tot = None
        for i, el in enumerate(self.parts):
            e = el.stored_energy(self.part_states(X, i), U)
            if e is not None:
                tot = e if tot is None else tot + e
        return tot

    def demagnetized_state(self) -> np.ndarray:
        """The parts' virgin memories, concatenated."""
        return (np.concatenate([el.demagnetized_state() for el in self.parts])
                if self.n_states else np.zeros(0))

    def part_states(self, x, i: int) -> np.ndarray:
        """The slice of state vector(s) ``x`` (last axis) owned by part ``i``."""
        o = self.state_offsets[i]
        return np.asarray(x)[..., o:o + self.parts[i].n_states]

    def with_params(self, **changes):
        raise ValueError("SumElement has no parameters of its own: change a part with "
                         "part.with_params(...) and add the parts again")

    def __repr__(self) -> str:
        return " + ".join(repr(el) for el in self.parts)
