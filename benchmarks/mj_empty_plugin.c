/* The floor of MuJoCo's per-plugin dispatch: plugins that do nothing, registered the
 * way hystmech's are (benchmarks/bench_mujoco.py counts mj_step's instructions with one
 * instance of each against the model without plugins). Names as long as
 * "hystmech.LuGre" (14 characters): MuJoCo's slot lookup measures the name (strklen)
 * at each of its 7 plugin loops per step (passive, sensor pos/vel/acc, act_dot,
 * actuation, advance), whatever the plugin's capabilities.
 *   emptyplugin.P0  mjPLUGIN_PASSIVE, compute only
 *   emptyplugin.PA  mjPLUGIN_PASSIVE, compute and advance
 *   emptyplugin.PS  mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR (needstage position) and advance:
 *                   the callbacks hystmech's element plugins have
 *   e.PS            the same with a 4-character name: what the name's length costs
 */
#include <mujoco/mujoco.h>

static int empty_nstate(const mjModel *m, int instance) { (void)m; (void)instance; return 0; }
static int empty_nsensordata(const mjModel *m, int instance, int sensor_id)
{
    (void)m; (void)instance; (void)sensor_id;
    return 1;
}
static int empty_init(const mjModel *m, mjData *d, int instance)
{
    (void)m; (void)d; (void)instance;
    return 0;
}
static void empty_compute(const mjModel *m, mjData *d, int instance, int capability_bit)
{
    (void)m; (void)d; (void)instance; (void)capability_bit;
}
static void empty_advance(const mjModel *m, mjData *d, int instance)
{
    (void)m; (void)d; (void)instance;
}

static void empty_register(const char *name, int caps, int advance)
{
    mjpPlugin p;
    mjp_defaultPlugin(&p);
    p.name = name;
    p.capabilityflags = caps;
    p.needstage = mjSTAGE_POS;
    p.nstate = empty_nstate;
    if (caps & mjPLUGIN_SENSOR) p.nsensordata = empty_nsensordata;
    p.init = empty_init;
    p.compute = empty_compute;
    if (advance) p.advance = empty_advance;
    mjp_registerPlugin(&p);
}

mjPLUGIN_LIB_INIT(emptyplugin)
{
    empty_register("emptyplugin.P0", mjPLUGIN_PASSIVE, 0);
    empty_register("emptyplugin.PA", mjPLUGIN_PASSIVE, 1);
    empty_register("emptyplugin.PS", mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR, 1);
    empty_register("e.PS", mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR, 1);
}
