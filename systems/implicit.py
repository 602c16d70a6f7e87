"""Former home of the projection and event methods, kept importable: see
methods/projection.py and methods/event.py."""
from .methods.projection import projection_loop, step_grid  # noqa: F401
