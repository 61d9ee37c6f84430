/* harness.h — the C tests' one small harness (harness.c): checks that record file:line and keep
 * going (a test passes when none of its checks failed), memory that lives until the end of the test
 * (keep, tmalloc, keep_model: LeakSanitizer then sees a clean run), exact() copies that put a buffer's
 * last byte at the end of its heap block (ASan catches a read one byte past a file), a watchdog,
 * and suites: each test file defines `const test_case NAME_tests[]`, ended by {0}.
 * The last line a run prints is "N passed, N failed"; it exits 1 when a test failed. */
#ifndef MLRT__TEST_HARNESS_H
#define MLRT__TEST_HARNESS_H

#define _POSIX_C_SOURCE 200809L /* alarm(): a watchdog turns a hanging test into a failure */
#include "mlrt.h"
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;
#define T(fn) {#fn, fn}

/* Runs the tests of every suite (NULL-terminated list) whose name contains `only` (NULL: all), each
 * under a watchdog of timeout_s seconds; returns the exit status. */
int run_tests(const test_case *const *suites, const char *only, unsigned timeout_s);

/* ------------------------------------------------------------------ checks */

extern const char *g_test_name;
void check_at(int ok, const char *file, int line, const char *fmt, ...);

#define CHECK(c) check_at(!!(c), __FILE__, __LINE__, "CHECK(%s) failed", #c)
#define CHECK_MSG(c, ...) check_at(!!(c), __FILE__, __LINE__, __VA_ARGS__) /* a failure says what, printf-style */
#define CHECK_INT(a, b)                                                                                     \
    do {                                                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                 \
        check_at(a_ == b_, __FILE__, __LINE__, "%s == %s failed: %lld vs %lld", #a, #b, a_, b_);            \
    } while (0)
#define CHECK_STR(a, b)                                                                                     \
    do {                                                                                                    \
        const char *a_ = (a), *b_ = (b);                                                                    \
        check_at(a_ && b_ && strcmp(a_, b_) == 0, __FILE__, __LINE__, "%s == %s failed: \"%s\" vs \"%s\"",  \
                 #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                           \
    } while (0)
#define CHECK_CONTAINS(hay, needle)                                                                         \
    do {                                                                                                    \
        const char *h_ = (hay), *n_ = (needle);                                                             \
        check_at(h_ && strstr(h_, n_) != NULL, __FILE__, __LINE__, "\"%s\" does not contain \"%s\"",        \
                 h_ ? h_ : "(null)", n_);                                                                   \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                                               \
    do {                                                                                                    \
        double a_ = (a), b_ = (b);                                                                          \
        check_at(fabs(a_ - b_) <= (tol), __FILE__, __LINE__, "%s ~ %s failed: %.9g vs %.9g (tol %g)", #a,  \
                 #b, a_, b_, (double)(tol));                                                                \
    } while (0)
/* Exactly the same float, bit for bit (distinguishes -0 from +0). */
#define CHECK_BITS(a, b)                                                                                    \
    do {                                                                                                    \
        float a_ = (a), b_ = (b);                                                                           \
        check_at(memcmp(&a_, &b_, 4) == 0, __FILE__, __LINE__, "%s === %s failed: %a vs %a", #a, #b,       \
                 (double)a_, (double)b_);                                                                   \
    } while (0)

/* --------------------------------------------------------- per-test memory */

void *keep(void *p);                        /* freed after the test */
void *tmalloc(size_t n);                    /* zeroed, kept */
mlrt_model *keep_model(mlrt_model *m);      /* mlrt_free'd after the test */
const uint8_t *exact(const void *p, size_t n); /* a kept heap copy of exactly n bytes (never NULL) */

#endif
