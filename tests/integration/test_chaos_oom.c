/*
 * test_chaos_oom: out of memory under a write flood, maxmemory 4mb with
 * maxmemory-policy noeviction.
 *
 * FLOODERS threads, one connection each, pipeline SETs of 1000-byte values
 * in chunks of CHUNK (keys "oom:<flooder>:<i>", spread over every shard),
 * PER_FLOODER each: about 8x maxmemory in all.  Every reply must be +OK or
 * exactly Redis 7.0's "-OOM command not allowed when used memory >
 * 'maxmemory'." (some of each).  Meanwhile a reader keeps reading a key on
 * every shard (GET and MGET) and must get the right value each time, within
 * the reply timeout.  Afterwards the server has not aborted, every write
 * that was acknowledged is there (a missing one counts as a lost write),
 * DBSIZE is exactly those plus the reader's keys, and once maxmemory is
 * lifted writes are accepted again.  PER_FLOODER is quartered under a
 * sanitizer.  Prints the RELIABILITY line.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define OOM_REPLY "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
#define FLOODERS 4
#define CHUNK 500
#define VALUE_SIZE 1000

static int port;
static int per_flooder = 8000;
static char value[VALUE_SIZE + 1];
static char rkeys[PC_SPREAD_KEYS][64];
static atomic_int flooding;
static atomic_long reads_done;

struct flooder {
    int id;
    long ok, oom, other;
    unsigned char *acked; /* per key: its SET got +OK */
};

static void *flooder_main(void *arg)
{
    struct flooder *f = arg;
    struct pc_conn *c = pc_conn_open(port);
    for (int base = 0; c && base < per_flooder; base += CHUNK) {
        char *req = NULL;
        size_t len = 0, cap = 0;
        int m = per_flooder - base < CHUNK ? per_flooder - base : CHUNK;
        for (int i = 0; i < m; i++) {
            char key[64];
            snprintf(key, sizeof(key), "oom:%d:%d", f->id, base + i);
            const char *a[] = {"SET", key, value};
            pc_resp_encode(&req, &len, &cap, 3, a, NULL);
        }
        int sent = pc_conn_write(c, req, len) == 0;
        free(req);
        for (int i = 0; sent && i < m; i++) {
            char *r;
            size_t rl;
            if (pc_conn_read_reply(c, &r, &rl, 20000) != 1) {
                pc_fail("flooder %d: no reply to SET %d", f->id, base + i);
                sent = 0;
                break;
            }
            if (strcmp(r, "+OK\r\n") == 0) {
                f->ok++;
                f->acked[base + i] = 1;
            } else if (strcmp(r, OOM_REPLY) == 0) {
                f->oom++;
            } else if (f->other++ < 3) {
                pc_fail("flooder %d: SET %d got %s", f->id, base + i, r);
            }
            free(r);
        }
        if (!sent)
            break;
    }
    pc_conn_close(&c);
    atomic_fetch_sub(&flooding, 1);
    return NULL;
}

/* reads a key on every shard while the flood lasts: each must hold its value */
static void *reader_main(void *arg)
{
    (void)arg;
    struct pc_conn *c = pc_conn_open(port);
    const char *mget[1 + PC_SPREAD_KEYS];
    mget[0] = "MGET";
    char mget_exp[PC_SPREAD_KEYS * 96 + 16];
    size_t off = (size_t)snprintf(mget_exp, sizeof(mget_exp), "*%d\r\n", PC_SPREAD_KEYS);
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        mget[1 + i] = rkeys[i];
        off += (size_t)snprintf(mget_exp + off, sizeof(mget_exp) - off, "$%zu\r\n%s\r\n", strlen(rkeys[i]),
                                rkeys[i]);
    }
    int bad = 0;
    while (c && atomic_load(&flooding) > 0 && bad < 3) {
        for (int i = 0; i < PC_SPREAD_KEYS && bad < 3; i++) {
            char exp[96];
            snprintf(exp, sizeof(exp), "$%zu\r\n%s\r\n", strlen(rkeys[i]), rkeys[i]);
            bad += !pc_expect(c, exp, "GET", rkeys[i], NULL);
        }
        bad += !pc_expectv(c, mget_exp, off, 1 + PC_SPREAD_KEYS, mget, NULL);
        atomic_fetch_add(&reads_done, PC_SPREAD_KEYS + 1);
    }
    pc_conn_close(&c);
    return NULL;
}

/* acknowledged keys of f that are gone, checked with pipelined EXISTS */
static long missing_acked(struct pc_conn *c, const struct flooder *f)
{
    long missing = 0;
    for (int base = 0; base < per_flooder; base += CHUNK) {
        char *req = NULL;
        size_t len = 0, cap = 0;
        int m = per_flooder - base < CHUNK ? per_flooder - base : CHUNK;
        for (int i = 0; i < m; i++) {
            char key[64];
            snprintf(key, sizeof(key), "oom:%d:%d", f->id, base + i);
            const char *a[] = {"EXISTS", key};
            pc_resp_encode(&req, &len, &cap, 2, a, NULL);
        }
        pc_conn_write(c, req, len);
        free(req);
        for (int i = 0; i < m; i++) {
            char *r;
            size_t rl;
            if (pc_conn_read_reply(c, &r, &rl, 20000) != 1)
                return missing + (per_flooder - base - i);
            if (f->acked[base + i] && strcmp(r, ":1\r\n") != 0)
                missing++;
            free(r);
        }
    }
    return missing;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    port = srv.port;
    if (pc_sanitized())
        per_flooder /= 4;
    memset(value, 'o', VALUE_SIZE);
    struct pc_conn *c = pc_conn_open(port);
    if (!c)
        return 2;
    long long shards = srv.is_redis ? 1 : pc_info_ll(c, "shard_threads");
    pc_spread_keys("oomread:", rkeys);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, "+OK\r\n", "SET", rkeys[i], rkeys[i], NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "noeviction", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "4mb", NULL);

    struct flooder fl[FLOODERS];
    pthread_t th[FLOODERS], reader;
    atomic_store(&flooding, FLOODERS);
    for (int t = 0; t < FLOODERS; t++) {
        fl[t] = (struct flooder){.id = t, .acked = calloc((size_t)per_flooder, 1)};
        pthread_create(&th[t], NULL, flooder_main, &fl[t]);
    }
    pthread_create(&reader, NULL, reader_main, NULL);
    long ok = 0, oom = 0;
    for (int t = 0; t < FLOODERS; t++) {
        pthread_join(th[t], NULL);
        ok += fl[t].ok;
        oom += fl[t].oom;
    }
    pthread_join(reader, NULL);
    fprintf(stderr, "%d x %d SETs of %d bytes at maxmemory 4mb: %ld OK, %ld OOM; %ld reads meanwhile\n",
            FLOODERS, per_flooder, VALUE_SIZE, ok, oom, atomic_load(&reads_done));
    if (ok <= 0 || oom <= 0)
        pc_fail("want some +OK and then OOM errors, got %ld OK and %ld OOM", ok, oom);
    if (atomic_load(&reads_done) <= 0)
        pc_fail("no read completed during the flood");
    if (!pc_server_alive(&srv))
        return pc_test_done("test_chaos_oom");

    long lost = 0;
    for (int t = 0; t < FLOODERS; t++)
        lost += missing_acked(c, &fl[t]);
    if (lost)
        pc_fail("%ld acknowledged SETs are missing", lost);
    char exp[32];
    snprintf(exp, sizeof(exp), ":%ld\r\n", ok + PC_SPREAD_KEYS);
    pc_expect(c, exp, "DBSIZE", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "0", NULL);
    pc_expect(c, "+OK\r\n", "SET", "oom:after", "x", NULL);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    for (int t = 0; t < FLOODERS; t++)
        free(fl[t].acked);
    pc_conn_close(&c);
    pc_test_teardown(&srv);
    char load[200];
    snprintf(load, sizeof(load),
             "%d clients x %d pipelined SETs of %d B over %lld shard threads at maxmemory 4mb (%ld OK, %ld OOM); "
             "%ld reads meanwhile",
             FLOODERS, per_flooder, VALUE_SIZE, shards, ok, oom, atomic_load(&reads_done));
    pc_reliability_line(&srv, "out of memory", load, "maxmemory reached, noeviction", 0, lost);
    return pc_test_done("test_chaos_oom");
}
