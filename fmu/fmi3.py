"""modelDescription.xml for FMI 3.0 exports (the C side is fmu/templates/fmi3_model.c)."""
from __future__ import annotations

import datetime
from xml.sax.saxutils import escape

from .export import VR_DX, VR_F, VR_Q, VR_RTOL, VR_U, VR_V, VR_X, _fmt, _unit_defs


def model_description_3(spec, guid: str, ident: str, rtol: float) -> str:
    smooth = spec.kind == "smooth"
    units_xml, unit_of = _unit_defs(["m", "m/s", "N"] + spec.q_units)

    def ua(u):
        n = unit_of.get(u)
        return f' unit="{escape(n)}"' if n else ""

    rows = ['    <Float64 name="time" valueReference="0" causality="independent" '
            'variability="continuous" description="simulation time"/>']

    def add(name, vr, causality, variability, initial, start, unit, desc, extra=""):
        a = f'name="{escape(name)}" valueReference="{vr}"'
        if desc:
            a += f' description="{escape(desc)}"'
        a += f' causality="{causality}" variability="{variability}"'
        if initial:
            a += f' initial="{initial}"'
        a += ua(unit) + extra
        if start is not None:
            a += f' start="{_fmt(start)}"'
        rows.append(f"    <Float64 {a}/>")

    add("u", VR_U, "input", "continuous", None, 0.0, "m", "relative displacement")
    add("v", VR_V, "input", "continuous", None, 0.0, "m/s",
        "relative velocity (co-simulation: u(t) = u_k + v_k (t - t_k) within a step)")
    add("F", VR_F, "output", "continuous", "calculated", None, "N", "force")
    for j, (n, val, u, d) in enumerate(zip(spec.q_names, spec.q_values, spec.q_units,
                                           spec.q_docs)):
        add(n, VR_Q + j, "parameter", "fixed", "exact", val, u, d)
    add("rtol", VR_RTOL, "parameter", "fixed", "exact", rtol, "1",
        "relative tolerance of the adaptive segment update (laws without an exact one)")
    for i, n in enumerate(spec.state_names):
        add(n, VR_X + i, "local", "continuous" if smooth else "discrete", "calculated", None,
            "", f"internal state {i}" + ("" if smooth else " (updated at step boundaries)"),
            extra=f' nominal="{_fmt(spec.x_nominal[i])}"' if smooth else "")
    if smooth:
        for i, n in enumerate(spec.state_names):
            add(f"der({n})", VR_DX + i, "local", "continuous", "calculated", None, "",
                f"rate of {n}", extra=f' derivative="{VR_X + i}"')
    ms = [f'    <Output valueReference="{VR_F}"/>']
    if smooth:
        ms += [f'    <ContinuousStateDerivative valueReference="{VR_DX + i}"/>'
               for i in range(spec.n_x)]
    init = [VR_F] + ([VR_X + i for i in range(spec.n_x)] + [VR_DX + i for i in range(spec.n_x)]
                     if smooth else [])
    ms += [f'    <InitialUnknown valueReference="{r}"/>' for r in init]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    cis = "false" if smooth else "true"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="{spec.cls_name}" instantiationToken="{guid}"
  description="hystmech {spec.cls_name} force element ({spec.kind}): inputs u [m], v [m/s], output F [N]"
  generationTool="hystmech" generationDateAndTime="{now}" variableNamingConvention="flat">
  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUState="true" canSerializeFMUState="true"
    needsCompletedIntegratorStep="{cis}"/>
  <CoSimulation modelIdentifier="{ident}" canGetAndSetFMUState="true" canSerializeFMUState="true"
    canHandleVariableCommunicationStepSize="true" providesIntermediateUpdate="false"
    canReturnEarlyAfterIntermediateUpdate="false" hasEventMode="false"/>
  <UnitDefinitions>
{units_xml}
  </UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="1e-4"/>
  <ModelVariables>
{chr(10).join(rows)}
  </ModelVariables>
  <ModelStructure>
{chr(10).join(ms)}
  </ModelStructure>
</fmiModelDescription>
"""
