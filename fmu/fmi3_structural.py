"""FMI 3.0 structural parameters: array sizes an importer may change before initialization.

A law whose array parameters share one length n that its C kernel reads at run time
(Maxwell-slip: k, delta, z0 and the states Z, n = ``n_elements``; the discrete Preisach
operator: a1, a2, weights, n = ``n_relays``; see ``sized`` in fmu/metadata.py) is
exported to FMI 3.0 with

- a ``<UInt64 causality="structuralParameter" variability="fixed">`` holding n
  (start: the exported length, min 1, max the capacity compiled into the FMU), and
- the arrays it sizes declared with ``<Dimension valueReference="..."/>`` referring to it
  (Maxwell-slip's states Z too).

The binary is compiled for a capacity C (``export_fmu(..., max_size=C)``, default the
exported length; a larger one at most MAX_CAPACITY): every sized array holds C slots, the
kernel gets the first n of each (fmu/templates/hm_fmu.h ``hm_law_setup``). The Preisach
kernel's Everett table is sized for the thresholds: by default for the exported distinct
ones (fewer relays must not bring more distinct thresholds: refused by the law's setup,
with a message), with max_size for any C relays ((C + 1)^2 doubles, 8 MB at C = 1024,
in every FMU state). An importer changes n in
Configuration Mode (fmi3EnterConfigurationMode, fmi3SetUInt64, fmi3ExitConfigurationMode)
before initialization; a size outside [1, C] is refused with a logged message. After a
resize the first min(n_old, n) entries of each array keep their values and new entries
repeat the last one (a valid law), so an importer sets the arrays at their new length
next. FMI 2.0 has no structural parameters: its FMUs keep the exported sizes.

Variability fixed, not tunable: FMI 3.0 lets a tunable structural parameter change in
Reconfiguration Mode after initialization, which a running law cannot follow (the
Maxwell-slip state holds one deflection per element, the Preisach memory the relays'
thresholds); fixed ones change in Configuration Mode only, from Instantiated.
"""
from __future__ import annotations

import copy

from . import metadata as md

VR_N = 5            # the structural parameter's value reference (after u, v, F, rtol)
MAX_CAPACITY = 1024  # largest max_size: kernel parameters and states are fixed-size arrays


class StructuralSpec:
    """The structural parameter of an export: its declaration, start value and capacity."""

    def __init__(self, sized: md.Sized, n: int, capacity: int):
        self.sized, self.n, self.capacity = sized, int(n), int(capacity)

    @property
    def name(self) -> str:
        return self.sized.name


def structural_spec(spec, element, max_size):
    """``spec`` (fmu/export.py LawSpec of ``element``) laid out for a capacity: each sized
    array padded to ``max_size`` slots (repeating its last value), n_p and n_x for the
    capacity, ``spec.struct`` set. Unchanged (struct None) for laws without a structural
    parameter; FMUExportError-style ValueError for a bad ``max_size``."""
    from .export import FMUExportError, array_groups

    sz = md.sized(element)
    if sz is None:
        if max_size is not None:
            raise FMUExportError(f"max_size applies to laws whose array sizes are FMI 3.0 "
                                 f"structural parameters (MaxwellSlip, the discrete "
                                 f"Preisach); {spec.cls_name} has none")
        return spec
    groups = {b: (o, n) for b, o, n in array_groups(spec.q_names) if b in sz.arrays}
    if set(groups) != set(sz.arrays):
        return spec
    n = {n for _, n in groups.values()}.pop()
    cap = n if max_size is None else max_size
    if isinstance(cap, bool) or not isinstance(cap, int) or not n <= cap <= max(n, MAX_CAPACITY):
        raise FMUExportError(f"max_size must be an integer in [{n}, {MAX_CAPACITY}] (the "
                             f"exported length of {', '.join(sz.arrays)} up to the largest "
                             f"capacity) (got {max_size!r})")
    out = copy.copy(spec)
    lists = ("q_names", "q_values", "q_units", "q_docs", "q_min", "q_max", "q_tunable")
    cols = {a: [] for a in lists}
    j = 0
    while j < len(spec.q_names):
        base = next((b for b, (o, _) in groups.items() if o == j), None)
        take = [j] if base is None else list(range(j, j + n)) + [j + n - 1] * (cap - n)
        for k, i in enumerate(take):
            for a in lists:
                src = getattr(spec, a)
                if src is None:
                    continue
                v = src[i]
                if a == "q_names" and base is not None:
                    v = f"{base}[{k}]"
                cols[a].append(v)
        j += 1 if base is None else n
    for a in lists:
        setattr(out, a, cols[a] if getattr(spec, a) is not None else None)
    # without a capacity asked for, the kernel vector keeps its exported size (the
    # Preisach table of the exported distinct thresholds: a smaller set of relays must
    # fit it, else the law's setup refuses it); with one, room for any C relays, which
    # for Preisach grows as (C + 1)^2 doubles per FMU state
    out.n_p = spec.n_p if max_size is None else max(sz.n_p(cap), spec.n_p)
    nx = sz.n_x(cap)
    if nx is not None:
        base = spec.state_names[0].split("[", 1)[0]
        out.n_x = nx
        out.state_names = [f"{base}[{i}]" for i in range(nx)]
        pad = lambda L: None if L is None else list(L) + [L[-1]] * (nx - len(L))  # noqa: E731
        out.x_nominal = pad(spec.x_nominal)
        out.state_units = pad(spec.state_units)
        if spec.state_docs is not None:
            out.state_docs = [d.replace("[0]", f"[{i}]") for i, d in
                              enumerate([spec.state_docs[0]] * nx)]
    out.struct = StructuralSpec(sz, n, cap)
    return out


def config_h(spec) -> str:
    """hm_config.h lines of the structural parameter (fmu/templates/hm_fmu.h and
    fmi3_model.c read them): its value reference, start, capacity, the kernel's sizes as
    functions of n, and per constructor parameter its slot in a sized array (-1: not in
    one), so the kernel gets the first n of each."""
    st = getattr(spec, "struct", None)
    if st is None:
        return ""
    from .export import array_groups

    slot = [-1] * len(spec.q_names)
    sized_groups = []
    for k, (b, o, ln) in enumerate(array_groups(spec.q_names)):
        if b in st.sized.arrays:
            sized_groups.append(k)
            for i in range(ln):
                slot[o + i] = i
    nx = st.sized.nx
    return (f"#define HM_STRUCT 1\n#define HM_VR_N {VR_N}\n#define HM_N_START {st.n}\n"
            f"#define HM_N_MAX {st.capacity}\n"
            f"#define HM_NP_OF(n) ({st.sized.np})\n"
            f"#define HM_NX_OF(n) ({nx if nx is not None else 'HM_NX'})\n"
            + ("#define HM_NX_SIZED 1\n" if nx is not None else "")
            + f"static const int HM_Q_SLOT[] = {{{', '.join(map(str, slot))}}};\n"
            f"static const int HM_QA_SIZED[] = {{"
            + ", ".join("1" if k in sized_groups else "0"
                        for k in range(len(array_groups(spec.q_names)))) + "};\n")


def declaration(spec) -> str:
    """The <UInt64> structural parameter row of modelDescription.xml (FMI 3.0)."""
    from xml.sax.saxutils import escape

    st = spec.struct
    return (f'    <UInt64 name="{escape(st.name)}" valueReference="{VR_N}" '
            f'description="{escape(st.sized.doc)}; changed in Configuration Mode before '
            f'initialization, in [1, {st.capacity}] (the capacity compiled into this FMU)" '
            f'causality="structuralParameter" variability="fixed" initial="exact" '
            f'start="{st.n}" min="1" max="{st.capacity}"/>')
