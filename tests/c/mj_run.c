/* A MuJoCo user's C program without Python (tests/test_plugins_mujoco_c.py): load the
 * hystmech plugin library (a file: mj_loadPluginLibrary; a folder:
 * mj_loadAllPluginLibraries), load a model (MJCF, or .mjb from mj_saveModel), start at
 * its keyframe 0 if it has one, step it and write qpos, qvel, plugin_state and
 * sensordata (plugin sensors included) after every step as raw doubles.
 *
 *   mj_run LIB_OR_DIR MODEL NSTEPS OUT [FIRST_DIR]
 *
 * FIRST_DIR: plugin libraries to load before (an .mjb stores MuJoCo's plugin slot
 * numbers, so a process that reads it must register the same plugins in the same order
 * as the one that wrote it: the mujoco wheel's bundled plugins, then hystmech's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mujoco/mujoco.h>

int main(int argc, char **argv)
{
    char err[1000] = "";
    struct stat st;
    mjModel *m;
    mjData *d;
    FILE *out;
    long n, i;
    size_t len;
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: mj_run LIB_OR_DIR MODEL NSTEPS OUT [FIRST_DIR]\n");
        return 2;
    }
    if (argc == 6) mj_loadAllPluginLibraries(argv[5], NULL);
    if (stat(argv[1], &st) == 0 && S_ISDIR(st.st_mode)) mj_loadAllPluginLibraries(argv[1], NULL);
    else mj_loadPluginLibrary(argv[1]);
    len = strlen(argv[2]);
    if (len > 4 && strcmp(argv[2] + len - 4, ".mjb") == 0) m = mj_loadModel(argv[2], NULL);
    else m = mj_loadXML(argv[2], NULL, err, sizeof err);
    if (!m) {
        fprintf(stderr, "load error: %s\n", err);
        return 3;
    }
    d = mj_makeData(m);
    if (m->nkey > 0) mj_resetDataKeyframe(m, d, 0);
    n = atol(argv[3]);
    out = fopen(argv[4], "wb");
    if (!out) return 4;
    for (i = 0; i < n; i++) {
        mj_step(m, d);
        fwrite(d->qpos, sizeof(mjtNum), m->nq, out);
        fwrite(d->qvel, sizeof(mjtNum), m->nv, out);
        fwrite(d->plugin_state, sizeof(mjtNum), m->npluginstate, out);
        fwrite(d->sensordata, sizeof(mjtNum), m->nsensordata, out);
    }
    fclose(out);
    printf("%d %d %d %d %d\n", m->nq, m->nv, m->npluginstate, m->nplugin, m->nsensordata);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
}
