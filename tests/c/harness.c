/* harness.c — the C tests' harness (harness.h). */
#include "harness.h"
#include <signal.h>
#include <unistd.h>

/* ------------------------------------------------------------------ checks */

const char *g_test_name = "";
static int g_failed_checks; /* in the current test */

void check_at(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) return;
    g_failed_checks++;
    fprintf(stderr, "%s:%d: [%s] ", file, line, g_test_name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* --------------------------------------------------------- per-test memory */

static void **g_tmp;
static size_t g_ntmp, g_captmp;
static mlrt_model **g_models;
static size_t g_nmodels, g_capmodels;

void *keep(void *p) {
    if (!p) return p;
    if (g_ntmp == g_captmp) {
        g_captmp = g_captmp ? 2 * g_captmp : 64;
        g_tmp = realloc(g_tmp, g_captmp * sizeof *g_tmp);
        if (!g_tmp) abort();
    }
    g_tmp[g_ntmp++] = p;
    return p;
}

void *tmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) abort();
    return keep(p);
}

mlrt_model *keep_model(mlrt_model *m) {
    if (!m) return m;
    if (g_nmodels == g_capmodels) {
        g_capmodels = g_capmodels ? 2 * g_capmodels : 16;
        g_models = realloc(g_models, g_capmodels * sizeof *g_models);
        if (!g_models) abort();
    }
    g_models[g_nmodels++] = m;
    return m;
}

static void free_test_memory(void) {
    for (size_t i = 0; i < g_ntmp; i++) free(g_tmp[i]);
    for (size_t i = 0; i < g_nmodels; i++) mlrt_free(g_models[i]);
    g_ntmp = g_nmodels = 0;
}

const uint8_t *exact(const void *p, size_t n) {
    uint8_t *c = malloc(n ? n : 1);
    if (!c) abort();
    if (n) memcpy(c, p, n);
    return keep(c);
}

/* ------------------------------------------------------------------ running */

static int g_passed, g_failed;
static unsigned g_timeout_s;

static void on_timeout(int sig) {
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "TIMEOUT %s (over %u s)\n%d passed, %d failed\n", g_test_name, g_timeout_s,
                     g_passed, g_failed + 1);
    if (n > 0 && write(STDOUT_FILENO, msg, (size_t)n) < 0) _exit(2);
    _exit(1);
}

int run_tests(const test_case *const *suites, const char *only, unsigned timeout_s) {
    g_timeout_s = timeout_s;
    signal(SIGALRM, on_timeout);
    for (const test_case *const *s = suites; *s; s++)
        for (const test_case *t = *s; t->name; t++) {
            if (only && !strstr(t->name, only)) continue;
            g_test_name = t->name;
            g_failed_checks = 0;
            fflush(stdout);
            alarm(timeout_s);
            t->fn();
            alarm(0);
            free_test_memory();
            if (g_failed_checks) {
                g_failed++;
                fprintf(stderr, "FAIL %s (%d checks)\n", t->name, g_failed_checks);
            } else {
                g_passed++;
                printf("ok   %s\n", t->name);
            }
        }
    free(g_tmp);
    free(g_models);
    g_tmp = NULL, g_models = NULL, g_captmp = g_capmodels = 0;
    fflush(stderr);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
