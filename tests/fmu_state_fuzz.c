/* (Helper program, no tests.) Corrupted in-memory FMU states fed to fmi2SetFMUstate,
 * all cases of one FMU in one process (tests/test_fmu_fuzz.py compiles it once and runs
 * it per law in a child process, so that a crash is the child's signal):
 *
 *     fmu_state_fuzz LIB.so GUID AMP NCASES SEED [ONLY]
 *
 * (ONLY: run that one case, to reproduce a failure; the corruptions depend on the
 * case number and the seed only.)
 *
 * A good state is taken after a drive with several reversals (co-simulation and model
 * exchange instances). Each case copies it, corrupts it (an 8-byte field set to a
 * hostile double or a random integer, or 1-8 random bytes), and then
 *   - fmi2SetFMUstate and fmi2DeSerializeFMUstate on the same bytes must agree (one
 *     validation for both ways in);
 *   - an accepted state must evaluate and step: F read, one doStep (CS) or one
 *     continuous-time evaluation + completed step (ME), each timed in CPU time of this
 *     process (a bound on the work done, which holds on a loaded machine);
 *   - the good state then sets again with fmi2OK.
 * Before each case its number and corruption go to stderr (the tail names the case
 * that crashed the process). Last line on stdout:
 *     RESULT cases refused accepted mismatch step_errors restore_errors max_cpu_seconds
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void *C;
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*alloc)(size_t, size_t);
    void (*freem)(void *);
    void *step_finished;
    void *env;
} CB;

static void logger(void *e, const char *n, int s, const char *c, const char *m, ...)
{
    (void)e; (void)n; (void)s; (void)c; (void)m;
}

#define SYM(T, name) typedef T; name##_t name = (name##_t)dlsym(lib, #name); \
    if (!name) { fprintf(stderr, "no %s\n", #name); return 2; }

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void note(const char *fmt, ...)
{
    char buf[160];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) { ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1); (void)w; }
}

int main(int argc, char **argv)
{
    static const double hostile[] = {NAN, INFINITY, -INFINITY, -1.0, 0.0, 0.5, 3.0, 1e10, -1e10,
                                      1e300, -1e300, 5e-324, 2147483648.0, -2147483648.0, 1e-3};
    const int nh = (int)(sizeof hostile / sizeof hostile[0]);
    void *lib;
    const char *guid;
    double amp, max_t = 0.0;
    long ncases, k, refused = 0, accepted = 0, mismatch = 0, step_err = 0, restore_err = 0;
    CB cb = {logger, calloc, free, NULL, NULL};
    unsigned vr_uv[2] = {1, 2}, vr_F = 3;
    int mode;
    long only = -1;
    if (argc < 6) { fprintf(stderr, "usage: LIB GUID AMP NCASES SEED\n"); return 2; }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    guid = argv[2];
    amp = atof(argv[3]);
    ncases = atol(argv[4]);
    if (argc > 6) only = atol(argv[6]);
    {
        SYM(C (*fmi2Instantiate_t)(const char *, int, const char *, const char *, const CB *, int, int), fmi2Instantiate)
        SYM(int (*fmi2SetupExperiment_t)(C, int, double, double, int, double), fmi2SetupExperiment)
        SYM(int (*fmi2EnterInitializationMode_t)(C), fmi2EnterInitializationMode)
        SYM(int (*fmi2ExitInitializationMode_t)(C), fmi2ExitInitializationMode)
        SYM(int (*fmi2EnterContinuousTimeMode_t)(C), fmi2EnterContinuousTimeMode)
        SYM(int (*fmi2SetReal_t)(C, const unsigned *, size_t, const double *), fmi2SetReal)
        SYM(int (*fmi2GetReal_t)(C, const unsigned *, size_t, double *), fmi2GetReal)
        SYM(int (*fmi2DoStep_t)(C, double, double, int), fmi2DoStep)
        SYM(int (*fmi2SetTime_t)(C, double), fmi2SetTime)
        SYM(int (*fmi2CompletedIntegratorStep_t)(C, int, int *, int *), fmi2CompletedIntegratorStep)
        SYM(int (*fmi2GetFMUstate_t)(C, void **), fmi2GetFMUstate)
        SYM(int (*fmi2SetFMUstate_t)(C, void *), fmi2SetFMUstate)
        SYM(int (*fmi2FreeFMUstate_t)(C, void **), fmi2FreeFMUstate)
        SYM(int (*fmi2SerializedFMUstateSize_t)(C, void *, size_t *), fmi2SerializedFMUstateSize)
        SYM(int (*fmi2DeSerializeFMUstate_t)(C, const char *, size_t, void **), fmi2DeSerializeFMUstate)
        SYM(void (*fmi2FreeInstance_t)(C), fmi2FreeInstance)
        for (mode = 0; mode < 2; mode++) {  /* 0: co-simulation, 1: model exchange */
            int cosim = mode == 0, j;
            C c = fmi2Instantiate("fuzz", cosim ? 1 : 0, guid, "", &cb, 0, 0);
            void *good = NULL, *work = NULL, *tmp = NULL;
            size_t n = 0;
            double t = 0.0, h = 1e-3, uv[2];
            if (!c) { fprintf(stderr, "instantiate failed\n"); return 2; }
            fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0);
            fmi2EnterInitializationMode(c);
            uv[0] = 0.0; uv[1] = amp;
            fmi2SetReal(c, vr_uv, 2, uv);
            if (fmi2ExitInitializationMode(c) != 0) { fprintf(stderr, "init failed\n"); return 2; }
            if (!cosim) fmi2EnterContinuousTimeMode(c);
            for (j = 0; j < 40; j++) {  /* a memory with several reversals */
                uv[0] = amp * sin(0.9 * j) * (1.0 + 0.3 * sin(2.7 * j));
                uv[1] = 0.0;
                fmi2SetReal(c, vr_uv, 2, uv);
                if (cosim) fmi2DoStep(c, t, h, 1);
                else { int ev, term; fmi2SetTime(c, t); fmi2CompletedIntegratorStep(c, 1, &ev, &term); }
                t += h;
            }
            if (fmi2GetFMUstate(c, &good) != 0 || fmi2GetFMUstate(c, &work) != 0
                || fmi2SerializedFMUstateSize(c, good, &n) != 0 || n < 16) {
                fprintf(stderr, "no FMU state\n");
                return 2;
            }
            for (k = mode; k < ncases; k += 2) {
                long kind = k % 5, slot, st_set, st_des;
                rng_state = (0x9E3779B97F4A7C15ULL ^ (uint64_t)atol(argv[5])) + 0x2545F4914F6CDD1DULL * (uint64_t)(k + 1);
                rnd(); rnd();
                slot = (long)(rnd() % (n / 8));
                if (only >= 0 && k != only) continue;
                memcpy(work, good, n);
                if (kind <= 1) {
                    double val = hostile[(k / 5) % nh];
                    note("case %ld: slot %ld = %g\n", k, slot, val);
                    memcpy((char *)work + 8 * slot, &val, 8);
                } else if (kind == 2) {
                    uint64_t r = rnd();
                    note("case %ld: slot %ld = int %llu\n", k, slot, (unsigned long long)r);
                    memcpy((char *)work + 8 * slot, &r, 8);
                } else {
                    int m = 1 + (int)(rnd() % 8), q;
                    note("case %ld: %d random bytes\n", k, m);
                    for (q = 0; q < m; q++) ((unsigned char *)work)[rnd() % n] = (unsigned char)rnd();
                }
                st_des = fmi2DeSerializeFMUstate(c, (const char *)work, n, &tmp);
                st_set = fmi2SetFMUstate(c, work);
                if ((st_set == 0) != (st_des == 0)) mismatch++;
                if (st_set != 0) { refused++; }
                else {
                    double F, t0 = now(), dt;
                    int bad = 0;
                    accepted++;
                    if (fmi2GetReal(c, &vr_F, 1, &F) != 0) bad = 1;
                    uv[0] = 0.3 * amp; uv[1] = amp;
                    if (cosim) {
                        if (fmi2SetReal(c, vr_uv, 2, uv) > 1) bad = 1;
                        if (fmi2DoStep(c, t, h, 1) > 2) bad = 1;  /* OK, warning or discard */
                    } else {
                        int ev, term;
                        if (fmi2SetTime(c, t + h) != 0 || fmi2SetReal(c, vr_uv, 2, uv) != 0
                            || fmi2GetReal(c, &vr_F, 1, &F) > 1
                            || fmi2CompletedIntegratorStep(c, 1, &ev, &term) != 0) bad = 1;
                    }
                    dt = now() - t0;
                    if (dt > 0.05) note("slow case %ld: %.3f s\n", k, dt);
                    if (dt > max_t) max_t = dt;
                    step_err += bad;
                }
                if (fmi2SetFMUstate(c, good) != 0) restore_err++;
            }
            fmi2FreeFMUstate(c, &good);
            fmi2FreeFMUstate(c, &work);
            if (tmp) fmi2FreeFMUstate(c, &tmp);
            fmi2FreeInstance(c);
        }
    }
    printf("RESULT %ld %ld %ld %ld %ld %ld %.6f\n", ncases, refused, accepted, mismatch, step_err,
           restore_err, max_t);
    return 0;
}
