"""Frequency response of the belt–tensioner rig by continuation of periodic orbits.

Bastien et al. (2007), §4.4, Fig. 21 computes max(T) − min(T) by brute force: one
20 s simulation per (f1, Ω) from the static state (eqs. (59a)–(59d)). Here each f1
level is one branch of periodic orbits followed in Ω by pseudo-arclength continuation
(:mod:`hystmech.systems.periodic.continuation`), with the same rig, forcing f(t) = f1·cos(Ωt)
(f0 = φ = 0, eq. (59b)), static start (eq. (51)) and c0 = c·Ω_ident/Ω (eq. (31)) for
Masing. The branch carries its Floquet stability, so coexisting responses, the unstable
part between two folds and the jump frequencies (the folds) come out directly.

Scenario ``belt-tensioner-frf-continuation``: for each tensioner model and f1 level it
writes ``frf_branches.csv`` (model, f1, omega, T_amplitude, stable, max_multiplier,
fresh_jacobian, leading_real_multiplier), ``frf_folds.csv`` (model, f1, kind, omega, T_amplitude) and the figure
``frf_continuation`` over the brute-force map of ``belt-tensioner-frf`` (an existing
``frf.csv`` given in the TOML, else its reduced grid run here). A branch without fold
states how close it comes to one (:func:`fold_evidence`: the largest real multiplier
and how long a transient needs there, against the sweep's 20 s runs).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from ..rigs.belt_tensioner import belt_assembly, paper_tensioner
from .continuation import Branch, continue_orbits
from .shooting import peak_to_peak
from .sweep import _table

MODELS = ("mdm", "masing")


def tension_amplitude_of(res) -> float:
    """max(T) − min(T) [N] over one period of a SimResult of the rig, T = K(u1 − u2) +
    C(u̇1 − u̇2) + T0 (Bastien et al. (2007), eqs. (38a), (59a))."""
    return peak_to_peak(res.t, res.force("belt") + res.force("belt_damping"))


def rig_at(model: str, f1: float):
    """build(Ω) -> the rig as an Assembly at forcing pulsation Ω [rad/s], f(t) =
    f1·cos(Ω·t) [N] (eqs. (59b), (51); c0 by eq. (31) for Masing)."""
    model = str(model).lower()
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)} (got {model!r})")
    f1 = float(f1)
    if not (math.isfinite(f1) and f1 > 0):
        raise ValueError(f"f1 must be in (0, inf) N (got {f1!r})")

    def build(Om):
        return belt_assembly(paper_tensioner(model, Omega0=Om), t0=0.0, f0=0.0, f1=f1,
                             Omega0=Om, phi=0.0)[0]
    return build


def solver_settings(model: str, rtol: float = 1e-6, h: float = 1e-5, tol: float | None = None):
    """(method, options, shooting tol) of the rig's period map: compiled RK45 at rtol
    for the modified Dahl tensioner, the projection scheme at step h [s] for Masing
    (eq. (57)); tol default 1e-4 / 1e-3 (see :func:`frf_branch`)."""
    if str(model).lower() == "mdm":
        return "RK45", dict(rtol=float(rtol)), 1e-4 if tol is None else tol
    return "projection", dict(h=float(h)), 1e-3 if tol is None else tol


def frf_branch(model: str, f1: float, omega_min: float = 10.0, omega_max: float = 125.0, *,
               rtol: float = 1e-6, h: float = 1e-5, tol: float | None = None, ds: float = 0.02,
               ds_max: float = 0.1, state_weight: float = 0.05, jacobian_every: int = 3,
               max_points: int = 500, n_samples: int = 256,
               max_measure_step: float | None = 0.1, n_periods: int = 1,
               progress=None) -> Branch:
    """One FRF branch of the rig: periodic orbits from Ω = omega_min to omega_max [rad/s]
    at shaker amplitude f1 [N]; ``measure`` = tension amplitude [N].

    The modified Dahl tensioner is shot with the compiled RK45 (rtol), Masing with the
    projection scheme (step h [s], eq. (57)). tol: shooting residual relative to each
    state's excursion (default 1e-4 for mdm; 1e-3 for Masing, whose first-order map is
    only piecewise smooth where the slider meets its box, so Newton stalls near 1e-4
    there). ds, ds_max, state_weight,
    jacobian_every, max_points, max_measure_step (relative change of the tension
    amplitude per step, 10 %), n_periods (orbits of period n·2π/Ω, e.g. 3 for a
    subharmonic): see :func:`hystmech.systems.periodic.continuation.continue_orbits`.
    """
    build = rig_at(model, f1)
    for name, v in (("omega_min", omega_min), ("omega_max", omega_max)):
        if not (math.isfinite(float(v)) and float(v) > 0):
            raise ValueError(f"{name} must be in (0, inf) rad/s (got {v!r})")
    if not omega_max > omega_min:
        raise ValueError(f"omega_max must be > omega_min = {omega_min!r} (got {omega_max!r})")
    method, opts, tol = solver_settings(model, rtol, h, tol)
    return continue_orbits(build, float(omega_min), float(omega_max), method=method,
                           options=opts, measure=tension_amplitude_of, ds=ds, ds_max=ds_max,
                           tol=tol, state_weight=state_weight, jacobian_every=jacobian_every,
                           max_points=max_points, n_samples=n_samples,
                           max_measure_step=max_measure_step, n_periods=n_periods,
                           progress=progress)


def jumps(branch: Branch) -> list:
    """The folds of a branch: jump frequencies Ω [rad/s] and amplitudes [N]."""
    return [{"omega": s["p"], "T_amplitude": s["measure"]} for s in branch.folds()]


def leading_real_multiplier(multipliers) -> float:
    """The largest real positive Floquet multiplier of one orbit (the neutral μ = 1 of a
    stuck Masing slider is removed structurally before, see
    :mod:`hystmech.systems.periodic.stability`); 0 when there is none. A fold (saddle-node, jump)
    is where it crosses +1."""
    mu = np.asarray(multipliers, dtype=complex)
    real = mu[(np.abs(mu.imag) <= 1e-9 * np.maximum(np.abs(mu), 1e-300)) & (mu.real > 0)].real
    return float(real.max()) if real.size else 0.0


def fold_evidence(branch: Branch, sweep_time: float = 20.0, near_peak: float = 0.5) -> dict:
    """Where a branch comes closest to a fold: the orbit with the largest real
    multiplier μ < 1 (:func:`leading_real_multiplier`, among the orbits with a fresh
    finite-difference monodromy and an amplitude above ``near_peak`` × the branch's
    peak), its Ω [rad/s] and amplitude
    [N], and how long a transient takes there to decay to 1 % (ln 0.01 / ln μ periods,
    in s), against the ``sweep_time`` [s] of one brute-force run (Bastien et al. (2007),
    eq. (59a): 20 s): a longer decay means the sweep does not reach the steady state
    there and can show a jump the periodic orbits do not have."""
    lead = np.array([leading_real_multiplier(mu) for mu in branch.multipliers])
    if branch.fresh is not None and branch.fresh.any():
        lead[~branch.fresh] = -1.0      # Broyden-updated monodromies are only estimates
    # a jump of a resonance: where the amplitude is high (elsewhere a real μ near 1 is a
    # slowly relaxing tensioner state, e.g. the stuck modified Dahl at 13 N)
    lead[branch.measure < near_peak * branch.measure.max()] = -1.0
    i = int(np.argmax(lead))
    mu = max(float(lead[i]), 0.0)
    om = float(branch.p[i])
    n = math.log(0.01) / math.log(mu) if 0.0 < mu < 1.0 else None
    decay_s = None if n is None else n * branch.n_periods * 2 * math.pi / om
    dp = np.diff(branch.p)
    k = int(np.argmax(np.abs(np.diff(branch.measure)) / np.maximum(np.abs(dp), 1e-300))) \
        if dp.size else 0
    return {"omega": om, "T_amplitude": float(branch.measure[i]), "multiplier": mu,
            "decay_periods_1pct": n, "decay_s_1pct": decay_s,
            "sweep_reaches_steady_state": decay_s is not None and decay_s <= sweep_time,
            "steepest_slope_N_per_rad_s": float(abs(branch.measure[k + 1] - branch.measure[k])
                                                / max(abs(dp[k]), 1e-300)) if dp.size else 0.0,
            "steepest_omega": float(branch.p[k]) if dp.size else om}


# -- scenario runner --------------------------------------------------------------------------

def _brute_force(path, models, f1s, om_min, om_max, n_omega, out, progress):
    """{(model, f1): (omega, amplitude)} from an existing frf.csv, or the reduced grid
    of ``belt-tensioner-frf`` computed now (steady-state detection on)."""
    from .sweep import frf_grid, read_frf, run_sweep

    if path:
        p = Path(path)
        if not p.exists():
            raise ValueError(f"overlay.frf_csv: no such file {str(p)!r}")
        vals = read_frf(p)
        if not vals:
            raise ValueError(f"overlay.frf_csv: {str(p)!r} has no FRF points (columns "
                             f"model, f1, omega, T_amplitude)")
        src = str(p)
    else:
        from ...limits import first

        om = np.linspace(om_min, om_max, n_omega)
        # (a work-limited run: the first points of each model's grid)
        pts = [p for m in models for p in first([q for q in frf_grid([m], f1s, om)])]
        r = run_sweep(pts, Path(out) / "frf.csv", progress=lambda f, m: progress(0.3 * f, m),
                      steady_state=True)
        vals = r["values"]
        src = f"reduced grid computed now ({len(pts)} points, {r['wall_s']:.1f} s)"
    bf = {}
    for (m, a, w), amp in vals.items():
        bf.setdefault((m, round(a, 9)), []).append((w, amp))
    return {k: np.array(sorted(v)).T for k, v in bf.items()}, src


def run(cfg: dict, out, progress):
    """Scenario runner ``belt-tensioner-frf-continuation`` (Bastien et al. (2007), Fig. 21
    by continuation: stable and unstable branches, jump frequencies)."""
    import matplotlib.pyplot as plt

    from ...runner_io import ScenarioOutput

    b = _table(cfg, "branches", ("models", "f1", "omega_min", "omega_max"))
    c = _table(cfg, "continuation", ("ds", "ds_max", "state_weight", "mdm_tol", "masing_tol",
                                     "jacobian_every", "max_points", "n_samples",
                                     "max_measure_step"))
    s = _table(cfg, "solver", ("mdm_rtol", "masing_h"))
    o = _table(cfg, "overlay", ("frf_csv", "reduced_n_omega"))
    ccfg = _table(cfg, "coexisting", ("models", "f1", "near", "max_sites", "amplitudes",
                                      "max_points"))
    fcfg = _table(cfg, "fold_curves", ("from_f1", "f1_min", "f1_max", "omega_min",
                                       "omega_max", "max_points", "sweep_csv"))
    models = [str(m).lower() for m in b.get("models", MODELS)]
    for m in models:
        if m not in MODELS:
            raise ValueError(f"branches.models: each must be one of {', '.join(MODELS)} "
                             f"(got {m!r})")
    f1s = [float(v) for v in b.get("f1", [13.0, 120.0, 300.0])]
    om_min, om_max = float(b.get("omega_min", 10.0)), float(b.get("omega_max", 125.0))
    n_om = int(o.get("reduced_n_omega", 24))
    if n_om < 2:
        raise ValueError(f"overlay.reduced_n_omega must be in [2, inf) (got {n_om})")
    if fcfg:
        # checked before any branch is computed (not after an hour of continuation)
        a0 = float(fcfg.get("from_f1", 320.0))
        if "mdm" not in models or not any(abs(a - a0) <= 1e-9 * max(abs(a0), 1.0)
                                          for a in f1s):
            raise ValueError(f"fold_curves.from_f1 = {a0:g} N must be one of the mdm "
                             f"branches' f1 levels (branches.models = {models}, "
                             f"branches.f1 = {[float(a) for a in f1s]})")
    from ...limits import capped, max_work

    kw = dict(rtol=float(s.get("mdm_rtol", 1e-6)), h=float(s.get("masing_h", 1e-5)),
              ds=float(c.get("ds", 0.02)),
              ds_max=float(c.get("ds_max", 0.1)), state_weight=float(c.get("state_weight", 0.05)),
              jacobian_every=int(c.get("jacobian_every", 3)),
              # a work-limited run: the first points of each branch
              max_points=capped(int(c.get("max_points", 500)), least=2),
              n_samples=int(c.get("n_samples", 256)),
              max_measure_step=float(c.get("max_measure_step", 0.1)))
    bf, bf_src = _brute_force(str(o.get("frf_csv", "") or ""), models, f1s, om_min, om_max,
                              n_om, out, progress)

    rows = ["model,f1,omega,T_amplitude,stability,max_multiplier,max_multiplier_error,"
            "fresh_jacobian,leading_real_multiplier"]
    frows = ["model,f1,kind,omega,T_amplitude,exact"]
    branches = {}
    summary_b = {}
    n_tot = len(models) * len(f1s)
    k = 0
    for m in models:
        for a in f1s:
            tic = time.perf_counter()

            def prog(frac, msg, k=k, m=m, a=a):
                progress(0.3 + (0.6 if fcfg else 0.7) * (k + frac) / n_tot,
                         f"{m} f1 = {a:g} N: {msg}")
            tol = float(c.get(f"{m}_tol", 1e-4 if m == "mdm" else 1e-3))
            br = frf_branch(m, a, om_min, om_max, progress=prog, tol=tol, **kw)
            branches[(m, a)] = br
            for i in range(br.p.size):
                mu = float(np.abs(br.multipliers[i]).max()) if br.multipliers[i].size else 0.0
                er = br.multiplier_errors[i]
                mer = float(er[int(np.argmax(np.abs(br.multipliers[i])))]) if er.size else 0.0
                rows.append(f"{m},{a!r},{float(br.p[i])!r},{float(br.measure[i])!r},"
                            f"{br.stability[i]},{mu!r},{mer!r},{int(br.fresh[i])},"
                            f"{leading_real_multiplier(br.multipliers[i])!r}")
            for sp in br.special:
                if sp["kind"] == "restart":
                    continue
                frows.append(f"{m},{a!r},{sp['kind']},{float(sp['p'])!r},"
                             f"{float(sp['measure'])!r},{int(bool(sp.get('exact')))}")
            summary_b[f"{m}_f1_{a:g}"] = {
                "points": int(br.p.size), "simulations": int(br.n_sims),
                "wall_s": round(time.perf_counter() - tic, 2), "message": br.message,
                "unstable_points": int((br.stability == "unstable").sum()),
                "undecided_points": int((br.stability == "undecided").sum()),
                "monodromy": br.monodromy_source,
                "jumps_omega": [round(j["omega"], 4) for j in jumps(br)],
                "peak_omega": float(br.p[int(np.argmax(br.measure))]),
                "peak_T_amplitude": float(br.measure.max()),
                "bifurcations": [{"kind": sp["kind"], "omega": sp["p"]} for sp in br.special
                                 if sp["kind"] not in ("fold", "restart")],
                "restarts_omega": [round(sp["p"], 4) for sp in br.special
                                   if sp["kind"] == "restart"],
                "nearest_fold": {k2: (round(v, 6) if isinstance(v, float) else v)
                                 for k2, v in fold_evidence(br).items()}}
            k += 1

    names = {"mdm": "modified Dahl", "masing": "Masing with viscous damping"}
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 4.8), squeeze=False)
    cmap = plt.get_cmap("viridis")
    for ax, m in zip(axes[0], models):
        for i, a in enumerate(f1s):
            col = cmap(i / max(len(f1s) - 1, 1))
            key = (m, round(a, 9))
            if key in bf:
                ax.plot(bf[key][0], bf[key][1], "o", ms=3, color=col, alpha=0.5,
                        label=f"{a:g} N sweep")
            br = branches[(m, a)]
            st = br.stable
            # stable parts solid, unstable dashed (split into runs of equal stability)
            edges = np.flatnonzero(np.diff(st.astype(int))) + 1
            for seg in np.split(np.arange(st.size), edges):
                if seg.size == 0:
                    continue
                ext = np.arange(max(seg[0] - 1, 0), seg[-1] + 1) if seg[0] > 0 else seg
                ax.plot(br.p[ext], br.measure[ext], "-" if st[seg[0]] else "--", color=col,
                        lw=1.2, label=f"{a:g} N branch" if seg[0] == 0 else None)
            for j in jumps(br):
                ax.axvline(j["omega"], color=col, ls=":", lw=0.8)
                ax.plot(j["omega"], j["T_amplitude"], "x", color="k", ms=6)
            if not jumps(br):
                # no fold: mark where a resonance comes close to one (leading real μ < 1)
                ev = fold_evidence(br)
                if ev["multiplier"] > 0.98:
                    ax.plot(ev["omega"], ev["T_amplitude"], "^", color=col, ms=5, mfc="none")
                    ax.annotate(f"μ={ev['multiplier']:.3f}", (ev["omega"], ev["T_amplitude"]),
                                fontsize=6, color=col, xytext=(4, -8),
                                textcoords="offset points")
        ax.set_xlabel("Ω [rad/s]")
        ax.set_ylabel("max(T) − min(T) [N]")
        ax.set_title(names[m], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    fig.suptitle("Periodic orbits by continuation (lines; dashed: unstable, ×: folds, △: "
                 "largest real Floquet multiplier < 1 of a resonance without fold) over the "
                 "brute-force sweep (dots)", fontsize=8)
    fig.tight_layout()
    # the verdict on jumps: folds found, or how close the branches come to one
    nf = sum(len(jumps(b)) for b in branches.values())
    if nf:
        verdict = f"{nf} fold(s): see frf_folds.csv (jump frequencies) and the dashed branches"
    else:
        (mc, ac), bc = max(branches.items(), key=lambda kv: fold_evidence(kv[1])["multiplier"])
        ev = fold_evidence(bc)
        verdict = (f"no fold and no unstable orbit on any branch (a fold needs a real Floquet "
                   f"multiplier crossing +1); closest: {mc} at f1 = {ac:g} N, leading real "
                   f"multiplier {ev['multiplier']:.4f} at Omega = {ev['omega']:.3f} rad/s "
                   f"(T amplitude {ev['T_amplitude']:.0f} N), where a transient needs "
                   f"{ev['decay_s_1pct'] or float('inf'):.0f} s to decay to 1 % against the "
                   f"20 s of one brute-force run")
    summary = {"brute_force": bf_src, "settings": kw, "folds": verdict, "branches": summary_b}
    figures = {"frf_continuation": fig}
    files = {}
    if ccfg:
        c_sum, c_rows = _coexisting_part(ccfg, branches, models, f1s, om_min, om_max, kw,
                                         axes[0], c)
        summary["coexisting"] = c_sum
        files["frf_coexisting.csv"] = "\n".join(c_rows) + "\n"
    if fcfg:
        a0 = float(fcfg.get("from_f1", 320.0))
        br0 = next(b for (m, a), b in branches.items() if m == "mdm" and
                   abs(a - a0) <= 1e-9 * max(abs(a0), 1.0))
        if max_work() is not None and not any(f.get("exact") for f in br0.folds()):
            # the cut branch ends before its fold: nothing to continue, said so
            summary["fold_curve"] = {"skipped": f"the work limit ({max_work()} points per "
                                                "branch) ends the branch at f1 = "
                                                f"{a0:g} N before its first fold"}
        else:
            fc_sum, fc_rows, fc_fig = _fold_curve_part(
                fcfg, branches, om_min, om_max,
                lambda f, msg: progress(0.9 + 0.1 * f, f"mdm f1 = {a0:g} N: {msg}"))
            summary["fold_curve"] = fc_sum
            frows += fc_rows
            figures["bistable_region"] = fc_fig
    files.update({"frf_branches.csv": "\n".join(rows) + "\n",
                  "frf_folds.csv": "\n".join(frows) + "\n"})
    return ScenarioOutput(summary=summary, figures=figures, files=files)


def _coexisting_part(ccfg, branches, models, f1s, om_min, om_max, kw, axes, c):
    """The ``[coexisting]`` table: orbits coexisting with each branch and not on it
    (:func:`hystmech.systems.periodic.coexisting.search_coexisting`) at its folds,
    near-folds and peak; CSV rows with a branch id (0: the continued branch, not
    repeated), drawn in red on the FRF axes."""
    from .coexisting import coexisting_rows, search_coexisting

    want_m = [str(m).lower() for m in ccfg.get("models", models)]
    want_f = [float(v) for v in ccfg.get("f1", f1s)]
    near = float(ccfg.get("near", 0.02))
    amps = tuple(float(v) for v in ccfg.get("amplitudes", (0.5, 1.5, 2.5)))
    max_sites = int(ccfg.get("max_sites", 3))
    rows = ["model,f1,branch_id,kind,omega,T_amplitude,stability"]
    out = {}
    for ax, m in zip(axes, models):
        if m not in want_m:
            continue
        for a in f1s:
            if not any(abs(a - w) <= 1e-9 * max(abs(w), 1.0) for w in want_f):
                continue
            method, opts, tol = solver_settings(m, kw["rtol"], kw["h"],
                                                c.get(f"{m}_tol"))
            found = search_coexisting(
                branches[(m, a)], rig_at(m, a), (om_min, om_max), near=near,
                amplitudes=amps, max_sites=max_sites, method=method, options=opts,
                measure=tension_amplitude_of, tol=tol, ds=kw["ds"], ds_max=kw["ds_max"],
                state_weight=kw["state_weight"], jacobian_every=kw["jacobian_every"],
                max_points=int(ccfg.get("max_points", 300)))
            rows += coexisting_rows(found, prefix=f"{m},{a!r},")
            out[f"{m}_f1_{a:g}"] = [{"branch_id": cb.branch_id, "kind": cb.kind,
                                     "found_at_omega": cb.site, "source": cb.source,
                                     "T_amplitude": cb.orbit[2]} for cb in found]
            for cb in found:
                for b in cb.parts:
                    ax.plot(b.p, b.measure, "-", color="tab:red", lw=1.0)
                ax.plot(cb.orbit[0], cb.orbit[2], "*", color="tab:red", ms=7)
    return out, rows


def fold_curve(model: str, fold: dict, f1: float, phase: float, *, f1_range=(250.0, 400.0),
               omega_range=(15.0, 45.0), direction: float = -1.0, ds: float = 0.05,
               ds_max: float = 0.3, max_points: int = 120, progress=None):
    """The fold curve of the rig in (Ω [rad/s], f1 [N]) from an exact fold of a branch
    (``fold``: an entry of Branch.special with ``exact`` True; its branch's section
    ``phase``), by :func:`hystmech.systems.periodic.bifurcation.continue_folds`: the edges of the
    bistable region of Fig. 21 of Bastien et al. (2007) and its cusp(s), with the tension
    amplitude (eq. (59a)) of the orbit at each point. Smooth tensioners only (the
    modified Dahl model); ValueError for Masing. progress: True, a callable
    progress(fraction, message) or None."""
    from .bifurcation import continue_folds
    from .shooting import Shooter

    if str(model).lower() != "mdm":
        raise ValueError(f"model must be 'mdm' for a fold curve (the variational equations "
                         f"need a smooth law; got {model!r})")
    if not fold.get("exact"):
        raise ValueError("fold must be an exactly located fold (Branch.special entry with "
                         "exact=True)")

    def build2(om, a):
        return rig_at(model, a)(om)

    def measure(y, om, a):
        sh = Shooter(build2(om, a), phase=phase, method="RK45", options=dict(rtol=1e-8))
        return tension_amplitude_of(sh.sample(y, 256))

    sh = Shooter(build2(fold["p"], f1), phase=phase, method="RK45", options=dict(rtol=1e-8))
    scale = sh.scales(fold["y"])
    return continue_folds(build2, fold["y"], fold["p"], f1, scale=scale, p_scale=1.0,
                          q_scale=10.0, q_range=f1_range, p_range=omega_range, phase=phase,
                          direction=direction, ds=ds, ds_max=ds_max, max_points=max_points,
                          measure=measure, progress=progress)


def _fold_curve_part(fcfg, branches, om_min, om_max, progress=None):
    """The fold curve of the modified Dahl rig from the exact folds of the branch at
    fold_curves.from_f1, drawn in (Ω, f1) over the bistable windows of brute-force
    up/down sweeps (fold_curves.sweep_csv, as written by benchmarks/sweep_belt_bistable.py:
    model, f1, direction, omega, T_amplitude, settle)."""
    import matplotlib.pyplot as plt

    from ...limits import capped
    from .stepped_sweep import bistable_window

    a0 = float(fcfg.get("from_f1", 320.0))
    br = next((b for (m, a), b in branches.items() if m == "mdm" and
               abs(a - a0) <= 1e-9 * max(abs(a0), 1.0)), None)
    if br is None:
        raise ValueError(f"fold_curves.from_f1 = {a0:g} N must be one of the mdm branches' "
                         f"f1 levels")
    ex = [s for s in br.folds() if s.get("exact")]
    if not ex:
        raise ValueError(f"fold_curves: the mdm branch at f1 = {a0:g} N has no exactly "
                         f"located fold to start the fold curve from")
    f1r = (float(fcfg.get("f1_min", 250.0)), float(fcfg.get("f1_max", 400.0)))
    omr = (float(fcfg.get("omega_min", om_min)), float(fcfg.get("omega_max", om_max)))
    tic = time.process_time()
    fc = fold_curve("mdm", ex[0], a0, float(br.phase[ex[0]["index"]]), f1_range=f1r,
                    omega_range=omr, max_points=capped(int(fcfg.get("max_points", 120)),
                                                       least=2),
                    progress=progress)
    cpu = time.process_time() - tic
    rows = [f"mdm,{float(q)!r},fold-curve,{float(p)!r},{float(t)!r},1"
            for p, q, t in zip(fc.p, fc.q, fc.measure)]
    rows += [f"mdm,{c['q']!r},cusp,{c['p']!r},nan,0" for c in fc.cusps]
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    ax.plot(fc.p, fc.q, "-", color="C0", lw=1.5, label="fold curve (continuation)")
    for c in fc.cusps:
        ax.plot(c["p"], c["q"], "k*", ms=9, label="cusp")
    windows = {}
    path = str(fcfg.get("sweep_csv", "") or "")
    if path:
        sw = _read_sweeps(path)
        for a, d in sorted(sw.items()):
            if "up" in d and "down" in d:
                w = bistable_window(d["up"], d["down"])
                windows[a] = w
                ax.plot([w[0], w[1]] if w else [], [a, a] if w else [], "|-", color="C3",
                        lw=2, ms=10)
                if w is None:
                    ax.plot(np.mean(d["up"]["omega"]), a, "x", color="C3")
        ax.plot([], [], "|-", color="C3", label="bistable window of the up/down sweeps "
                                                  "(x: none)")
    for a, b in branches.items():
        if a[0] == "mdm":
            for s in b.folds():
                ax.plot(s["p"], a[1], "o", mfc="none", color="k", ms=5)
    ax.set_xlabel("Ω [rad/s]")
    ax.set_ylabel("f1 [N]")
    ax.set_title("Modified Dahl rig: bistable region in (Ω, f1)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    summary = {"points": int(fc.p.size), "cpu_s": round(cpu, 2), "message": fc.message,
               "cusps": [{"omega": round(c["p"], 5), "f1": round(c["q"], 3)} for c in fc.cusps],
               "f1_range_of_curve": [round(float(fc.q.min()), 3), round(float(fc.q.max()), 3)],
               "sweep_windows": {f"{a:g}": (None if w is None else [round(w[0], 3),
                                                                     round(w[1], 3)])
                                 for a, w in windows.items()}}
    return summary, rows, fig


def _read_sweeps(path):
    """{f1: {"up"|"down": {"omega", "measure"}}} from a stepped-sweep CSV."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"fold_curves.sweep_csv: no such file {str(p)!r}")
    out = {}
    for ln in p.read_text().splitlines()[1:]:
        parts = ln.split(",")
        if len(parts) < 5:
            continue
        a, d, w, t = float(parts[1]), parts[2], float(parts[3]), float(parts[4])
        e = out.setdefault(a, {}).setdefault(d, {"omega": [], "measure": []})
        e["omega"].append(w)
        e["measure"].append(t)
    return {a: {d: {k: np.array(v) for k, v in e.items()} for d, e in dd.items()}
            for a, dd in out.items()}
