/*
 * test_split: a command split across many writes is parsed as if it came in
 * one piece.  One byte at a time (with a pause so each byte is its own read
 * on the server), for RESP and inline commands, a cross-shard MSET/MGET and a
 * two-command pipeline; then a 200 KB value in irregular chunks; then a
 * request that stops mid-bulk for a while before its rest arrives.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

static void send_bytewise(struct pc_conn *c, const char *p, size_t len, int pause_every)
{
    for (size_t i = 0; i < len; i++) {
        pc_conn_write(c, p + i, 1);
        if (pause_every && i % (size_t)pause_every == 0)
            pc_sleep_ms(1);
    }
}

struct split_case {
    const char *name;
    const char *send;
    const char *expect;
};

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 2;
    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("split:", keys);

    /* cross-shard MSET / MGET with keys[0], keys[5], keys[10], keys[15] */
    char mset[1024], mget[1024], mget_exp[256];
    snprintf(mset, sizeof(mset),
             "*9\r\n$4\r\nMSET\r\n$%zu\r\n%s\r\n$1\r\na\r\n$%zu\r\n%s\r\n$1\r\nb\r\n"
             "$%zu\r\n%s\r\n$1\r\nc\r\n$%zu\r\n%s\r\n$1\r\nd\r\n",
             strlen(keys[0]), keys[0], strlen(keys[5]), keys[5], strlen(keys[10]), keys[10],
             strlen(keys[15]), keys[15]);
    snprintf(mget, sizeof(mget), "*5\r\n$4\r\nMGET\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
             strlen(keys[15]), keys[15], strlen(keys[10]), keys[10], strlen(keys[5]), keys[5],
             strlen(keys[0]), keys[0]);
    snprintf(mget_exp, sizeof(mget_exp), "*4\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n");

    const struct split_case cases[] = {
        { "RESP SET", "*3\r\n$3\r\nSET\r\n$6\r\nsplit1\r\n$11\r\nhello world\r\n", "+OK\r\n" },
        { "RESP GET", "*2\r\n$3\r\nGET\r\n$6\r\nsplit1\r\n", "$11\r\nhello world\r\n" },
        { "inline SET", "SET split2 \"two words\"\r\n", "+OK\r\n" },
        { "inline GET, bare LF", "GET split2\n", "$9\r\ntwo words\r\n" },
        { "cross-shard MSET", mset, "+OK\r\n" },
        { "cross-shard MGET", mget, mget_exp },
        { "two-command pipeline", "*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n*3\r\n$6\r\nINCRBY\r\n$3\r\nctr\r\n$2\r\n10\r\n",
          ":1\r\n:11\r\n" },
        { "empty bulk argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "$0\r\n\r\n" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        send_bytewise(c, cases[i].send, strlen(cases[i].send), 1);
        /* read as many RESP values as the expectation holds */
        size_t explen = strlen(cases[i].expect), gl = 0;
        char got[1024];
        while (gl < explen) {
            char *r;
            size_t rl;
            if (pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms) != 1)
                break;
            if (gl + rl < sizeof(got)) {
                memcpy(got + gl, r, rl);
                gl += rl;
            }
            free(r);
        }
        char what[128];
        snprintf(what, sizeof(what), "%s sent 1 byte at a time", cases[i].name);
        pc_expect_bytes_n(what, got, gl, cases[i].expect, explen);
    }

    /* 200 KB value in irregular chunks (1, 2, 3 ... bytes, growing) */
    size_t vlen = 200 * 1024;
    char *val = malloc(vlen);
    for (size_t i = 0; i < vlen; i++)
        val[i] = (char)('a' + i % 26);
    char *req = NULL;
    size_t len = 0, cap = 0;
    const char *argv3[] = { "SET", keys[7], val };
    size_t lens[] = { 3, strlen(keys[7]), vlen };
    pc_resp_encode(&req, &len, &cap, 3, argv3, lens);
    size_t off = 0, chunk = 1;
    while (off < len) {
        size_t n = chunk < len - off ? chunk : len - off;
        pc_conn_write(c, req + off, n);
        off += n;
        chunk = chunk * 3 / 2 + 1;
        if (chunk > 9000)
            chunk = 1;
        pc_sleep_ms(0);
    }
    pc_expect_reply(c, "SET of a 200 KB value in irregular chunks", "+OK\r\n", 5);
    free(req);
    {
        char hdr[32];
        int h = snprintf(hdr, sizeof(hdr), "$%zu\r\n", vlen);
        char *exp = malloc(vlen + 64);
        memcpy(exp, hdr, (size_t)h);
        memcpy(exp + h, val, vlen);
        memcpy(exp + h + vlen, "\r\n", 2);
        const char *ga[] = { "GET", keys[7] };
        pc_expectv(c, exp, (size_t)h + vlen + 2, 2, ga, NULL);
        free(exp);
    }
    free(val);

    /* a request that stops in the middle of a bulk for 300 ms */
    const char *part1 = "*3\r\n$3\r\nSET\r\n$5\r\nsplit\r\n$10\r\n01234";
    const char *part2 = "56789\r\n";
    pc_conn_write(c, part1, strlen(part1));
    {
        char *r;
        size_t rl;
        if (pc_conn_read_reply(c, &r, &rl, 300) == 1) {
            pc_fail("a reply came for an incomplete command:");
            pc_print_escaped(stderr, r, rl, 100);
            fputc('\n', stderr);
            free(r);
        }
    }
    pc_conn_write(c, part2, strlen(part2));
    pc_expect_reply(c, "SET completed after a pause", "+OK\r\n", 5);
    pc_expect(c, "$10\r\n0123456789\r\n", "GET", "split", NULL);

    /* the same pipeline of 20 cross-shard commands written 1 byte at a time,
     * without pauses */
    char *pipe = NULL;
    size_t plen = 0, pcap = 0;
    for (int i = 0; i < 20; i++) {
        const char *a[] = { "SET", keys[i % PC_SPREAD_KEYS], i % 2 ? "odd" : "even" };
        pc_resp_encode(&pipe, &plen, &pcap, 3, a, NULL);
        const char *g[] = { "GET", keys[i % PC_SPREAD_KEYS] };
        pc_resp_encode(&pipe, &plen, &pcap, 2, g, NULL);
    }
    send_bytewise(c, pipe, plen, 0);
    free(pipe);
    for (int i = 0; i < 20; i++) {
        char what[64];
        snprintf(what, sizeof(what), "bytewise pipeline SET #%d", i);
        pc_expect_reply(c, what, "+OK\r\n", 5);
        snprintf(what, sizeof(what), "bytewise pipeline GET #%d", i);
        if (i % 2)
            pc_expect_reply(c, what, "$3\r\nodd\r\n", 9);
        else
            pc_expect_reply(c, what, "$4\r\neven\r\n", 10);
    }

    /* one command with thousands of keys, hundreds of them on each shard
     * (a per-shard counter that wrapped at 256 once lost a part) */
    enum { BIG = 3000 };
    static char names[BIG][16];
    static const char *margv[1 + 2 * BIG];
    margv[0] = "MSET";
    for (int i = 0; i < BIG; i++) {
        snprintf(names[i], sizeof(names[i]), "big:%d", i);
        margv[1 + 2 * i] = margv[2 + 2 * i] = names[i];
    }
    pc_expectv(c, "+OK\r\n", 5, 1 + 2 * BIG, margv, NULL);
    margv[0] = "DEL";
    for (int i = 0; i < BIG; i++)
        margv[1 + i] = names[i];
    pc_expectv(c, ":3000\r\n", 7, 1 + BIG, margv, NULL);

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_split");
}
