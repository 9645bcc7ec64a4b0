/*
 * check: the few assertions the unit tests use.  A failed CHECK prints where
 * and why and makes the test exit non-zero at the end (check_done()).
 */
#ifndef PERCORE_TEST_CHECK_H
#define PERCORE_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                           \
    do {                                                                      \
        check_count++;                                                        \
        if (!(cond)) {                                                        \
            check_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                   \
        }                                                                     \
    } while (0)

#define CHECK_EQ_LL(a, b)                                                     \
    do {                                                                      \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);       \
        check_count++;                                                        \
        if (check_a_ != check_b_) {                                           \
            check_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_);          \
        }                                                                     \
    } while (0)

#define CHECK_MEM(p, n, lit)                                                  \
    do {                                                                      \
        check_count++;                                                        \
        if ((n) != sizeof(lit) - 1 || memcmp((p), (lit), (n)) != 0) {         \
            check_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s equals \"%s\" (got %zu bytes: %.*s)\n", \
                    __FILE__, __LINE__, #p, lit, (size_t)(n), (int)((n) > 200 ? 200 : (n)), (const char *)(p)); \
        }                                                                     \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
