"""modelDescription.xml for FMI 3.0 exports (the C side is fmu/templates/fmi3_model.c)."""
from __future__ import annotations

import datetime
from xml.sax.saxutils import escape

from .export import (VR_DX, VR_F, VR_Q, VR_QA, VR_X, _fmt, _unit_defs, array_groups,
                     continuous_states, dependencies, header_attributes, log_categories_xml,
                     n_event_indicators, provides_jacobian, variables)

VR_Z = 300000  # event indicators (fmu/templates/fmi3_model.c: HM_VR_Z)


def model_description_3(spec, guid: str, ident: str, rtol: float) -> str:
    smooth = spec.kind == "smooth"
    vs = variables(spec, rtol)
    units_xml, unit_of = _unit_defs([v.unit for v in vs])

    def ua(u):
        n = unit_of.get(u)
        return f' unit="{escape(n)}"' if n else ""

    rows = ['    <Float64 name="time" valueReference="0" causality="independent" '
            'variability="continuous" description="simulation time" unit="s"/>']
    vr_of = {}
    st = getattr(spec, "struct", None)
    if st is not None:  # the array length an importer may change (fmu/fmi3_structural.py)
        from .fmi3_structural import VR_N, declaration

        rows.append(declaration(spec))
    sized = set(st.sized.arrays) if st is not None else set()
    dim_vr = VR_N if st is not None else None
    states_sized = st is not None and st.sized.nx is not None
    state_rows = []
    # array parameters (Preisach a1, a2, weights; Maxwell-slip k, delta, z0; ...): one
    # FMI 3.0 array variable each instead of the scalars name[i] of FMI 2.0
    groups = array_groups(spec.q_names)
    in_array = {VR_Q + o + i: k for k, (_, o, n) in enumerate(groups) for i in range(n)}
    members = {}
    for v in vs:
        if v.vr in in_array:
            members.setdefault(in_array[v.vr], []).append(v)
            if len(members[in_array[v.vr]]) == groups[in_array[v.vr]][2]:
                name = groups[in_array[v.vr]][0]
                ms_ = members[in_array[v.vr]]
                rows.append(_array_row(name, VR_QA + in_array[v.vr],
                                       ms_[:st.n] if name in sized else ms_, ua,
                                       dim_vr if name in sized else None))
            continue
        if states_sized and v.state is not None:
            # the states Z[i] of a law sized by the structural parameter: one array
            state_rows.append(v)
            if len(state_rows) == spec.n_x:
                rows.append(_state_array_row(state_rows, ua, dim_vr))
            continue
        a = f'name="{escape(v.name)}" valueReference="{v.vr}"'
        if v.desc:
            a += f' description="{escape(v.desc)}"'
        a += f' causality="{v.causality}" variability="{v.variability}"'
        if v.initial:
            a += f' initial="{v.initial}"'
        a += ua(v.unit)
        if v.min is not None:
            a += f' min="{_fmt(v.min)}"'
        if v.max is not None:
            a += f' max="{_fmt(v.max)}"'
        if v.nominal is not None:
            a += f' nominal="{_fmt(v.nominal)}"'
        if v.der_of is not None:  # FMI 3.0 points at the state's value reference
            a += f' derivative="{VR_X + v.der_of}"'
        if v.start is not None:
            a += f' start="{_fmt(v.start)}"'
        rows.append(f"    <Float64 {a}/>")
        vr_of[v.name] = v.vr
    # knowns of FMI 3.0 ModelStructure: inputs and continuous states, by value reference
    f_deps, r_deps = dependencies(spec, lambda k: vr_of[k] if isinstance(k, str) else VR_X + k)

    def dep(d):
        return "" if d is None else f' dependencies="{d}"'

    nz = n_event_indicators(spec)  # FMI 3.0 declares them as variables
    rows += [f'    <Float64 name="eventIndicator[{i}]" valueReference="{VR_Z + i}" '
             f'description="event indicator of model exchange (reversal of u, next switch '
             f'point)" causality="local" variability="continuous"/>' for i in range(nz)]
    cs = continuous_states(spec)
    ms = [f'    <Output valueReference="{VR_F}"{dep(f_deps)}/>']
    ms += [f'    <ContinuousStateDerivative valueReference="{VR_DX + i}"{dep(d)}/>'
           for i, d in zip(cs, r_deps)]
    init = [VR_F] + [VR_X + i for i in cs] + [VR_DX + i for i in cs]
    ms += [f'    <InitialUnknown valueReference="{r}"/>' for r in init]
    ms += [f'    <EventIndicator valueReference="{VR_Z + i}"/>' for i in range(nz)]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    cis = "false" if smooth else "true"
    jac = "true" if provides_jacobian(spec) else "false"
    if "s" not in unit_of:  # the unit of the independent variable time
        units_xml += ("\n" if units_xml else "") + '    <Unit name="s"><BaseUnit s="1"/></Unit>'
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="{spec.cls_name}" instantiationToken="{guid}"
  description="hystmech {spec.cls_name} force element ({spec.kind}): {spec.io_text()}"
  {header_attributes(spec)} generationDateAndTime="{now}" variableNamingConvention="flat">
  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUState="true" canSerializeFMUState="true"
    needsCompletedIntegratorStep="{cis}" providesDirectionalDerivatives="{jac}"
    providesAdjointDerivatives="{jac}"/>
  <CoSimulation modelIdentifier="{ident}" canGetAndSetFMUState="true" canSerializeFMUState="true"
    canHandleVariableCommunicationStepSize="true" providesIntermediateUpdate="false"
    canReturnEarlyAfterIntermediateUpdate="false" hasEventMode="false"
    maxOutputDerivativeOrder="{1 if provides_jacobian(spec) else 0}"/>
  <UnitDefinitions>
{units_xml}
  </UnitDefinitions>
{log_categories_xml()}
  <DefaultExperiment startTime="0" stopTime="1" stepSize="1e-4"/>
  <ModelVariables>
{chr(10).join(rows)}
  </ModelVariables>
  <ModelStructure>
{chr(10).join(ms)}
  </ModelStructure>
</fmiModelDescription>
"""


def _state_array_row(vs, ua, dim_vr: int) -> str:
    """<Float64> of the states of a law sized by a structural parameter (Maxwell-slip's Z):
    one local array variable at the first state's value reference, its length the
    structural parameter's value."""
    v0 = vs[0]
    name = v0.name.split("[", 1)[0]
    desc = v0.desc.replace("[0]", "[i]").replace(" 0 ", " i ")
    return (f'    <Float64 name="{escape(name)}" valueReference="{v0.vr}" '
            f'description="{escape(desc)}" causality="local" variability="continuous" '
            f'initial="calculated"{ua(v0.unit)}>\n      <Dimension valueReference="{dim_vr}"/>\n'
            f'    </Float64>')


def _array_row(name: str, vr: int, vs, ua, dim_vr: int | None = None) -> str:
    """<Float64> of one array parameter from its scalar members (in index order): the
    members' variability, unit and description; min/max where every member has the same
    bound; start the members' values. ``dim_vr``: the value reference of the structural
    parameter that holds its length (None: a fixed length)."""
    v0 = vs[0]
    desc = v0.desc
    a = f'name="{escape(name)}" valueReference="{vr}"'
    if desc:
        a += f' description="{escape(desc)}"'
    a += f' causality="parameter" variability="{v0.variability}" initial="exact"'
    a += ua(v0.unit)
    for attr in ("min", "max"):
        b = {getattr(v, attr) for v in vs}
        if len(b) == 1 and None not in b:
            a += f' {attr}="{_fmt(b.pop())}"'
    a += f' start="{" ".join(_fmt(v.start) for v in vs)}"'
    dim = f'start="{len(vs)}"' if dim_vr is None else f'valueReference="{dim_vr}"'
    return f'    <Float64 {a}>\n      <Dimension {dim}/>\n    </Float64>'
