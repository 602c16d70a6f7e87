/* Step an MJCF model N times from qvel = 1 (benchmarks/bench_mujoco.py counts the
 * instructions of mj_step in it under callgrind: repeatable on a loaded machine).
 *
 *   mj_step PLUGIN_LIB_OR_EMPTY MODEL.xml NSTEPS
 */
#include <stdio.h>
#include <stdlib.h>

#include <mujoco/mujoco.h>

int main(int argc, char **argv)
{
    char err[1000] = "";
    mjModel *m;
    mjData *d;
    long n, i;
    int k;
    if (argc != 4) {
        fprintf(stderr, "usage: mj_step PLUGIN_LIB_OR_EMPTY MODEL.xml NSTEPS\n");
        return 2;
    }
    if (argv[1][0]) mj_loadPluginLibrary(argv[1]);
    m = mj_loadXML(argv[2], NULL, err, sizeof err);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return 3;
    }
    d = mj_makeData(m);
    for (k = 0; k < m->nv; k++) d->qvel[k] = 1.0;
    n = atol(argv[3]);
    for (i = 0; i < n; i++) mj_step(m, d);
    printf("%.17g\n", d->qpos[0]);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
}
