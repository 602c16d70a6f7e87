"""Numba kernels shared by the smooth laws: an adaptive Dormand-Prince 5(4) step
over one input segment, used where a law has no exact segment update."""
import numpy as np
from numba import njit

# Dormand & Prince (1980) coefficients
_C2, _C3, _C4, _C5 = 1 / 5, 3 / 10, 4 / 5, 8 / 9
_A21 = 1 / 5
_A31, _A32 = 3 / 40, 9 / 40
_A41, _A42, _A43 = 44 / 45, -56 / 15, 32 / 9
_A51, _A52, _A53, _A54 = 19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729
_A61, _A62, _A63, _A64, _A65 = 9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656
_B1, _B3, _B4, _B5, _B6 = 35 / 384, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84
_E1, _E3, _E4, _E5, _E6, _E7 = (71 / 57600, -71 / 16695, 71 / 1920, -17253 / 339200,
                                22 / 525, -1 / 40)


@njit(cache=False)  # takes a kernel as argument: see core/drive.py on caching
def rk_advance(rate, x, u0, dt, v, p, rtol, xscale):
    """Integrate ẋ = rate(x, u0 + v·s, v, p) for s in [0, dt], in place.

    Error per step below rtol·max(|x_i|, xscale_i) (xscale: the state's natural size,
    so that a state passing through zero is still controlled). Returns the number of
    accepted steps.
    """
    n = x.size
    if dt <= 0.0:
        return 0
    k1 = np.empty(n); k2 = np.empty(n); k3 = np.empty(n); k4 = np.empty(n)
    k5 = np.empty(n); k6 = np.empty(n); k7 = np.empty(n)
    y = np.empty(n); xn = np.empty(n)
    s = 0.0
    h = dt
    steps = 0
    rate(x, u0, v, p, k1)
    hmin = dt * 1e-14
    while s < dt:
        if s + h > dt:
            h = dt - s
        for i in range(n):
            y[i] = x[i] + h * _A21 * k1[i]
        rate(y, u0 + v * (s + _C2 * h), v, p, k2)
        for i in range(n):
            y[i] = x[i] + h * (_A31 * k1[i] + _A32 * k2[i])
        rate(y, u0 + v * (s + _C3 * h), v, p, k3)
        for i in range(n):
            y[i] = x[i] + h * (_A41 * k1[i] + _A42 * k2[i] + _A43 * k3[i])
        rate(y, u0 + v * (s + _C4 * h), v, p, k4)
        for i in range(n):
            y[i] = x[i] + h * (_A51 * k1[i] + _A52 * k2[i] + _A53 * k3[i] + _A54 * k4[i])
        rate(y, u0 + v * (s + _C5 * h), v, p, k5)
        for i in range(n):
            y[i] = x[i] + h * (_A61 * k1[i] + _A62 * k2[i] + _A63 * k3[i] + _A64 * k4[i]
                               + _A65 * k5[i])
        rate(y, u0 + v * (s + h), v, p, k6)
        for i in range(n):
            xn[i] = x[i] + h * (_B1 * k1[i] + _B3 * k3[i] + _B4 * k4[i] + _B5 * k5[i]
                                + _B6 * k6[i])
        rate(xn, u0 + v * (s + h), v, p, k7)
        err = 0.0
        for i in range(n):
            e = h * (_E1 * k1[i] + _E3 * k3[i] + _E4 * k4[i] + _E5 * k5[i] + _E6 * k6[i]
                     + _E7 * k7[i])
            sc = rtol * max(abs(x[i]), abs(xn[i]), xscale[i])
            r = abs(e) / sc
            if r > err:
                err = r
        if err <= 1.0 or h <= hmin:
            s += h
            for i in range(n):
                x[i] = xn[i]
                k1[i] = k7[i]
            steps += 1
            fac = 5.0 if err == 0.0 else min(5.0, 0.9 * err ** -0.2)
            h = h * fac
        else:
            h = h * max(0.1, 0.9 * err ** -0.2)
    return steps
