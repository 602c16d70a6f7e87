"""modelDescription.xml for FMI 3.0 exports (the C side is fmu/templates/fmi3_model.c)."""
from __future__ import annotations

import datetime
from xml.sax.saxutils import escape

from .export import (VR_DX, VR_F, VR_X, _fmt, _unit_defs, continuous_states,
                     n_event_indicators, variables)

VR_Z = 300000  # event indicators (fmu/templates/fmi3_model.c: HM_VR_Z)


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

    for (name, vr, caus, var, init_, start, unit, desc, nominal, der_of) in variables(spec, rtol):
        extra = f' nominal="{_fmt(nominal)}"' if nominal is not None else ""
        if der_of is not None:  # FMI 3.0 points at the state's value reference
            extra = f' derivative="{VR_X + der_of}"'
        add(name, vr, caus, var, init_, start, unit, desc, extra)
    nz = n_event_indicators(spec)  # FMI 3.0 declares them as variables
    for i in range(nz):
        add(f"eventIndicator[{i}]", VR_Z + i, "local", "continuous", None, None, "",
            "event indicator of model exchange (reversal of u, next switch point)")
    ms = [f'    <Output valueReference="{VR_F}"/>']
    cs = continuous_states(spec)
    ms += [f'    <ContinuousStateDerivative valueReference="{VR_DX + i}"/>' for i in cs]
    init = [VR_F] + [VR_X + i for i in cs] + [VR_DX + i for i in cs]
    ms += [f'    <InitialUnknown valueReference="{r}"/>' for r in init]
    ms += [f'    <EventIndicator valueReference="{VR_Z + i}"/>' for i in range(nz)]
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
