"""Hysteretic bending and torsion for PyElastica Cosserat rods, and a hystmech element
on a node of a rigid body or rod.

PyElastica's bending law is hard-coded, τ = B(κ − κ_rest) (internal couple per Voronoi
node, material frame). :func:`add_hysteretic_bending` (or the forcing class
:class:`HystereticBending` in Elastica's own idiom) adds a second couple per node,
M = M̂[κ − κ_rest], from hystmech elements taking the strain from the rest
configuration (curvatures κ1, κ2 and twist τ = κ3, minus rest_kappa) as input and
returning a couple [N·m], transcribed into element torques exactly as PyElastica
transcribes its own couple (difference of M/ε³ plus the quadrature of
(κ × M)·l̂/ε³), so that ``LinearSpring(k = 0.2·EI)`` equals raising the bend matrix by
20 % and a pre-curved rod at rest stays at its rest curvature. Bending: one scalar law
per axis (anisotropic, square yield surface) or one vector law per node on the pair
(κ1, κ2) (isotropic, circular yield surface: MasingVector, BoucWenBiaxial); torsion:
its own scalar law. Default bending law: the hysteretic part κK − P[K] of the cable
law of Manfredo, Dörlich, Linn & Arnold (2023) (``systems.rigs.rod_cases.cable_preisach``),
with the rod's own bend matrix as the elastic part EI_el.

Every node's commit, trial and the torque transcription are one compiled call per step
(numba, batched over nodes, indexing the memory buffer directly; each node's states are
copied once per step, and only the part the law reads: ``state_copy`` of the element
protocol, e.g. a Preisach memory's live stack rather than its capacity; a commit copies
only what one advance can have written, ``state_commit``). The rod's arrays are handed
to the kernel once, as addresses (checked for identity at every call), and the
per-node law steps are inlined into it. Host discipline: the forcing evaluates a trial
copy of the committed memories at the step's strains; the trial of step n is committed
inside step n+1's compiled call, before its trial (PositionVerlet evaluates once per
step and rejects no step, so a trial is accepted as made), and the last step's when the
memory is read; no callback runs per step (an optional :class:`CommitMemory` callback
makes the acceptance explicit). A trial made by hand (``evaluate``) stays a probe until
``accept()``. Steppers: PyElastica
1.0 has two, PositionVerlet and PEFRL (no explicit steppers). PositionVerlet is supported (one force
evaluation per step, at the half step). PEFRL is refused: it evaluates the forcing at four
stages per step while PyElastica zeroes the external forces and torques only at the
step's end, so every forcing's torque (PyElastica's own included) is summed over the
stages, and its step ends with a kinematic drift after the last force evaluation, so
no trial is made at the accepted state: its stages' evaluations come at unequal
intervals and going back in time, which the kernel refuses (RuntimeError naming
PositionVerlet; with the CommitMemory callback, at the second evaluation within a
step), and :func:`integrate` refuses PEFRL with a ValueError. The memory is a set of rod attributes (``hystmech_bending_*``), saved and
restored by ``elastica.save_state`` / ``load_state`` with the rod.

Displacement convention (shared by the plugin hosts, plugins/convention.py): strains from the rest
configuration (rest_kappa), node displacements from the initial configuration (the
position when the element is added), an explicit origin ``u0`` overriding.
"""
from __future__ import annotations

import hashlib
import sys
import types as pytypes
import weakref

import numpy as np
from numba import carray, njit, typeof, types
from numba.extending import register_jitable

from ..components._pointers import f64_ptr
from ..components.base import ForceElement
from ._build import engine
from ._switch import inside as _inside
from ._switch import mean_force as _mean_force
from ._switch import switch_of as _switch_of

__all__ = ["add_hysteretic_bending", "HystereticBendingMemory", "HystereticBending",
           "CommitMemory", "bending_memory", "cable_hysteresis", "add_element",
           "ElementMemory"]


def _scalar_axes(advance, force, copy, commit_copy, a0, a1):
    """Kernel of the scalar law on strain axes a0 .. a1-1 of node i: the node's trial
    states (``ns`` each, from offset oXt of buf) start from the committed ones (oX) —
    or, when the pending trial is being committed, are committed to them (the trial
    is the committed state advanced once: ``commit_copy``, the law's state_commit) —
    then advance from the committed strain (Kc) to the trial strain (Kt); the couples
    go to M."""
    @njit(cache=False, inline='always')
    def step(i, buf, oX, oXt, ns, commit, oKc, oKt, oM, dt, p, rtol, u0v, u1v, vv, out):
        for a in range(a0, a1):
            o = (a - a0) * ns
            xc = buf[oX + o:oX + o + ns]
            x = buf[oXt + o:oXt + o + ns]
            if commit:
                commit_copy(x, xc, p)
            else:
                copy(xc, x, p)
            u0 = buf[oKc + 3 * i + a]
            u1 = buf[oKt + 3 * i + a]
            v = 0.0
            if dt > 0.0:
                v = (u1 - u0) / dt
                advance(x, u0, u1, dt, v, p, rtol)
            elif u1 != u0:
                advance(x, u0, u1, 0.0, 0.0, p, rtol)
            buf[oM + 3 * i + a] = force(x, u1, v, p)
    return step


def _vector_axes(advance, force, copy, commit_copy):
    """Kernel of a vector (two-input) law on the bending pair of node i (as
    _scalar_axes; u0v, u1v, vv, out: the 2-vectors handed to the law's kernels)."""
    @njit(cache=False, inline='always')
    def step(i, buf, oX, oXt, ns, commit, oKc, oKt, oM, dt, p, rtol, u0v, u1v, vv, out):
        xc = buf[oX:oX + ns]
        x = buf[oXt:oXt + ns]
        if commit:
            commit_copy(x, xc, p)
        else:
            copy(xc, x, p)
        for a in range(2):
            u0v[a] = buf[oKc + 3 * i + a]
            u1v[a] = buf[oKt + 3 * i + a]
            vv[a] = (u1v[a] - u0v[a]) / dt if dt > 0.0 else 0.0
        if dt > 0.0 or u1v[0] != u0v[0] or u1v[1] != u0v[1]:
            advance(x, u0v, u1v, dt if dt > 0.0 else 0.0, vv, p, rtol)
        force(x, u1v, vv, p, out)
        buf[oM + 3 * i] = out[0]
        buf[oM + 3 * i + 1] = out[1]
    return step


@njit(cache=False, inline='always')
def _no_torsion(i, buf, oX, oXt, ns, commit, oKc, oKt, oM, dt, p, rtol, u0v, u1v, vv, out):
    buf[oM + 3 * i + 2] = 0.0


@njit(cache=False, inline='always')
def _no_bending(i, buf, oX, oXt, ns, commit, oKc, oKt, oM, dt, p, rtol, u0v, u1v, vv, out):
    buf[oM + 3 * i] = 0.0
    buf[oM + 3 * i + 1] = 0.0


@njit(cache=True)
def _copy_all(src, dst, p):
    # the host's trial copy for a law without its own state_copy kernel: every state
    for k in range(src.size):
        dst[k] = src[k]


@njit(cache=True)
def _torques(M, kappa, rest_voronoi_lengths, voronoi_dilatation, out, c, q):
    # PyElastica's transcription of a Voronoi couple into element torques
    # (rod/cosserat_rod.py, _compute_internal_torques): Δ(M/ε³) + A[(κ × M)·l̂/ε³];
    # M (nodes, 3) in the material frame, c and q (3, nodes) work arrays
    nv = M.shape[0]
    ne = nv + 1
    for k in range(nv):
        e3 = voronoi_dilatation[k] ** 3
        for i in range(3):
            c[i, k] = M[k, i] / e3
        kx, ky, kz = kappa[0, k], kappa[1, k], kappa[2, k]
        mx, my, mz = M[k, 0], M[k, 1], M[k, 2]
        s = rest_voronoi_lengths[k] / e3
        q[0, k] = (ky * mz - kz * my) * s
        q[1, k] = (kz * mx - kx * mz) * s
        q[2, k] = (kx * my - ky * mx) * s
    for i in range(3):
        # two-point difference c[k] − c[k−1] and trapezoid ½(q[k] + q[k−1]), zero-padded
        out[i, 0] += c[i, 0] + 0.5 * q[i, 0]
        for k in range(1, ne - 1):
            out[i, k] += c[i, k] - c[i, k - 1] + 0.5 * (q[i, k] + q[i, k - 1])
        out[i, ne - 1] += -c[i, nv - 1] + 0.5 * q[i, nv - 1]


# The memory of one rod is ONE contiguous float64 buffer (a rod attribute, so
# elastica's save_state / load_state carry it; one array argument keeps the per-step
# call into the compiled kernel cheap): a header, then the blocks below, each C-ordered.
H_NV, H_NAB, H_NSB, H_NSS, H_NPB, H_NPS, H_RTOL, H_TC, H_TT, H_PENDING, H_ACCEPTED, \
    H_CALLBACK, H_T1, H_NEV, H_CHANGES, H_COMMITS = range(16)
HDR = 16
_BLOCKS = ("Xb", "Xbt", "Xs", "Xst", "Kc", "Kt", "M", "Mc", "work", "pb", "ps", "tmp",
           "c", "q")


@register_jitable
def _sizes(nv, nab, nsb, nss, npb, nps):
    return (nv * nab * nsb, nv * nab * nsb, nv * nss, nv * nss, nv * 3, nv * 3, nv * 3,
            nv * 3, nv * 3, npb, nps, 8, 3 * nv, 3 * nv)


@register_jitable
def _views(buf):
    nv, nab, nsb = int(buf[H_NV]), int(buf[H_NAB]), int(buf[H_NSB])
    nss, npb, nps = int(buf[H_NSS]), int(buf[H_NPB]), int(buf[H_NPS])
    sz = _sizes(nv, nab, nsb, nss, npb, nps)
    o = HDR
    Xb = buf[o:o + sz[0]].reshape((nv, nab, nsb))
    o += sz[0]
    Xbt = buf[o:o + sz[1]].reshape((nv, nab, nsb))
    o += sz[1]
    Xs = buf[o:o + sz[2]].reshape((nv, 1, nss))
    o += sz[2]
    Xst = buf[o:o + sz[3]].reshape((nv, 1, nss))
    o += sz[3]
    Kc = buf[o:o + sz[4]].reshape((nv, 3))
    o += sz[4]
    Kt = buf[o:o + sz[5]].reshape((nv, 3))
    o += sz[5]
    M = buf[o:o + sz[6]].reshape((nv, 3))
    o += sz[6]
    Mc = buf[o:o + sz[7]].reshape((nv, 3))
    o += sz[7]
    work = buf[o:o + sz[8]].reshape((nv, 3))
    o += sz[8]
    pb = buf[o:o + sz[9]]
    o += sz[9]
    ps = buf[o:o + sz[10]]
    o += sz[10]
    tmp = buf[o:o + sz[11]].reshape((4, 2))
    o += sz[11]
    c = buf[o:o + sz[12]].reshape((3, nv))
    o += sz[12]
    q = buf[o:o + sz[13]].reshape((3, nv))
    return Xb, Xbt, Xs, Xst, Kc, Kt, M, Mc, work, pb, ps, tmp, c, q


@register_jitable
def _commit_buf(buf, ell):
    # accept the pending trial; the step's moment work ½(M_old + M_new)·Δ(κ − κ_rest)·ℓ
    Xb, Xbt, Xs, Xst, Kc, Kt, M, Mc, work, pb, ps, tmp, c, q = _views(buf)
    nv = Kc.shape[0]
    for i in range(nv):
        for a in range(3):
            work[i, a] += 0.5 * (Mc[i, a] + M[i, a]) * (Kt[i, a] - Kc[i, a]) * ell[i]
            Mc[i, a] = M[i, a]
            Kc[i, a] = Kt[i, a]
    Xb[...] = Xbt
    Xs[...] = Xst
    buf[H_TC] = buf[H_TT]
    buf[H_PENDING] = 0.0
    buf[H_ACCEPTED] = 0.0
    buf[H_COMMITS] += 1.0


@njit(cache=True)
def _commit(buf, ell):
    if buf[H_PENDING] != 0.0:
        _commit_buf(buf, ell)


@register_jitable
def _offsets(buf):
    # the sizes and the start of every block of _views, as integers: the per-step
    # kernel indexes buf directly (views built per call cost microseconds)
    nv, nab, nsb = int(buf[H_NV]), int(buf[H_NAB]), int(buf[H_NSB])
    nss, npb, nps = int(buf[H_NSS]), int(buf[H_NPB]), int(buf[H_NPS])
    sz = _sizes(nv, nab, nsb, nss, npb, nps)
    o0 = HDR
    o1 = o0 + sz[0]
    o2 = o1 + sz[1]
    o3 = o2 + sz[2]
    o4 = o3 + sz[3]
    o5 = o4 + sz[4]
    o6 = o5 + sz[5]
    o7 = o6 + sz[6]
    o8 = o7 + sz[7]
    o9 = o8 + sz[8]
    o10 = o9 + sz[9]
    o11 = o10 + sz[10]
    o12 = o11 + sz[11]
    o13 = o12 + sz[12]
    return ((nv, nab, nsb, nss, npb, nps),
            (o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10, o11, o12, o13))


def _address(a, name, ndim):
    # the address of a float64 array whose rows are contiguous, and its row stride
    # [elements] (PyElastica's rod arrays are views of its memory block: rows of the
    # block, contiguous within a row)
    if (not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.ndim != ndim
            or a.strides[-1] != 8 or a.strides[0] % 8 or a.strides[0] <= 0):
        raise ValueError(f"the rod's {name} must be a float64 array of {ndim} "
                         f"dimension(s) with contiguous rows (PyElastica's layout)")
    return a.ctypes.data, a.strides[0] // 8


def _hand(rod, buf):
    """The addresses and row strides of the memory and of the rod's arrays the kernel
    reads and writes, as the int64 array it is called with (the arrays are checked for
    identity before every call, so the addresses stay those of live arrays)."""
    pb, _ = _address(buf, "memory", 1)
    nr = rod.kappa.shape[1]
    if nr != int(buf[H_NV]):
        raise ValueError(f"this memory holds {int(buf[H_NV])} Voronoi nodes, the rod has "
                         f"{nr}: a memory belongs to the rod it was made for")
    for name, a, shape in (("kappa", rod.kappa, (3, nr)),
                           ("rest_kappa", rod.rest_kappa, (3, nr)),
                           ("voronoi_dilatation", rod.voronoi_dilatation, (nr,)),
                           ("rest_voronoi_lengths", rod.rest_voronoi_lengths, (nr,)),
                           ("external_torques", rod.external_torques, (3, nr + 1))):
        if a.shape != shape:
            raise ValueError(f"the rod's {name} must have shape {shape} (got {a.shape})")
    pk, sk = _address(rod.kappa, "kappa", 2)
    pr, sr = _address(rod.rest_kappa, "rest_kappa", 2)
    pv, _ = _address(rod.voronoi_dilatation, "voronoi_dilatation", 1)
    pl, _ = _address(rod.rest_voronoi_lengths, "rest_voronoi_lengths", 1)
    pe, se = _address(rod.external_torques, "external_torques", 2)
    return np.array([pb, buf.size, nr, pk, sk, pr, sr, pv, pl, pe, se], dtype=np.int64)


_KERNELS: dict = {}


def _run(hand, time):
    # the template of the per-step kernel (see _kernel): _bend and _tors are not
    # globals of this module but of each copy _kernel makes of this function
    # the rod's arrays and the memory, handed once as addresses (_hand): one
    # small array to unbox per call instead of six, and views without reference
    # counts
    buf = carray(f64_ptr(hand[0]), int(hand[1]))
    nr = int(hand[2])
    # rows of PyElastica's memory block: (3, row stride), of which the rod's
    # columns 0 .. nr (nr + 1 for the elements) are read and written
    kappa = carray(f64_ptr(hand[3]), (3, int(hand[4])))
    rest = carray(f64_ptr(hand[5]), (3, int(hand[6])))
    vdil = carray(f64_ptr(hand[7]), nr)
    rvl = carray(f64_ptr(hand[8]), nr)
    ext = carray(f64_ptr(hand[9]), (3, int(hand[10])))
    if buf[H_CALLBACK] == 0.0 and buf[H_NEV] >= 2.0:
        # without the commit callback a multi-stage stepper shows as evaluation
        # times with changing intervals or going back (PEFRL's stages do both;
        # PositionVerlet: one per step, increasing, equal steps): three irregular
        # evaluations running refuse (a restart or a new dt makes at most two)
        t1, t2 = buf[H_T1], buf[H_TT]
        d0, d1 = t2 - t1, time - t2
        if time > t2 > t1 and abs(d1 - d0) <= 1e-9 * d1:
            buf[H_CHANGES] = 0.0
        else:
            buf[H_CHANGES] += 1.0
            if buf[H_CHANGES] >= 3.0:
                return -2
    commit = False
    if buf[H_PENDING] != 0.0:
        if buf[H_ACCEPTED] == 0.0:
            return -1
        commit = True
        buf[H_TC] = buf[H_TT]
        buf[H_PENDING] = 0.0
        buf[H_ACCEPTED] = 0.0
        buf[H_COMMITS] += 1.0
    (nv, nab, nsb, nss, npb, nps), (oXb, oXbt, oXs, oXst, oKc, oKt, oM, oMc, ow, opb,
                                    ops, otmp, oc, oq) = _offsets(buf)
    dt = time - buf[H_TC]
    rtol = buf[H_RTOL]
    pb = buf[opb:opb + npb]
    ps = buf[ops:ops + nps]
    u0v = buf[otmp:otmp + 2]
    u1v = buf[otmp + 2:otmp + 4]
    vv = buf[otmp + 4:otmp + 6]
    out = buf[otmp + 6:otmp + 8]
    nb = nab * nsb
    for i in range(nv):
        if commit:
            # accept node i's trial; the step's moment work ½(M_old + M_new)·Δ(κ − κ_rest)·ℓ
            for a in range(3):
                k = 3 * i + a
                buf[ow + k] += 0.5 * (buf[oMc + k] + buf[oM + k]) * \
                    (buf[oKt + k] - buf[oKc + k]) * rvl[i]
                buf[oMc + k] = buf[oM + k]
                buf[oKc + k] = buf[oKt + k]
        for a in range(3):
            buf[oKt + 3 * i + a] = kappa[a, i] - rest[a, i]
        _bend(i, buf, oXb + i * nb, oXbt + i * nb, nsb, commit, oKc, oKt, oM, dt, pb,
             rtol, u0v, u1v, vv, out)
        _tors(i, buf, oXs + i * nss, oXst + i * nss, nss, commit, oKc, oKt, oM, dt, ps,
             rtol, u0v, u1v, vv, out)
    _torques(buf[oM:oM + 3 * nv].reshape((nv, 3)), kappa, rvl, vdil, ext,
             buf[oc:oc + 3 * nv].reshape((3, nv)), buf[oq:oq + 3 * nv].reshape((3, nv)))
    buf[H_T1] = buf[H_TT]
    buf[H_TT] = time
    buf[H_NEV] += 1.0
    buf[H_PENDING] = 1.0
    # without the commit callback the trial is accepted as made: PositionVerlet
    # evaluates once per step and never rejects a step (a multi-stage stepper is
    # refused above), so the memory read after the step is the committed one
    buf[H_ACCEPTED] = 1.0 if buf[H_CALLBACK] == 0.0 else 0.0
    return 1 if commit else 0


def _kernel(bend, tors):
    """One compiled call per step: the pending trial committed if the step was accepted,
    every node's trial (bending law, torsion law) on the strains κ − κ_rest, and the
    couples transcribed into the rod's external torques. Returns 1 if a trial was
    committed, 0 if not, −1 if the forcing was evaluated twice within a step, −2
    if (without the commit callback) three evaluations running came at unequal
    intervals or went back in time, a multi-stage stepper (nothing done in either
    case). Compiled once per (bending kernel, torsion kernel) pair and kept.

    Node by node: the commit of node i (couple work, committed couple and strain, the
    law's states committed from the trial block by the law's state_commit or
    state_copy), then its trial
    from there — one pass over the buffer, one copy of each node's live states per step
    (the trial block already holds the accepted states after a commit).

    Each pair's kernel is this module's template ``_run`` with the pair as its globals
    ``_bend`` and ``_tors``, under a name made of the pair's kernels (module and name of
    each law kernel, and a digest of their modules' source): numba caches it on disk
    (cache=True) under that name, so a pair of shipped laws compiles once per install,
    not once per process. A law whose kernels are not module-level functions (a
    closure, e.g. a sum of laws or a LuGre with its own g) is compiled per process as
    before (its kernels have no name that identifies them across processes)."""
    key = (bend, tors)
    if key in _KERNELS:
        return _KERNELS[key]
    name = _pair_name(bend, tors)
    g = dict(globals())
    g["_bend"], g["_tors"] = bend, tors
    fn = pytypes.FunctionType(_run.__code__, g, "_run")
    if name is not None:
        fn.__qualname__ = name
    run = njit(cache=name is not None)(fn)
    _KERNELS[key] = run
    return run


class HystereticBendingMemory:
    """The element memory of one rod: per Voronoi node the committed states of the
    bending law ``Xb`` (nodes, 2 axes or 1 vector law, n_states) and of the torsion
    law ``Xs`` (nodes, 1, n_states), the committed strains ``Kc`` (nodes, 3) =
    κ − κ_rest at the committed time ``tc``, the last committed couples ``Mc`` [N·m]
    and the couple work ``work`` [J] per node and axis (over a closed cycle the
    hysteresis loss); ``M``: the couples of the last evaluation. All live in one buffer,
    the rod attribute ``hystmech_bending_buf``, so ``elastica.save_state`` /
    ``load_state`` save and restore the memory with the rod (a pending trial included).

    ``law``: a scalar hystmech ForceElement (one per bending axis d1, d2: an
    anisotropic section; its yield surface is a square) or a
    :class:`~hystmech.components.vector_base.VectorForceElement` (one per node on the
    pair (κ1, κ2): isotropic, e.g. MasingVector, BoucWenBiaxial) or None (no bending
    element); ``torsion``: a scalar law on the twist τ − τ_rest, or None.
    Displacement convention: the strains are measured from the rest configuration
    (rest_kappa: rest curvature and rest twist); the memory starts at x0 with the
    strains of the rod as built."""

    def __init__(self, rod, law, torsion=None, *, x0=None, x0_torsion=None,
                 rtol: float = 1e-8):
        from ..components.vector_base import VectorForceElement

        if law is not None and not isinstance(law, (ForceElement, VectorForceElement)):
            raise ValueError(f"law must be a hystmech force element or vector element "
                             f"(got {type(law).__name__})")
        if torsion is not None and not isinstance(torsion, ForceElement):
            raise ValueError(f"torsion must be a scalar hystmech force element or None "
                             f"(got {type(torsion).__name__})")
        if law is None and torsion is None:
            raise ValueError("give a bending law, a torsion law or both")
        if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
            raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
        if hasattr(rod, "hystmech_bending_buf"):
            raise ValueError("this rod already has hystmech hysteretic bending")
        nv = rod.kappa.shape[1]
        self.law, self.torsion, self.rtol = law, torsion, float(rtol)
        self.vector = isinstance(law, VectorForceElement)

        def state0(el, x):
            if el is None:
                return np.zeros(0)
            xs = el.x0 if x is None else np.asarray(x, dtype=float).ravel()
            if xs.size != el.n_states or not np.all(np.isfinite(xs)):
                raise ValueError(f"the initial state of {el.name} must hold "
                                 f"{el.n_states} finite value(s)")
            return xs

        xb, xs = state0(law, x0), state0(torsion, x0_torsion)
        nab = 1 if self.vector else 2
        # a vector law's kernel_p (e.g. its integrator's work space after p: no
        # allocation per node and step)
        pb = (law.kernel_p() if self.vector else law.p) if law is not None else np.zeros(0)
        ps = torsion.p if torsion is not None else np.zeros(0)
        sz = _sizes(nv, nab, xb.size, xs.size, pb.size, ps.size)
        self.buf = np.zeros(HDR + sum(sz))
        self.buf[:HDR][[H_NV, H_NAB, H_NSB, H_NSS, H_NPB, H_NPS, H_RTOL]] = \
            [nv, nab, xb.size, xs.size, pb.size, ps.size, rtol]
        for name, v in zip(_BLOCKS, _views(self.buf)):
            object.__setattr__(self, "_" + name, v)
        self._Xb[...] = xb
        self._Xs[...] = xs
        self._Kc[...] = (rod.kappa - rod.rest_kappa).T
        self._pb[...] = pb
        self._ps[...] = ps
        rod.hystmech_bending_buf = self.buf
        if law is None:
            bend = _no_bending
        elif self.vector:
            cp, cc = _copy_of(law), _commit_of(law)
            bend = _cached(("v", law.advance, law.force, cp, cc),
                           lambda: _vector_axes(law.advance, law.force, cp, cc))
        else:
            cp, cc = _copy_of(law), _commit_of(law)
            bend = _cached(("s", law.advance, law.force, cp, cc, 0, 2),
                           lambda: _scalar_axes(law.advance, law.force, cp, cc, 0, 2))
        if torsion is None:
            tors = _no_torsion
        else:
            cp, cc = _copy_of(torsion), _commit_of(torsion)
            tors = _cached(("s", torsion.advance, torsion.force, cp, cc, 2, 3),
                           lambda: _scalar_axes(torsion.advance, torsion.force, cp, cc,
                                                2, 3))
        self._run = _kernel(bend, tors)
        # (the rod's arrays, the kernel's entry point, their addresses, the memory):
        # the arrays are kept so the addresses stay valid; see _call
        self._hand_of = None
        self.ell = rod.rest_voronoi_lengths

    @property
    def commits(self) -> int:
        """The number of commits (accepted steps) so far."""
        self._settle()
        return int(self.buf[H_COMMITS])

    # -- readers (the committed memory; a step completed by the callback is committed
    # first) --------------------------------------------------------------------------
    def _settle(self):
        if self.buf[H_ACCEPTED] != 0.0:
            self.commit()

    def __getattr__(self, name):
        if name in ("Xb", "Xs", "Kc", "Mc", "work"):
            self._settle()
            return self.__dict__["_" + name]
        if name == "M":
            return self.__dict__["_M"]
        raise AttributeError(name)

    @property
    def X(self):
        """The committed states of the bending law (nodes, axes, n_states)."""
        return self.Xb

    @property
    def tc(self) -> float:
        """The committed time [s]."""
        self._settle()
        return float(self.buf[H_TC])

    @property
    def axes(self):
        return (0, 1, 2) if self.torsion is not None else (0, 1)

    @property
    def callback(self) -> bool:
        return bool(self.buf[H_CALLBACK] != 0.0)

    @callback.setter
    def callback(self, on: bool):
        self.buf[H_CALLBACK] = 1.0 if on else 0.0

    def evaluate(self, rod, time: float):
        """The trial of one step at ``time`` [s] from the committed memory (the previous
        step's accepted trial committed first), its couples added to
        ``rod.external_torques``; the trial is committed only after :meth:`accept`
        (a second evaluation before it is refused)."""
        r = self._call(rod)(self._hand_of[6], float(time))
        if r < 0:
            self._refuse(r)
        # a trial made by hand is a probe until accept(): a second evaluation before it
        # is refused, and the committed memory is read without it
        self.buf[H_ACCEPTED] = 0.0

    def _call(self, rod):
        """The compiled kernel's entry point for ``rod`` (numba's overload for the
        kernel's one signature, called without its per-call type resolution), the
        rod's arrays handed to it once (:func:`_hand`; again if the rod hands other
        arrays)."""
        h = self._hand_of
        if (h is None or rod.kappa is not h[0] or rod.rest_kappa is not h[1]
                or rod.voronoi_dilatation is not h[2]
                or rod.rest_voronoi_lengths is not h[3] or rod.external_torques is not h[4]):
            hand = _hand(rod, self.buf)
            sig = (typeof(hand), types.float64)
            if sig not in self._run.overloads:
                self._run.compile(sig)
            h = self._hand_of = (rod.kappa, rod.rest_kappa, rod.voronoi_dilatation,
                                 rod.rest_voronoi_lengths, rod.external_torques,
                                 _overload(self._run, (hand, 0.0)), hand, self.buf)
        return h[5]

    def _refuse(self, code):
        # the compiled kernel's refusals (it changed nothing); see _kernel
        if code == -1:
            raise RuntimeError(
                "hystmech hysteretic bending: the forcing was evaluated twice within "
                "one time step; use elastica.PositionVerlet (elastica.PEFRL and other "
                "multi-stage steppers accumulate external torques across stages)")
        raise RuntimeError(
            "hystmech hysteretic bending: the forcing is evaluated at unequal "
            "intervals (a multi-stage stepper such as elastica.PEFRL); use "
            "elastica.PositionVerlet")

    def accept(self):
        """Mark the pending trial as accepted (the step is complete); it is committed at
        the next evaluation or when the memory is read."""
        self.buf[H_ACCEPTED] = 1.0

    def commit(self):
        """Commit the pending trial now (memories, strains, time, couple work)."""
        _commit(self.buf, self.ell)


_KERNEL_PARTS: dict = {}


def _overload(disp, args):
    # the compiled overload of dispatcher disp for these arguments' numba types (the
    # entry point numba's dispatch itself ends in)
    return disp.overloads[tuple(typeof(a) for a in args)].entry_point


def _copy_of(law):
    # the law's own trial-copy kernel (state_copy: only the states its kernels read,
    # e.g. the live part of a Preisach memory stack), or a copy of every state
    return _copy_all if law.state_copy is None else law.state_copy


def _commit_of(law):
    # the law's own commit kernel (state_commit: only what one advance can have
    # changed, e.g. a Preisach stack's header and top), or its trial copy
    return _copy_of(law) if law.state_commit is None else law.state_commit


def _cached(key, make):
    if key not in _KERNEL_PARTS:
        part = _KERNEL_PARTS[key] = make()
        ids = [_kernel_id(k) if not isinstance(k, (str, int)) else str(k) for k in key]
        _PART_NAMES[part] = None if None in ids else ",".join(ids)
    return _KERNEL_PARTS[key]


# a kernel part (_scalar_axes / _vector_axes of given law kernels) -> the names of those
# kernels (None: a kernel without a name that identifies it across processes)
_PART_NAMES: dict = {}
_SOURCE_DIGESTS: dict = {}


def _kernel_id(k):
    """``module.name@digest`` of a module-level numba kernel (digest: of its module's
    source file, so an edited law compiles anew), None for any other (a closure)."""
    f = getattr(k, "py_func", None)
    mod = sys.modules.get(getattr(f, "__module__", None) or "")
    if f is None or mod is None or getattr(mod, f.__qualname__, None) is not k:
        return None
    path = getattr(mod, "__file__", None)
    if path not in _SOURCE_DIGESTS:
        try:
            with open(path, "rb") as fh:
                _SOURCE_DIGESTS[path] = hashlib.sha1(fh.read()).hexdigest()[:12]
        except (OSError, TypeError):
            _SOURCE_DIGESTS[path] = None
    if _SOURCE_DIGESTS[path] is None:
        return None
    return f"{mod.__name__}.{f.__qualname__}@{_SOURCE_DIGESTS[path]}"


def _pair_name(bend, tors):
    # the qualname of the (bend, tors) kernel for numba's disk cache, None if either
    # part is not identified by name (see _kernel)
    ids = []
    for part in (bend, tors):
        if part is _no_bending or part is _no_torsion:
            ids.append(part.py_func.__name__)
        elif _PART_NAMES.get(part) is not None:
            ids.append(_PART_NAMES[part])
        else:
            return None
    return "_run_" + hashlib.sha1("|".join(ids).encode()).hexdigest()[:20]


def cable_hysteresis(levels: int = 30):
    """The hysteretic part κK − P[K] of the cable moment law of Manfredo et al. (2023)
    (``systems.rigs.rod_cases.cable_preisach``, eqs. (7)-(16), continuous kernel) and its
    elastic bending stiffness EI_el [N·m²]: (P, EI_el, memory0 of P)."""
    from ..systems.rigs.rod_cases import cable_preisach

    cfg = {"levels": int(levels)}
    law, P = cable_preisach(cfg)
    EI = float(law.parts[0].params["k"])
    return P, EI, P.demagnetized_state()


_CLASSES: dict = {}
# rod -> its memory (not a rod attribute: elastica.save_state saves every attribute)
_MEMORIES = weakref.WeakKeyDictionary()


def _classes():
    if _CLASSES:
        return _CLASSES["HB"], _CLASSES["CM"]
    ea = engine("elastica")

    class HystereticBending(ea.NoForces):
        """PyElastica forcing: hystmech moment elements at every Voronoi node of a
        Cosserat rod, driven by κ − κ_rest (bending) and τ − τ_rest (twist), added to
        the rod's own couple B(κ − κ_rest). Elastica's idiom::

            sim.add_forcing_to(rod).using(HystereticBending, law=MasingVector(...),
                                          torsion=Masing(...))

        or ``memory=HystereticBendingMemory(rod, law, ...)`` (the memory is then
        allocated at once and is saved/restored by elastica's restart utilities;
        with ``law=`` it is allocated at the first evaluation and reachable as
        ``bending_memory(rod)``). The trial of a step is committed at the next step's
        evaluation (or when the memory is read); a :class:`CommitMemory` callback, if
        added, makes the acceptance explicit. Integrate with elastica.PositionVerlet."""

        def __init__(self, law=None, *, torsion=None, x0=None, x0_torsion=None,
                     rtol: float = 1e-8, memory=None):
            super().__init__()
            if memory is None and law is None and torsion is None:
                law, _, x0d = cable_hysteresis()
                x0 = x0d if x0 is None else x0
            self.memory = memory
            self._args = (law, torsion, x0, x0_torsion, rtol)

        def apply_torques(self, system, time: np.float64 = np.float64(0.0)) -> None:
            mem = self.memory
            if mem is None:
                law, torsion, x0, x0t, rtol = self._args
                mem = self.memory = HystereticBendingMemory(system, law, torsion, x0=x0,
                                                            x0_torsion=x0t, rtol=rtol)
                _MEMORIES[system] = mem
            # the compiled kernel straight from the hook, one Python frame per step:
            # its entry point with the rod's arrays handed once as addresses, while
            # the rod hands the same arrays (see HystereticBendingMemory._call)
            h = mem._hand_of
            if (h is not None and system.kappa is h[0] and system.rest_kappa is h[1]
                    and system.voronoi_dilatation is h[2]
                    and system.rest_voronoi_lengths is h[3]
                    and system.external_torques is h[4]):
                r = h[5](h[6], time)
            else:
                r = mem._call(system)(mem._hand_of[6], float(time))
            if r < 0:
                mem._refuse(r)

    class CommitMemory(ea.CallBackBaseClass):
        """Optional: marks each step's trial accepted from a callback (PyElastica calls
        callbacks once per step, after the last kinematic update), so that a second
        evaluation within a step is refused at once rather than by the unequal-interval
        check; costs one Python call per step. Without it a trial is accepted as made
        (PositionVerlet: one evaluation per step, no step rejected)."""

        def __init__(self, memory: HystereticBendingMemory):
            super().__init__()
            self.memory = memory
            memory.callback = True

        def make_callback(self, system, time, current_step: int) -> None:
            # the step is complete: its trial is accepted (committed at the next
            # evaluation inside the compiled kernel, or when the memory is read)
            self.memory.buf[H_ACCEPTED] = self.memory.buf[H_PENDING]

    _CLASSES["HB"], _CLASSES["CM"] = HystereticBending, CommitMemory
    return HystereticBending, CommitMemory


def __getattr__(name):
    # the PyElastica classes are built on first use (elastica is an optional extra)
    if name == "HystereticBending":
        return _classes()[0]
    if name == "CommitMemory":
        return _classes()[1]
    raise AttributeError(name)


def bending_memory(rod) -> HystereticBendingMemory:
    """The :class:`HystereticBendingMemory` of ``rod`` (after its first step when the
    forcing was given a law rather than a memory)."""
    mem = _MEMORIES.get(rod)
    if mem is None:
        raise ValueError("this rod has no hystmech hysteretic bending (yet)")
    return mem


def add_hysteretic_bending(sim, rod, law=None, *, torsion=False, x0=None,
                           x0_torsion=None, rtol: float = 1e-8) -> HystereticBendingMemory:
    """Add hystmech moment elements at every Voronoi node of ``rod`` to the PyElastica
    simulator ``sim`` (Forcing mixin), before ``sim.finalize()``; returns the rod's
    memory. Each step's trial is committed inside the next step's compiled call (and
    the last one when the memory is read), so no callback runs per step.

    ``law`` maps the bending strain κ − κ_rest [1/m] to a couple [N·m] added to the
    rod's own B(κ − κ_rest): a scalar law (one per axis d1, d2) or a vector law
    (isotropic, on the pair; components.masing_vector.MasingVector,
    components.bouc_wen_biaxial.BoucWenBiaxial); default: the hysteretic part of the
    cable law of Manfredo et al. (2023) from its AC-demagnetised memory. ``torsion``:
    a scalar law on the twist τ − τ_rest [1/m] with its own parameters, or
    False/None; True reuses a scalar bending law for the twist. Integrate with
    ``elastica.PositionVerlet`` only."""
    ea = engine("elastica")
    if law is None:
        law, _, x0d = cable_hysteresis()
        x0 = x0d if x0 is None else x0
    if not isinstance(sim, ea.Forcing):
        raise ValueError("the simulator must derive from elastica.Forcing")
    if torsion is True:
        if not isinstance(law, ForceElement):
            raise ValueError("torsion=True reuses a scalar bending law; with a vector law "
                             "give the torsion law itself (torsion=Masing(...))")
        torsion, x0_torsion = law, x0 if x0_torsion is None else x0_torsion
    elif torsion is False:
        torsion = None
    mem = HystereticBendingMemory(rod, law, torsion, x0=x0, x0_torsion=x0_torsion,
                                  rtol=rtol)
    _MEMORIES[rod] = mem
    HB, _ = _classes()
    sim.add_forcing_to(rod).using(HB, memory=mem)
    return mem


class ElementMemory:
    """The committed state of one force element on a node of a PyElastica system: x,
    the committed input u [m] and time t [s] (attributes ``hystmech_element<k>_x`` and
    ``_ut`` of the system, so elastica's save_state / load_state carry them); the
    anchor (the node's position in the initial configuration, when the element is
    added) and the origin u0 [m]; the pending trial; the force of the last evaluation
    F [N]."""

    def __init__(self, law: ForceElement, direction, node: int, rtol: float, system=None,
                 u0: float = 0.0):
        self.law = law
        self.direction = np.asarray(direction, dtype=float)
        self.node = int(node)
        self.rtol = float(rtol)
        self.u0 = float(u0)
        self.xc = np.array(law.x0, dtype=float)
        self.xt = self.xc.copy()
        self.ut_c = np.array([-self.u0, 0.0])     # committed u [m], t [s]
        self.anchor = None
        if system is not None:
            self.anchor = np.array(system.position_collection[:, self.node], dtype=float)
            k = 0
            while hasattr(system, f"hystmech_element{k}_x"):
                k += 1
            setattr(system, f"hystmech_element{k}_x", self.xc)
            setattr(system, f"hystmech_element{k}_ut", self.ut_c)
        self.ut = 0.0
        self.tt = 0.0
        self.F = 0.0
        self.pending = False
        self.commits = 0
        self.switch = _switch_of(law)

    @property
    def x(self):
        return self.xc

    @property
    def u(self):
        return float(self.ut_c[0])

    @property
    def t(self):
        return float(self.ut_c[1])

    def commit(self):
        """Accept the trial of the step (once per step)."""
        if self.pending:
            self.xc[...] = self.xt
            self.ut_c[0], self.ut_c[1] = self.ut, self.tt
            self.pending = False
            self.commits += 1


def _element_classes():
    ea = engine("elastica")

    class ElementForce(ea.NoForces):
        """NoForces adding −F·e at one node, F the hystmech element's force at the
        node's displacement u = (r − r_first)·e and velocity v = ṙ·e."""

        def __init__(self, memory: ElementMemory):
            super().__init__()
            self.memory = memory

        def apply_forces(self, system, time: np.float64 = np.float64(0.0)) -> None:
            mem = self.memory
            if mem.pending:
                raise RuntimeError(
                    "hystmech element: the forcing was evaluated twice within one time "
                    "step; use elastica.PositionVerlet (PEFRL and other multi-stage "
                    "steppers accumulate external forces across stages)")
            e, k = mem.direction, mem.node
            r = system.position_collection[:, k]
            # u from the initial configuration (the anchor), shifted by u0
            u = float((r - mem.anchor) @ e) - mem.u0
            v = float(system.velocity_collection[:, k] @ e)
            law = mem.law
            mem.xt[...] = mem.xc
            dt = float(time) - mem.t
            sw = mem.switch
            d = 1.0 if v > 0.0 else -1.0
            uf = u + 0.5 * dt * v
            if (sw is not None and dt > 0.0 and u != mem.u and v != 0.0
                    and (_inside(sw(mem.xt, mem.u, 1.0 if u > mem.u else -1.0), mem.u, u,
                                 1.0 if u > mem.u else -1.0)
                         or _inside(sw(mem.xt, u, d), u, uf, d))):
                # a jump or kink near: the impulse h·F of PositionVerlet's half-step
                # force stands for the integral of F over the step [t_n, t_n+1]; take the
                # mean over it (second half of the committed -> trial segment, then the
                # predicted u + v·(t − t_n+1/2)), so a relay's jump is placed exactly
                um = 0.5 * (mem.u + u)
                vs = (u - mem.u) / dt
                law.advance(mem.xt, mem.u, um, 0.5 * dt, vs, law.p, mem.rtol)
                Fb = _mean_force(law, sw, mem.xt, um, u, 0.5 * dt, v, mem.rtol)
                Ff = _mean_force(law, sw, mem.xt.copy(), u, uf, 0.5 * dt, v, mem.rtol)
                mem.F = 0.5 * (Fb + Ff)
            else:
                if dt > 0.0:
                    law.advance(mem.xt, mem.u, u, dt, (u - mem.u) / dt, law.p, mem.rtol)
                elif u != mem.u:
                    law.advance(mem.xt, mem.u, u, 0.0, 0.0, law.p, mem.rtol)
                mem.F = float(law.force(mem.xt, u, v, law.p))
            mem.ut, mem.tt, mem.pending = u, float(time), True
            system.external_forces[:, k] -= mem.F * e

    class CommitElement(ea.CallBackBaseClass):
        def __init__(self, memory: ElementMemory):
            super().__init__()
            self.memory = memory

        def make_callback(self, system, time, current_step: int) -> None:
            self.memory.commit()

    return ElementForce, CommitElement


def add_element(sim, system, law: ForceElement, *, direction, node: int = 0,
                rtol: float = 1e-8, u0: float = 0.0) -> ElementMemory:
    """Add the force element ``law`` between the ground and node ``node`` of the
    PyElastica ``system`` (a rigid body: node 0, its centre of mass; a rod: any node)
    along the unit vector ``direction``, to the simulator ``sim`` (Forcing and CallBacks
    mixins) before ``sim.finalize()``: u = (r − r_0)·e − u0 [m] (r_0 the node's position
    now, in the initial configuration; u0 an explicit origin), v = ṙ·e [m/s], and the
    force −F·e [N]; the element starts at x0 at time 0 (any initial velocity). Trial in the forcing,
    commit in a callback once per step; integrate with ``elastica.PositionVerlet``
    (:func:`integrate`). Returns the element's memory (committed state, last force)."""
    ea = engine("elastica")
    if not isinstance(law, ForceElement):
        raise ValueError(f"law must be a hystmech force element (got {type(law).__name__})")
    for mixin in ("Forcing", "CallBacks"):
        if not isinstance(sim, getattr(ea, mixin)):
            raise ValueError(f"the simulator must derive from elastica.{mixin}")
    e = np.asarray(direction, dtype=float)
    if e.shape != (3,) or not np.all(np.isfinite(e)) or abs(np.linalg.norm(e) - 1) > 1e-12:
        raise ValueError(f"direction must be a unit 3-vector (got {direction!r})")
    n = system.position_collection.shape[1]
    if not (isinstance(node, (int, np.integer)) and -n <= node < n):
        raise ValueError(f"node must be an integer in [{-n}, {n - 1}] (got {node!r})")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    if not (isinstance(u0, (int, float)) and np.isfinite(u0)):
        raise ValueError(f"u0 must be a finite number [m] (got {u0!r})")
    mem = ElementMemory(law, e, int(node) % n, rtol, system, u0)
    EF, CE = _element_classes()
    sim.add_forcing_to(system).using(EF, memory=mem)
    sim.collect_diagnostics(system).using(CE, memory=mem)
    return mem


def integrate(sim, final_time: float, total_steps: int, *, stepper=None, progress=False):
    """``elastica.integrate`` with PositionVerlet (the only stepper the hysteretic
    bending allows); ValueError naming PositionVerlet and the stepper for any other.
    PyElastica 1.0 has two steppers, PositionVerlet and PEFRL (no explicit ones: the
    RungeKutta4 and EulerForward of earlier releases are gone); PEFRL is refused for
    the reason in the module docstring."""
    ea = engine("elastica")
    stepper = ea.PositionVerlet() if stepper is None else stepper
    if not isinstance(stepper, ea.PositionVerlet):
        raise ValueError(f"stepper must be elastica.PositionVerlet (got "
                         f"{type(stepper).__name__}): elastica.PEFRL and other multi-stage "
                         f"steppers evaluate the forcing at several stages and PyElastica "
                         f"sums the external torques over them (zeroed only at the step's "
                         f"end)")
    return ea.integrate(stepper, sim, float(final_time), int(total_steps),
                        progress_bar=progress)
