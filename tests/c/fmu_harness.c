/* A minimal FMI 2.0 co-simulation master in C, built for each platform whose FMU binary
 * is run under an emulator (tests/test_fmu_emulated.py): the win64 build runs under
 * wine, the aarch64-linux build under qemu-user, the native build is the reference.
 * One process steps every FMU named in the plan file, so that the emulator starts once.
 *
 * Plan file, one FMU per line:  <binary path> <guid> <n states> <amplitude> <frequency>
 * Output, per FMU and communication point k:  <k> <F> <x_0> ... <x_{n-1}>  (%.17g),
 * or a line "error <message>" when a call fails. Input: the two-harmonic displacement
 * u = A (sin 2πft + 0.3 sin(2π·3.7ft + 0.4)) and its derivative v, as the tests' drive. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
typedef HMODULE lib_t;
static lib_t lib_open(const char *p) { return LoadLibraryA(p); }
static void *lib_sym(lib_t l, const char *n) { return (void *)GetProcAddress(l, n); }
#else
#include <dlfcn.h>
typedef void *lib_t;
static lib_t lib_open(const char *p) { return dlopen(p, RTLD_NOW | RTLD_LOCAL); }
static void *lib_sym(lib_t l, const char *n) { return dlsym(l, n); }
#endif

#include "fmi2Functions.h"

#define N_STEPS 400
#define H 1e-3

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status st,
                   fmi2String cat, fmi2String msg, ...)
{
    (void)env; (void)name; (void)cat;
    if (st >= fmi2Error) {
        va_list ap;
        va_start(ap, msg);
        printf("log ");
        vprintf(msg, ap);
        printf("\n");
        va_end(ap);
    }
}

static void *alloc_mem(size_t n, size_t s) { return calloc(n, s); }

#define SYM(T, name) T name = (T)lib_sym(lib, #name); \
    if (!name) { printf("error missing %s\n", #name); return 1; }

static int run_one(const char *path, const char *guid, int nx, double amp, double freq)
{
    lib_t lib = lib_open(path);
    fmi2CallbackFunctions cb = {logger, alloc_mem, free, NULL, NULL};
    fmi2ValueReference vr_in[2] = {1, 2}, *vr_out;
    double *val, in[2], w = 2.0 * 3.141592653589793 * freq;
    fmi2Component c;
    int k, i;
    if (!lib) { printf("error cannot load %s\n", path); return 1; }
    vr_out = (fmi2ValueReference *)malloc(sizeof *vr_out * (size_t)(nx + 1));
    val = (double *)malloc(sizeof *val * (size_t)(nx + 1));
    if (!vr_out || !val) { printf("error out of memory\n"); return 1; }
    {
        SYM(fmi2InstantiateTYPE *, fmi2Instantiate)
        SYM(fmi2SetupExperimentTYPE *, fmi2SetupExperiment)
        SYM(fmi2EnterInitializationModeTYPE *, fmi2EnterInitializationMode)
        SYM(fmi2ExitInitializationModeTYPE *, fmi2ExitInitializationMode)
        SYM(fmi2SetRealTYPE *, fmi2SetReal)
        SYM(fmi2GetRealTYPE *, fmi2GetReal)
        SYM(fmi2DoStepTYPE *, fmi2DoStep)
        SYM(fmi2TerminateTYPE *, fmi2Terminate)
        SYM(fmi2FreeInstanceTYPE *, fmi2FreeInstance)
        c = fmi2Instantiate("h", fmi2CoSimulation, guid, "", &cb, fmi2False, fmi2False);
        if (!c) { printf("error instantiate\n"); return 1; }
        vr_out[0] = 3;
        for (i = 0; i < nx; i++) vr_out[1 + i] = 100000 + i;
        if (fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) > fmi2Warning
            || fmi2EnterInitializationMode(c) > fmi2Warning
            || fmi2ExitInitializationMode(c) > fmi2Warning) {
            printf("error initialisation\n");
            return 1;
        }
        for (k = 0; k <= N_STEPS; k++) {
            double t = k * H;
            in[0] = amp * (sin(w * t) + 0.3 * sin(3.7 * w * t + 0.4));
            in[1] = amp * w * (cos(w * t) + 1.11 * cos(3.7 * w * t + 0.4));
            if (fmi2SetReal(c, vr_in, 2, in) > fmi2Warning
                || fmi2GetReal(c, vr_out, (size_t)(1 + nx), val) > fmi2Warning) {
                printf("error step %d\n", k);
                return 1;
            }
            printf("%d", k);
            for (i = 0; i <= nx; i++) printf(" %.17g", val[i]);
            printf("\n");
            if (k < N_STEPS && fmi2DoStep(c, t, H, fmi2True) > fmi2Warning) {
                printf("error doStep %d\n", k);
                return 1;
            }
        }
        fmi2Terminate(c);
        fmi2FreeInstance(c);
    }
    free(vr_out);
    free(val);
    return 0;
}

int main(int argc, char **argv)
{
    char path[4096], guid[128];
    int nx, bad = 0;
    double amp, freq;
    FILE *f;
    if (argc != 2 || !(f = fopen(argv[1], "r"))) { printf("error usage: harness PLAN\n"); return 2; }
    while (fscanf(f, "%4095s %127s %d %lf %lf", path, guid, &nx, &amp, &freq) == 5) {
        printf("fmu %s\n", path);
        bad |= run_one(path, guid, nx, amp, freq);
    }
    fclose(f);
    fflush(stdout);
    return bad;
}
