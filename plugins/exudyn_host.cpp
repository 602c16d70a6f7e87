/* The trial/commit host of hystmech elements in Exudyn, compiled: the connectors'
 * force user function runs without Python.
 *
 * Exudyn (pybind11 2.13) converts a user function into a std::function; pybind11 takes
 * the raw C function pointer, with no Python call per evaluation, when the object is a
 * pybind11 function wrapping a stateless C++ function of exactly the user function's
 * type (pybind11/functional.h, "stateless" fast path). hm_spring and hm_cartesian below
 * are such functions: `double(const MainSystem&, double t, int item, double u, double v,
 * double k, double d, double offset)` (CoordinateSpringDamper, TorsionalSpringDamper)
 * and the 3-vector form (CartesianSpringDamper). MainSystem is only named (the type's
 * mangled name must match); it is never dereferenced.
 *
 * Which element a call belongs to: the connector's `offset` (scalar connectors) or
 * `stiffness[0]` (Cartesian) holds the slot number and its `damping` (`damping[0]`) a
 * random tag of the slot; Exudyn passes them to a user function unchanged and, with a
 * user function, uses none of them (the Jacobian is computed numerically). The
 * connector index given by Exudyn and the tag are checked against the slot's, so a
 * connector of another system or a changed number is refused, never served another
 * element's state.
 *
 * Trial/commit (plugins/exudyn.py): a call advances a COPY of the state committed at the
 * last accepted step from the committed (u_c, t_c) to the call's (u, t) by the law's C
 * kernel (components/LAW.c) and returns its force; the copy of the latest call is kept.
 * commit(host, t, adopt), called once per accepted step by the post-step function
 * post_step below (itself a stateless C++ function Exudyn calls through its pointer:
 * in plain use no Python runs per step) or by the Python one when a user post-step
 * function is chained, adopts that copy when the latest call was at t: every Exudyn
 * solver evaluates the
 * forces last at the accepted state (implicit: the Newton residual at the converged
 * iterate; explicit: the end-of-step accelerations, computeEndOfStepAccelerations, which
 * the Python side checks). Slots without such a call are reported back and committed
 * from the measured u (commit_at).
 *
 * Rare events (a slot not anchored in this solve, time running backwards, many calls
 * without a commit) call back into Python (host callback, with the GIL) so that the
 * state is loaded from the system's data coordinates there; no Python runs otherwise.
 *
 * Laws with switch points under explicit fixed-step solvers: the step-mean force over
 * the predicted path u_n + v_n·s, s ∈ [0, h], cut at the switch points (the C twin of
 * plugins/_switch.py, the same rule as the Python host).
 */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;

class MainSystem {};

typedef void (*hm_adv_fn)(double *x, double u0, double u1, double dt, double v,
                          const double *p, double rtol);
typedef double (*hm_force_fn)(const double *x, double u, double v, const double *p);
typedef double (*hm_switch_fn)(const double *x, double u, double dir, const double *p);
typedef const char *(*hm_fail_fn)(void);
typedef void (*hm_rate_fn)(const double *x, double u, double v, const double *p, double *out);

struct Host {
    double h = NAN;          // fixed step of an explicit solver (NaN: unknown)
    bool h_given = false;    // h set by the caller, else inferred from the commits
    bool windowed = false;   // explicit fixed-step solver: step mean at switch points
    double t_last = NAN, dt_last = NAN;
    int changes = 0;         // consecutive step-length changes (an adaptive solver)
    long calls = 0;          // trial calls since the last commit
    bool alive = true;
    py::object callback;     // callback(event, slot, t): "anchor" or "check"
    std::string error;       // a kernel failure, reported by the next commit
    std::vector<int> slots;
    const MainSystem *ms = nullptr;  // the system whose connectors call this host
    bool fast = false;       // post_step commits in C (set by Python when nothing else
                             // needs doing per step)
    double t_python = INFINITY;  // from this time on post_step hands over to Python
};

struct Slot {
    int host = -1, item = -1;
    double tag = 0.0;        // a random number the connector carries beside the slot
    hm_adv_fn adv = nullptr;
    hm_force_fn force = nullptr;
    hm_switch_fn sw = nullptr;
    hm_fail_fn fail = nullptr;
    std::vector<double> p, xc, xt, xm;
    double uc = 0.0, tc = 0.0, u0 = 0.0, rtol = 1e-8;
    bool anchored = false;
    bool has_last = false;
    double tl = 0.0, ul = 0.0;
    bool mean_valid = false;
    double mean_tc = 0.0, mean_uc = 0.0, mean_F = 0.0;
    double ax[3] = {1.0, 0.0, 0.0};   // Cartesian: unit axis and reference u
    double uref = 0.0;
};

/* An element on the adaptive route (route="ode1" with coordinate markers): its state x is
 * the VELOCITY of a NodeGenericODE2 of unit mass (z̈ = ẋ = rate), so that one
 * ObjectGenericODE2 over [the markers' nodes..., the state node] sees u, v and x in one
 * call of its force user function (hm_generic) and returns both the connector force on
 * the markers' coordinates and the law's rate ẋ(x, u, v) on the state's: Exudyn's own
 * integrator (DOPRI5 ..., error estimate included) advances x, no Python per stage. */
struct OdeSlot {
    int host = -1, item = -1;
    const void *ms = nullptr;    // the MainSystem the object belongs to
    hm_force_fn force = nullptr;
    hm_rate_fn rate = nullptr;
    std::vector<double> p;
    int nq = 0;                  // length of the object's coordinate vector
    int i0 = -1, i1 = -1;        // u = q[i1] - q[i0] - u0 (-1: a ground marker, q = 0)
    int ix = 0, nx = 0;          // the state: q_t[ix .. ix + nx)
    double u0 = 0.0;
};

/* never destroyed: a host's Python callback must not be released after the interpreter
 * has finalised (static destructors run at process exit) */
static std::vector<std::unique_ptr<Host>> &hosts = *new std::vector<std::unique_ptr<Host>>();
static std::vector<std::unique_ptr<Slot>> &slots = *new std::vector<std::unique_ptr<Slot>>();
static std::vector<std::unique_ptr<OdeSlot>> &oslots = *new std::vector<std::unique_ptr<OdeSlot>>();

/* a call whose slot number does not name a slot of that connector (its offset or
 * stiffness[0] was changed by hand): answered with NaN and reported by the next commit */
static std::string lookup_error;

static void bad_slot(int id, int item)
{
    if (lookup_error.empty())
        lookup_error = "connector " + std::to_string(item) + " called the hystmech host with slot "
                       + std::to_string(id) + ", which is not its element: its offset and damping "
                       "(stiffness[0] and damping[0] for a CartesianSpringDamper) hold the slot "
                       "number and its tag and must not be changed";
}

static bool inside(double w, double a, double b, double dir)
{
    return dir * (w - a) > 0.0 && dir * (b - w) > 0.0;
}

static void take_fail(Slot &s)
{
    if (s.fail) {
        const char *f = s.fail();
        if (f && hosts[s.host]->error.empty())
            hosts[s.host]->error = std::string("an element's kernel failed: ") + f;
    }
}

/* mean force over the monotone segment a -> b travelled in the time T at constant
 * speed, advancing x along it: cut at the switch points, midpoint rule on the pieces
 * (plugins/_switch.py mean_force) */
static double mean_force(Slot &s, double *x, double a, double b, double T, double v)
{
    double d = b > a ? 1.0 : -1.0, vs = (b - a) / T, cur = a, acc = 0.0;
    const double *p = s.p.data();
    for (int k = 0; k < 64 && cur != b; k++) {
        double w = s.sw(x, cur, d, p);
        double nxt = inside(w, cur, b, d) ? w : b, mid = 0.5 * (cur + nxt);
        s.adv(x, cur, mid, T * (mid - cur) / (b - a), vs, p, s.rtol);
        acc += (nxt - cur) * s.force(x, mid, v, p);
        s.adv(x, mid, nxt, T * (nxt - mid) / (b - a), vs, p, s.rtol);
        cur = nxt;
    }
    if (cur != b) {
        s.adv(x, cur, b, T * (b - cur) / (b - a), vs, p, s.rtol);
        acc += (b - cur) * s.force(x, b, v, p);
    }
    return acc / (b - a);
}

static void event(Host &H, const char *what, int id, double t)
{
    if (!H.callback) return;
    py::gil_scoped_acquire gil;
    H.callback(what, id, t);      // a Python exception propagates to Exudyn's handler
}

static double trial(const MainSystem &ms, int id, double tag, int item, double t, double u,
                    double v)
{
    if (id < 0 || id >= (int)slots.size() || slots[id]->item != item
        || slots[id]->tag != tag) {
        bad_slot(id, item);
        return NAN;
    }
    Slot &s = *slots[id];
    Host &H = *hosts[s.host];
    if (H.ms != &ms) {
        // another host at this address belongs to a system that is gone
        for (auto &h : hosts)
            if (h->ms == &ms) h->ms = nullptr;
        H.ms = &ms;
    }
    H.calls++;
    if (!s.anchored || t < s.tc) {
        event(H, "anchor", id, t);
    } else if (H.calls > 256 && H.calls % 256 == 1) {
        event(H, "check", id, t);
    }
    u -= s.u0;
    const double *p = s.p.data();
    size_t n = s.xc.size();
    if (n) std::memcpy(s.xt.data(), s.xc.data(), n * sizeof(double));
    if (!s.anchored) {
        // no state to advance from (no data node reachable): the state as it is
        return s.force(s.xt.data(), u, v, p);
    }
    double dt = t - s.tc;
    if (dt > 0.0)
        s.adv(s.xt.data(), s.uc, u, dt, (u - s.uc) / dt, p, s.rtol);
    else if (u != s.uc)
        s.adv(s.xt.data(), s.uc, u, 0.0, v, p, s.rtol);
    s.tl = t;
    s.ul = u;
    s.has_last = true;
    if (s.sw && H.windowed && !std::isnan(H.h)) {
        double h = H.h;
        if (dt == 0.0 && u == s.uc) {
            // the step's first stage: decide the window once per step
            s.mean_valid = false;
            if (v != 0.0) {
                double dir = v > 0.0 ? 1.0 : -1.0, ue = s.uc + v * h;
                if (ue != s.uc && inside(s.sw(s.xc.data(), s.uc, dir, p), s.uc, ue, dir)) {
                    s.xm = s.xc;
                    s.mean_F = mean_force(s, s.xm.data(), s.uc, ue, h, v);
                    s.mean_valid = true;
                    s.mean_tc = s.tc;
                    s.mean_uc = s.uc;
                }
            }
        }
        if (s.mean_valid && s.mean_tc == s.tc && s.mean_uc == s.uc && dt >= 0.0
            && dt <= h * (1.0 + 1e-9)) {
            take_fail(s);
            return s.mean_F;
        }
    }
    take_fail(s);
    return s.force(s.xt.data(), u, v, p);
}

/* CoordinateSpringDamper / TorsionalSpringDamper: Exudyn applies -F on marker 1 */
static double hm_spring(const MainSystem &ms, double t, int item, double u, double v,
                        double k, double d, double offset)
{
    (void)k;
    return trial(ms, (int)offset, d, item, t, u, v);
}

/* CartesianSpringDamper along a fixed unit axis a: u = d·a − u_ref, force F·a */
static std::array<double, 3> hm_cartesian(const MainSystem &ms, double t, int item,
                                          std::array<double, 3> d, std::array<double, 3> v,
                                          std::array<double, 3> k, std::array<double, 3> c,
                                          std::array<double, 3> offset)
{
    (void)offset;
    int id = (int)k[0];
    if (id < 0 || id >= (int)slots.size()) {
        bad_slot(id, item);
        return {NAN, NAN, NAN};
    }
    const double *a = slots[id]->ax;
    double u = d[0] * a[0] + d[1] * a[1] + d[2] * a[2] - slots[id]->uref;
    double w = v[0] * a[0] + v[1] * a[1] + v[2] * a[2];
    double F = trial(ms, id, c[0], item, t, u, w);
    return {F * a[0], F * a[1], F * a[2]};
}

/* 0: every slot committed; >0: that many slots had no call at t (commit_at);
 * -1: the step length changed at three consecutive steps; -2: a kernel failed or a
 * connector named a slot not its own (take_error says which) */
static int commit(Host &H, double t, bool adopt)
{
    H.calls = 0;
    if (!H.h_given) {
        if (!std::isnan(H.t_last)) {
            double dt = t - H.t_last;
            bool same = !std::isnan(H.dt_last) && std::fabs(dt - H.dt_last) <= 1e-9 * dt;
            H.h = (dt > 0.0 && same) ? dt : NAN;
            if (!std::isnan(H.dt_last) && dt > 0.0 && !same) {
                if (++H.changes >= 3) return -1;
            } else {
                H.changes = 0;
            }
            H.dt_last = dt;
        }
        H.t_last = t;
    }
    int missing = 0;
    for (int id : H.slots) {
        Slot &s = *slots[id];
        if (!s.anchored) { missing++; continue; }
        if (adopt && s.has_last && s.tl == t) {
            std::swap(s.xc, s.xt);
            s.uc = s.ul;
            s.tc = t;
        } else if (t != s.tc) {
            missing++;
        }
        s.has_last = false;
    }
    if (!H.error.empty()) return -2;
    if (!lookup_error.empty()) {
        H.error = lookup_error;
        lookup_error.clear();
        return -2;
    }
    return missing;
}

/* The post-step user function (Exudyn calls it once per accepted step, as a C function
 * pointer like the force functions): the host of this system commits every slot in C.
 * Python runs only when the Python side asked for it (a solve's first steps, its last
 * step, user functions that read the data coordinates every step, a solver whose last
 * evaluation is not at the accepted state) or when the commit needs it (a slot without
 * a call at t, an error): callback("post", r, t), r the commit's result or 1000 when
 * nothing was committed yet. A system none of whose connectors has called the host yet
 * (the call at the solve's start time, before any force evaluation) has nothing to
 * commit: the first force evaluation anchors the slots. */
static bool hm_post_step(const MainSystem &ms, double t)
{
    static thread_local Host *last = nullptr;
    Host *H = nullptr;
    if (last && last->alive && last->ms == &ms)
        H = last;
    else
        for (auto &h : hosts)
            if (h->alive && h->ms == &ms) { H = last = h.get(); break; }
    if (!H) {
        if (lookup_error.empty()) return true;
        // no connector of this system found its slot (a changed offset or tag): report
        // through any live host (the exception reaches this solve either way)
        for (auto &h : hosts)
            if (h->alive && h->callback) {
                h->error = lookup_error;
                lookup_error.clear();
                py::gil_scoped_acquire gil;
                return h->callback("post", -2, t).cast<bool>();
            }
        return true;
    }
    int r = 1000;
    if (H->fast && t < H->t_python) {
        r = commit(*H, t, true);
        if (r == 0) return true;
    }
    if (!H->callback) return true;
    py::gil_scoped_acquire gil;
    return H->callback("post", r, t).cast<bool>();
}

/* ObjectGenericODE2 force user function of an adaptive-route element (OdeSlot above):
 * f = −F on u's marker-1 coordinate, +F on its marker-0 coordinate, ẋ on the state.
 * The slot is found by the system and the object index; an object of no slot gets NaN
 * (reported by the solve's result: Exudyn stops on a NaN state). */
static std::vector<double> hm_generic(const MainSystem &ms, double t, int item,
                                      std::vector<double> q, std::vector<double> qt)
{
    (void)t;
    static thread_local int last = -1;
    OdeSlot *s = nullptr;
    if (last >= 0 && last < (int)oslots.size() && oslots[last]->ms == (const void *)&ms
        && oslots[last]->item == item)
        s = oslots[last].get();
    else
        for (int i = 0; i < (int)oslots.size(); i++)
            if (oslots[i]->ms == (const void *)&ms && oslots[i]->item == item) {
                s = oslots[i].get();
                last = i;
                break;
            }
    std::vector<double> f(q.size(), 0.0);
    if (!s || (int)q.size() != s->nq || (int)qt.size() != s->nq) {
        for (auto &y : f) y = NAN;
        return f;
    }
    const double *p = s->p.data();
    double u = (s->i1 >= 0 ? q[s->i1] : 0.0) - (s->i0 >= 0 ? q[s->i0] : 0.0) - s->u0;
    double v = (s->i1 >= 0 ? qt[s->i1] : 0.0) - (s->i0 >= 0 ? qt[s->i0] : 0.0);
    const double *x = qt.data() + s->ix;
    double F = s->force(x, u, v, p);
    if (s->i1 >= 0) f[s->i1] -= F;
    if (s->i0 >= 0) f[s->i0] += F;
    s->rate(x, u, v, p, f.data() + s->ix);
    return f;
}

/* vectors cross as (address, length) of float64 buffers the caller owns (numpy's
 * .ctypes.data): no numpy headers, a short compile */
static std::vector<double> from_addr(std::uintptr_t a, std::size_t n)
{
    const double *p = reinterpret_cast<const double *>(a);
    return std::vector<double>(p, p + n);
}

PYBIND11_MODULE(hystmech_exudyn_host, m)
{
    m.doc() = "hystmech trial/commit host for Exudyn connectors (plugins/exudyn_host.cpp)";
    m.def("spring", &hm_spring, "CoordinateSpringDamper/TorsionalSpringDamper user function");
    m.def("cartesian", &hm_cartesian, "CartesianSpringDamper user function");
    m.def("post_step", &hm_post_step, "post-step user function: the commit of every slot");
    m.def("generic", &hm_generic, "ObjectGenericODE2 force user function (adaptive route)");
    m.def("ms_address", [](py::handle mbs) {
        // the C++ MainSystem a Python mbs wraps: the reference Exudyn passes to user
        // functions (checked against a force call's by exudyn_build._probe)
        auto *inst = reinterpret_cast<py::detail::instance *>(mbs.ptr());
        return reinterpret_cast<std::uintptr_t>(inst->get_value_and_holder().value_ptr());
    });
    m.def("host_ms", [](int hid) { return reinterpret_cast<std::uintptr_t>(hosts.at(hid)->ms); });
    m.def("new_ode_slot", [](int hid, std::uintptr_t ms, std::uintptr_t force,
                             std::uintptr_t rate, std::uintptr_t p, std::size_t np, int nq,
                             int i0, int i1, int ix, int nx, double u0) {
        OdeSlot *s = new OdeSlot();
        s->host = hid;
        s->ms = reinterpret_cast<const void *>(ms);
        s->force = reinterpret_cast<hm_force_fn>(force);
        s->rate = reinterpret_cast<hm_rate_fn>(rate);
        s->p = from_addr(p, np);
        s->nq = nq; s->i0 = i0; s->i1 = i1; s->ix = ix; s->nx = nx; s->u0 = u0;
        oslots.emplace_back(s);
        return (int)oslots.size() - 1;
    });
    m.def("set_ode_item", [](int id, int item) {
        // a live system has one address: a slot of another host at the same address
        // and item belongs to a system that is gone (its host not yet finalised)
        OdeSlot &s = *oslots.at(id);
        for (auto &o : oslots)
            if (o.get() != &s && o->ms == s.ms && o->host != s.host) {
                o->item = -2;
                o->ms = nullptr;
            }
        s.item = item;
    });
    m.def("new_host", [](py::object callback) {
        hosts.emplace_back(new Host());
        hosts.back()->callback = callback;
        return (int)hosts.size() - 1;
    });
    m.def("close_host", [](int hid) {
        // the system is gone: its slots answer NaN from now on and free their memory
        Host &H = *hosts.at(hid);
        H.alive = false;
        H.callback = py::object();
        for (auto &o : oslots)
            if (o->host == hid) { o->item = -2; o->ms = nullptr; }
        for (int id : H.slots) {
            Slot &s = *slots[id];
            s.item = -2;
            s.anchored = false;
            std::vector<double>().swap(s.p);
            std::vector<double>().swap(s.xt);
            std::vector<double>().swap(s.xm);
        }
    });
    m.def("new_slot", [](int hid, int item, std::uintptr_t adv, std::uintptr_t force,
                         std::uintptr_t sw, std::uintptr_t fail, std::uintptr_t p,
                         std::size_t np, std::uintptr_t x0, std::size_t nx, double u0,
                         double rtol, double tag) {
        Slot *s = new Slot();
        s->host = hid;
        s->item = item;
        s->tag = tag;
        s->adv = reinterpret_cast<hm_adv_fn>(adv);
        s->force = reinterpret_cast<hm_force_fn>(force);
        s->sw = reinterpret_cast<hm_switch_fn>(sw);
        s->fail = reinterpret_cast<hm_fail_fn>(fail);
        s->p = from_addr(p, np);
        s->xc = from_addr(x0, nx);
        s->xt = s->xc;
        s->xm = s->xc;
        s->u0 = u0;
        s->rtol = rtol;
        slots.emplace_back(s);
        int id = (int)slots.size() - 1;
        hosts.at(hid)->slots.push_back(id);
        return id;
    });
    m.def("set_item", [](int id, int item) { slots.at(id)->item = item; });
    m.def("set_axis", [](int id, double a0, double a1, double a2, double uref) {
        Slot &s = *slots.at(id);
        s.ax[0] = a0; s.ax[1] = a1; s.ax[2] = a2; s.uref = uref;
    });
    m.def("set_solver", [](int hid, double h, bool h_given, bool windowed) {
        Host &H = *hosts.at(hid);
        H.h = h; H.h_given = h_given; H.windowed = windowed;
        H.t_last = NAN; H.dt_last = NAN; H.changes = 0;
    });
    m.def("h", [](int hid) { return hosts.at(hid)->h; });
    m.def("anchor", [](int id, std::uintptr_t x, double uc, double tc) {
        Slot &s = *slots.at(id);
        s.xc = from_addr(x, s.xc.size());
        s.uc = uc;
        s.tc = tc;
        s.anchored = true;
        s.has_last = false;
        s.mean_valid = false;
    });
    m.def("release", [](int hid) {
        // the solve ended: the next one loads its state from the data coordinates
        for (int id : hosts.at(hid)->slots) {
            slots[id]->anchored = false;
            slots[id]->has_last = false;
        }
    });
    m.def("committed", [](int id, std::uintptr_t out) {
        // the committed state into the caller's buffer (length n_states); (u_c, t_c, anchored)
        Slot &s = *slots.at(id);
        if (s.xc.size())
            std::memcpy(reinterpret_cast<double *>(out), s.xc.data(), s.xc.size() * sizeof(double));
        return py::make_tuple(s.uc, s.tc, s.anchored);
    });
    m.def("commit", [](int hid, double t, bool adopt) { return commit(*hosts.at(hid), t, adopt); });
    m.def("set_fast", [](int hid, bool fast, double t_python) {
        Host &H = *hosts.at(hid);
        H.fast = fast;
        H.t_python = t_python;
    });
    m.def("needs", [](int hid, double t) {
        // the slots that commit(hid, t) could not commit
        py::list r;
        for (int id : hosts.at(hid)->slots) {
            Slot &s = *slots[id];
            if (!s.anchored || s.tc != t) r.append(id);
        }
        return r;
    });
    m.def("commit_at", [](int id, double u, double t) {
        // commit from a measured input u (without u0) at the accepted time t
        Slot &s = *slots.at(id);
        u -= s.u0;
        double dt = t - s.tc;
        if (dt > 0.0 || u != s.uc)
            s.adv(s.xc.data(), s.uc, u, dt > 0.0 ? dt : 0.0, dt > 0.0 ? (u - s.uc) / dt : 0.0,
                  s.p.data(), s.rtol);
        s.uc = u;
        s.tc = t;
        s.has_last = false;
        take_fail(s);
    });
    m.def("last", [](int id) {
        // the latest force evaluation of a slot since its last commit: (t, u, valid)
        Slot &s = *slots.at(id);
        return py::make_tuple(s.tl, s.ul, s.has_last);
    });
    m.def("take_error", [](int hid) {
        Host &H = *hosts.at(hid);
        std::string e = H.error;
        H.error.clear();
        return e;
    });
}
