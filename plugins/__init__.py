"""hystmech force elements inside multibody engines.

``hystmech.plugins.mujoco``
    native MuJoCo passive-force plugins (extra ``mujoco``)
``hystmech.plugins.exudyn``
    Exudyn user-function connectors (extra ``exudyn``)
``hystmech.plugins.elastica``
    hysteretic bending of PyElastica Cosserat rods, and an element on a node of a rigid
    body or rod (extra ``elastica``)

Every host follows the trial/commit discipline of the element protocol
(components/base.py): a force evaluation advances a copy of the state committed at the
last accepted step; the committed state changes once per accepted step.
"""
