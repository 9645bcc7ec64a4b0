/*
 * test_pqsort: Redis's partial quicksort (server/base/pqsort.c): for random
 * arrays with many equal keys and random wanted ranges, the positions in the
 * range hold what a full sort puts there, everything before them is not
 * greater and everything after not smaller, and no element is lost.  (The
 * order among equal keys, Redis's, is what tests/compat/scripts/geo.txt
 * checks against redis-server.)
 */
#include "percore/pqsort.h"

#include "check.h"

#include <stdlib.h>

struct item {
    int key;
    int id;
};

static int by_key(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return x->key > y->key ? 1 : x->key < y->key ? -1 : 0;
}

int main(void)
{
    srand(3);
    for (int round = 0; round < 3000; round++) {
        int n = 1 + rand() % 120, keys = 1 + rand() % 20;
        struct item a[120], sorted[120];
        for (int i = 0; i < n; i++)
            a[i] = sorted[i] = (struct item){rand() % keys, i};
        qsort(sorted, (size_t)n, sizeof(*sorted), by_key);
        int l = rand() % n, r = l + rand() % (n - l);
        pqsort(a, (size_t)n, sizeof(*a), by_key, (size_t)l, (size_t)r);
        int ok = 1, seen[120] = {0};
        for (int i = 0; i < n; i++) {
            seen[a[i].id]++;
            if (i >= l && i <= r && a[i].key != sorted[i].key)
                ok = 0;
            if (i < l && a[i].key > a[l].key)
                ok = 0;
            if (i > r && a[i].key < a[r].key)
                ok = 0;
        }
        for (int i = 0; i < n; i++)
            if (seen[i] != 1)
                ok = 0;
        CHECK(ok);
    }
    return check_done("test_pqsort");
}
