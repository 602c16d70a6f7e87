"""Former home of the assembly solvers, kept importable: the model is in model.py, the
code generator in codegen.py, the methods in methods/, the driver in simulate.py and
the result types in result.py."""
from .methods import METHODS  # noqa: F401
from .methods.rk45 import default_atol as _default_atol  # noqa: F401
from .model import Model  # noqa: F401
from .result import SimResult, SimulationError  # noqa: F401
from .simulate import simulate  # noqa: F401
