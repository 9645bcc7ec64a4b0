/*
 * test_cluster: cluster-ports (include/percore/cluster.h).  The server runs
 * with --cluster-ports yes, so shard i also listens on port + 1 + i and
 * speaks the Redis Cluster protocol there.
 *
 * - CLUSTER SLOTS covers every slot once, with one node per shard on the
 *   ports port+1..port+N; that table is the reference for the rest.
 * - On every node port, every test key (they cover every shard) either runs
 *   (its owner) or gets exactly `-MOVED slot 127.0.0.1:owner-port`; keys of
 *   two slots get -CROSSSLOT, also where they would be MOVED; {tag}ged
 *   multi-key commands run on the owner.
 * - A node's DBSIZE / KEYS / SCAN / INFO keyspace / FLUSHALL see its own keys
 *   only (the whole shared store in the global-lock control build); the main
 *   port sees them all, as before, and needs no redirects.
 * - CLUSTER NODES / SHARDS / MYID / INFO agree with SLOTS (ids, ports,
 *   ranges, `myself` on the answering node, shard 0 on the main port);
 *   KEYSLOT and the errors are Redis 7.0's bytes; COUNTKEYSINSLOT and
 *   GETKEYSINSLOT answer the owner's keys on the main port, a node's own on
 *   its port.
 * - cluster-port-base moves the ports; with cluster-ports no, CLUSTER says
 *   "cluster support disabled" and INFO cluster_enabled:0.
 */
#include "testclient.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 64

static int nnodes;
static int main_port;
static int node_port[MAX_NODES];       /* in SLOTS order */
static char node_id[MAX_NODES][41];
static unsigned char slot_node[16384]; /* node (index into node_port) serving each slot */

static int node_of_port(int port)
{
    for (int i = 0; i < nnodes; i++)
        if (node_port[i] == port)
            return i;
    return -1;
}

static long long reply_ll(redisReply *r)
{
    return r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
}

static const char *reply_str(redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
               ? r->str
               : "";
}

/* CLUSTER SLOTS on the main port -> node_port, node_id, slot_node */
static void load_slots(redisContext *h)
{
    memset(slot_node, 0xff, sizeof(slot_node));
    redisReply *r = redisCommand(h, "CLUSTER SLOTS");
    if (!r || r->type != REDIS_REPLY_ARRAY) {
        pc_fail("CLUSTER SLOTS: not an array");
        freeReplyObject(r);
        return;
    }
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 3 || e->element[2]->type != REDIS_REPLY_ARRAY ||
            e->element[2]->elements != 4) {
            pc_fail("CLUSTER SLOTS entry %zu: not [start, end, [ip, port, id, {}]]", i);
            continue;
        }
        redisReply *n = e->element[2];
        int port = (int)reply_ll(n->element[1]);
        if (strcmp(reply_str(n->element[0]), "127.0.0.1") != 0)
            pc_fail("CLUSTER SLOTS entry %zu: ip %s, want the address we connected to", i, reply_str(n->element[0]));
        if (strlen(reply_str(n->element[2])) != 40 || strspn(reply_str(n->element[2]), "0123456789abcdef") != 40)
            pc_fail("CLUSTER SLOTS entry %zu: node id '%s' is not 40 hex digits", i, reply_str(n->element[2]));
        if (n->element[3]->type != REDIS_REPLY_ARRAY || n->element[3]->elements != 0)
            pc_fail("CLUSTER SLOTS entry %zu: metadata is not an empty map", i);
        int node = node_of_port(port);
        if (node < 0 && nnodes < MAX_NODES) {
            node = nnodes++;
            node_port[node] = port;
            snprintf(node_id[node], sizeof(node_id[node]), "%s", reply_str(n->element[2]));
        } else if (node >= 0 && strcmp(node_id[node], reply_str(n->element[2])) != 0) {
            pc_fail("CLUSTER SLOTS: port %d has two ids", port);
        }
        long long first = reply_ll(e->element[0]), last = reply_ll(e->element[1]);
        for (long long s = first; s <= last && s >= 0 && s < 16384 && node >= 0; s++) {
            if (slot_node[s] != 0xff)
                pc_fail("CLUSTER SLOTS: slot %lld listed twice", s);
            slot_node[s] = (unsigned char)node;
        }
    }
    freeReplyObject(r);
    for (int s = 0; s < 16384; s++)
        if (slot_node[s] == 0xff) {
            pc_fail("CLUSTER SLOTS: slot %d not served", s);
            break;
        }
}

static int shard_count(redisContext *h)
{
    redisReply *r = redisCommand(h, "CONFIG GET threads");
    int n = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? atoi(reply_str(r->element[1])) : 0;
    freeReplyObject(r);
    return n;
}

static unsigned key_slot(const char *key)
{
    return pc_key_slot(key, strlen(key));
}

/* every key on every node: served by its owner, MOVED by the others */
static void check_redirects(char keys[PC_SPREAD_KEYS][64])
{
    for (int n = 0; n < nnodes; n++) {
        struct pc_conn *c = pc_conn_open(node_port[n]);
        if (!c)
            return;
        for (int k = 0; k < PC_SPREAD_KEYS; k++) {
            unsigned slot = key_slot(keys[k]);
            char exp[128];
            if (slot_node[slot] == n) {
                pc_expect(c, "+OK\r\n", "SET", keys[k], keys[k], NULL);
                snprintf(exp, sizeof(exp), "$%zu\r\n%.64s\r\n", strlen(keys[k]), keys[k]);
                pc_expect(c, exp, "GET", keys[k], NULL);
            } else {
                snprintf(exp, sizeof(exp), "-MOVED %u 127.0.0.1:%d\r\n", slot, node_port[slot_node[slot]]);
                pc_expect(c, exp, "SET", keys[k], "x", NULL);
                pc_expect(c, exp, "GET", keys[k], NULL);
            }
        }
        pc_conn_close(&c);
    }
}

/* keys of two slots: CROSSSLOT wherever they are sent, even where one would be MOVED */
static void check_crossslot(void)
{
    char a[64], b[64];
    pc_key_for_slot("x:", 100, a, sizeof(a));
    pc_key_for_slot("x:", 101, b, sizeof(b));
    const char *exp = "-CROSSSLOT Keys in request don't hash to the same slot\r\n";
    for (int n = 0; n < nnodes; n++) {
        struct pc_conn *c = pc_conn_open(node_port[n]);
        if (!c)
            return;
        pc_expect(c, exp, "MGET", a, b, NULL);
        pc_expect(c, exp, "MSET", a, "1", b, "2", NULL);
        pc_expect(c, exp, "DEL", a, b, NULL);
        pc_expect(c, exp, "SUNIONSTORE", a, b, NULL);
        pc_expect(c, exp, "ZUNIONSTORE", a, "1", b, NULL); /* a numkeys command */
        pc_conn_close(&c);
    }
}

/* {tag}: same slot, so multi-key commands run on the owner and are MOVED elsewhere */
static void check_tagged(void)
{
    unsigned slot = key_slot("{user1000}");
    for (int n = 0; n < nnodes; n++) {
        struct pc_conn *c = pc_conn_open(node_port[n]);
        if (!c)
            return;
        if (slot_node[slot] == n) {
            pc_expect(c, "+OK\r\n", "MSET", "{user1000}.a", "1", "{user1000}.b", "2", NULL);
            pc_expect(c, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "MGET", "{user1000}.a", "{user1000}.b", NULL);
            pc_expect(c, "+OK\r\n", "RENAME", "{user1000}.a", "{user1000}.c", NULL);
            pc_expect(c, ":2\r\n", "EXISTS", "{user1000}.b", "{user1000}.c", NULL);
            pc_expect(c, ":2\r\n", "DEL", "{user1000}.b", "{user1000}.c", NULL);
        } else {
            char exp[128];
            snprintf(exp, sizeof(exp), "-MOVED %u 127.0.0.1:%d\r\n", slot, node_port[slot_node[slot]]);
            pc_expect(c, exp, "MGET", "{user1000}.a", "{user1000}.b", NULL);
        }
        pc_conn_close(&c);
    }
}

static long long dbsize(int port)
{
    redisContext *h = pc_hiredis_connect(port);
    if (!h)
        return -1;
    redisReply *r = redisCommand(h, "DBSIZE");
    long long n = reply_ll(r);
    freeReplyObject(r);
    redisFree(h);
    return n;
}

/* a node's keyspace commands see its keys: those of check_redirects that hash to it */
/*
 * Does node n's keyspace hold key?  Its slots' keys; but the global-lock
 * control build keeps one store that all threads share (ARCHITECTURE.md rule
 * 10), which every node then sees whole.
 */
static bool node_sees(int n, const char *key)
{
#ifdef PERCORE_GLOBAL_LOCK
    (void)n, (void)key;
    return true;
#else
    return slot_node[key_slot(key)] == n;
#endif
}

static void check_node_keyspace(char keys[PC_SPREAD_KEYS][64])
{
    long long total = PC_SPREAD_KEYS;
    for (int n = 0; n < nnodes; n++) {
        long long mine = 0;
        for (int k = 0; k < PC_SPREAD_KEYS; k++)
            mine += node_sees(n, keys[k]);
        redisContext *h = pc_hiredis_connect(node_port[n]);
        if (!h)
            return;
        redisReply *r = redisCommand(h, "DBSIZE");
        if (reply_ll(r) != mine)
            pc_fail("DBSIZE on node port %d: %lld, want %lld", node_port[n], reply_ll(r), mine);
        freeReplyObject(r);
        r = redisCommand(h, "KEYS *");
        if (!r || r->type != REDIS_REPLY_ARRAY || (long long)r->elements != mine)
            pc_fail("KEYS * on node port %d: %zu keys, want %lld", node_port[n], r ? r->elements : 0, mine);
        for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
            if (!node_sees(n, reply_str(r->element[i])))
                pc_fail("KEYS * on node port %d lists %s, another node's key", node_port[n], reply_str(r->element[i]));
        freeReplyObject(r);
        r = redisCommand(h, "SCAN 0 COUNT 1000");
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || strcmp(reply_str(r->element[0]), "0") != 0 ||
            (long long)r->element[1]->elements != mine)
            pc_fail("SCAN 0 COUNT 1000 on node port %d: not [0, %lld keys]", node_port[n], mine);
        freeReplyObject(r);
        r = redisCommand(h, "INFO keyspace");
        char want[96];
        snprintf(want, sizeof(want), "db0:keys=%lld,expires=0,avg_ttl=0\r\n", mine);
        if (mine && !strstr(reply_str(r), want))
            pc_fail("INFO keyspace on node port %d lacks %s", node_port[n], want);
        freeReplyObject(r);
        redisFree(h);
    }
    if (dbsize(main_port) != total)
        pc_fail("DBSIZE on the main port: %lld, want %lld", dbsize(main_port), total);
    /* FLUSHALL on the last node takes the keys it sees only */
    int last = nnodes - 1;
    long long last_keys = dbsize(node_port[last]);
    struct pc_conn *c = pc_conn_open(node_port[last]);
    if (!c)
        return;
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    pc_conn_close(&c);
    if (dbsize(node_port[last]) != 0 || dbsize(main_port) != total - last_keys)
        pc_fail("FLUSHALL on node port %d: the node has %lld keys, the server %lld (want 0, %lld)",
                node_port[last], dbsize(node_port[last]), dbsize(main_port), total - last_keys);
}

/* NODES, SHARDS, MYID, INFO as the node on `port` (or the main port) answers them */
static void check_descriptions(int port)
{
    int myself = node_of_port(port == main_port ? main_port + 1 : port); /* the main port: shard 0 */
    redisContext *h = pc_hiredis_connect(port);
    if (!h)
        return;
    redisReply *r = redisCommand(h, "CLUSTER NODES");
    const char *text = reply_str(r);
    int lines = 0, myself_lines = 0;
    for (const char *line = text; *line; lines++) {
        const char *end = strchr(line, '\n');
        if (!end) {
            pc_fail("CLUSTER NODES on %d: last line without \\n", port);
            break;
        }
        char buf[512], id[64], addr[64], flags[64], master[8], link[16];
        long long ping, pong, epoch;
        int off = 0;
        snprintf(buf, sizeof(buf), "%.*s", (int)(end - line), line);
        if (sscanf(buf, "%63s %63s %63s %7s %lld %lld %lld %15s %n", id, addr, flags, master, &ping, &pong, &epoch,
                   link, &off) != 8) {
            pc_fail("CLUSTER NODES on %d: bad line '%s'", port, buf);
            break;
        }
        int node = -1;
        for (int i = 0; i < nnodes; i++)
            if (strcmp(node_id[i], id) == 0)
                node = i;
        char want_addr[64];
        snprintf(want_addr, sizeof(want_addr), "127.0.0.1:%d@0", node >= 0 ? node_port[node] : 0);
        if (node < 0 || strcmp(addr, want_addr) != 0 || strcmp(master, "-") != 0 || strcmp(link, "connected") != 0)
            pc_fail("CLUSTER NODES on %d: line '%s' does not match CLUSTER SLOTS", port, buf);
        bool me = strcmp(flags, "myself,master") == 0;
        myself_lines += me;
        if ((me ? node != myself : strcmp(flags, "master") != 0) || epoch != node + 1)
            pc_fail("CLUSTER NODES on %d: flags/epoch of '%s' (myself is node %d)", port, buf, myself);
        /* the ranges, as CLUSTER SLOTS has them */
        char ranges[256] = "";
        size_t rl = 0;
        for (int s = 0; s < 16384 && node >= 0; s++) {
            if (slot_node[s] != node || (s > 0 && slot_node[s - 1] == node))
                continue;
            int e = s;
            while (e + 1 < 16384 && slot_node[e + 1] == node)
                e++;
            rl += (size_t)(e == s ? snprintf(ranges + rl, sizeof(ranges) - rl, "%s%d", rl ? " " : "", s)
                                  : snprintf(ranges + rl, sizeof(ranges) - rl, "%s%d-%d", rl ? " " : "", s, e));
        }
        if (strcmp(buf + off, ranges) != 0)
            pc_fail("CLUSTER NODES on %d: slots '%s', want '%s'", port, buf + off, ranges);
        line = end + 1;
    }
    if (lines != nnodes || myself_lines != 1)
        pc_fail("CLUSTER NODES on %d: %d lines, %d myself (want %d, 1)", port, lines, myself_lines, nnodes);
    freeReplyObject(r);

    r = redisCommand(h, "CLUSTER MYID");
    if (strcmp(reply_str(r), node_id[myself]) != 0)
        pc_fail("CLUSTER MYID on %d: %s, want %s", port, reply_str(r), node_id[myself]);
    freeReplyObject(r);

    r = redisCommand(h, "CLUSTER INFO");
    char want[256];
    snprintf(want, sizeof(want),
             "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\n"
             "cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\n"
             "cluster_current_epoch:%d\r\ncluster_my_epoch:%d\r\n",
             nnodes, nnodes, nnodes, myself + 1);
    if (strncmp(reply_str(r), want, strlen(want)) != 0)
        pc_fail("CLUSTER INFO on %d:\n%s\nwant it to begin with\n%s", port, reply_str(r), want);
    freeReplyObject(r);

    r = redisCommand(h, "CLUSTER SHARDS");
    if (!r || r->type != REDIS_REPLY_ARRAY || (int)r->elements != nnodes) {
        pc_fail("CLUSTER SHARDS on %d: not an array of %d", port, nnodes);
    } else {
        long long covered = 0;
        for (size_t i = 0; i < r->elements; i++) {
            redisReply *s = r->element[i];
            redisReply *node = s->elements == 4 && s->element[3]->elements == 1 ? s->element[3]->element[0] : NULL;
            if (!node || strcmp(reply_str(s->element[0]), "slots") != 0 || strcmp(reply_str(s->element[2]), "nodes") ||
                node->elements != 14) {
                pc_fail("CLUSTER SHARDS on %d: shard %zu is not {slots, nodes: [one node]}", port, i);
                continue;
            }
            int n = node_of_port((int)reply_ll(node->element[3]));
            const char *want_keys[] = {"id", "port", "ip", "endpoint", "role", "replication-offset", "health"};
            for (int k = 0; k < 7; k++)
                if (strcmp(reply_str(node->element[2 * k]), want_keys[k]) != 0)
                    pc_fail("CLUSTER SHARDS on %d: field %d is %s, want %s", port, k,
                            reply_str(node->element[2 * k]), want_keys[k]);
            if (n < 0 || strcmp(reply_str(node->element[1]), node_id[n]) != 0 ||
                strcmp(reply_str(node->element[5]), "127.0.0.1") != 0 ||
                strcmp(reply_str(node->element[9]), "master") != 0 || strcmp(reply_str(node->element[13]), "online"))
                pc_fail("CLUSTER SHARDS on %d: node of shard %zu does not match CLUSTER SLOTS", port, i);
            redisReply *slots = s->element[1];
            for (size_t j = 0; n >= 0 && j + 1 < slots->elements; j += 2)
                for (long long x = reply_ll(slots->element[j]); x <= reply_ll(slots->element[j + 1]); x++)
                    if (x >= 0 && x < 16384 && slot_node[x] == n)
                        covered++;
        }
        if (covered != 16384)
            pc_fail("CLUSTER SHARDS on %d: its ranges cover %lld slots as CLUSTER SLOTS does, want 16384", port, covered);
    }
    freeReplyObject(r);
    redisFree(h);
}

/* COUNTKEYSINSLOT / GETKEYSINSLOT: the owner's keys from the main port, a node's own from its port */
static void check_keys_in_slot(void)
{
    unsigned slot = key_slot("{ks}");
    int owner = slot_node[slot];
    struct pc_conn *c = pc_conn_open(node_port[owner]);
    if (!c)
        return;
    pc_expect(c, "+OK\r\n", "MSET", "{ks}1", "a", "{ks}2", "b", "{ks}3", "c", NULL);
    pc_conn_close(&c);
    char slot_arg[16];
    snprintf(slot_arg, sizeof(slot_arg), "%u", slot);
    for (int i = -1; i < nnodes; i++) {
        int port = i < 0 ? main_port : node_port[i];
        bool has = i < 0 || i == owner;
        c = pc_conn_open(port);
        if (!c)
            return;
        pc_expect(c, has ? ":3\r\n" : ":0\r\n", "CLUSTER", "COUNTKEYSINSLOT", slot_arg, NULL);
        char *r;
        size_t rl;
        r = pc_conn_cmdl(c, &rl, "CLUSTER", "GETKEYSINSLOT", slot_arg, "10", NULL);
        bool all = r && strncmp(r, "*3\r\n", 4) == 0 && strstr(r, "{ks}1") && strstr(r, "{ks}2") && strstr(r, "{ks}3");
        if (has ? !all : !(r && strcmp(r, "*0\r\n") == 0))
            pc_fail("CLUSTER GETKEYSINSLOT %u 10 on %d: %s", slot, port, r ? r : "(none)");
        free(r);
        r = pc_conn_cmdl(c, &rl, "CLUSTER", "GETKEYSINSLOT", slot_arg, "2", NULL);
        if (!r || strncmp(r, has ? "*2\r\n" : "*0\r\n", 4) != 0)
            pc_fail("CLUSTER GETKEYSINSLOT %u 2 on %d: %s", slot, port, r ? r : "(none)");
        free(r);
        pc_expect(c, ":0\r\n", "CLUSTER", "COUNTKEYSINSLOT", "1", NULL); /* no test key is in slot 1 */
        pc_conn_close(&c);
    }
}

/* Redis 7.0's bytes (captured from a real 3-node cluster) */
static void check_exact_replies(int port)
{
    struct pc_conn *c = pc_conn_open(port);
    if (!c)
        return;
    pc_expect(c, ":12182\r\n", "CLUSTER", "KEYSLOT", "foo", NULL);
    pc_expect(c, ":3443\r\n", "CLUSTER", "KEYSLOT", "{user1000}.following", NULL);
    pc_expect(c, ":15495\r\n", "CLUSTER", "KEYSLOT", "a", NULL);
    pc_expect(c, ":10595\r\n", "CLUSTER", "KEYSLOT", "{}x", NULL);
    pc_expect(c, ":11068\r\n", "CLUSTER", "KEYSLOT", "{{x}}", NULL);
    pc_expect(c, "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n", "CLUSTER", "KEYSLOT", NULL);
    pc_expect(c, "-ERR unknown subcommand 'foo'. Try CLUSTER HELP.\r\n", "CLUSTER", "foo", NULL);
    pc_expect(c, "-ERR Invalid slot\r\n", "CLUSTER", "COUNTKEYSINSLOT", "16384", NULL);
    pc_expect(c, "-ERR value is not an integer or out of range\r\n", "CLUSTER", "COUNTKEYSINSLOT", "abc", NULL);
    pc_expect(c, "-ERR Invalid slot or number of keys\r\n", "CLUSTER", "GETKEYSINSLOT", "5", "-1", NULL);
    pc_expect(c, "-ERR Invalid slot or number of keys\r\n", "CLUSTER", "GETKEYSINSLOT", "99999", "1", NULL);
    pc_expect(c, "+OK\r\n", "READONLY", NULL);
    pc_expect(c, "+OK\r\n", "READWRITE", NULL);
    pc_expect(c, "+OK\r\n", "ASKING", NULL);
    pc_conn_close(&c);
}

/* Redis Cluster has database 0 only */
static void check_db_refusals(void)
{
    struct pc_conn *c = pc_conn_open(node_port[0]);
    if (!c)
        return;
    pc_expect(c, "-ERR SELECT is not allowed in cluster mode\r\n", "SELECT", "1", NULL);
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    pc_expect(c, "-ERR value is not an integer or out of range\r\n", "SELECT", "abc", NULL);
    pc_expect(c, "-ERR SWAPDB is not allowed in cluster mode\r\n", "SWAPDB", "0", "1", NULL);
    char key[64];
    int slot = -1;
    for (int s = 0; s < 16384 && slot < 0; s++)
        if (slot_node[s] == 0)
            slot = s;
    pc_key_for_slot("mv:", (unsigned)slot, key, sizeof(key));
    pc_expect(c, "-ERR MOVE is not allowed in cluster mode\r\n", "MOVE", key, "1", NULL);
    pc_conn_close(&c);
}

/* the main port is the ordinary server: any key, any database, no redirects */
static void check_main_port(char keys[PC_SPREAD_KEYS][64])
{
    struct pc_conn *c = pc_conn_open(main_port);
    if (!c)
        return;
    for (int k = 0; k < PC_SPREAD_KEYS; k++)
        pc_expect(c, "+OK\r\n", "SET", keys[k], "main", NULL);
    pc_expect(c, "*2\r\n$4\r\nmain\r\n$4\r\nmain\r\n", "MGET", keys[0], keys[PC_SPREAD_KEYS - 1], NULL);
    pc_expect(c, "+OK\r\n", "SELECT", "1", NULL);
    pc_expect(c, "$-1\r\n", "GET", keys[0], NULL);
    pc_conn_close(&c);
    redisContext *h = pc_hiredis_connect(main_port);
    if (!h)
        return;
    redisReply *r = redisCommand(h, "INFO cluster");
    if (!strstr(reply_str(r), "cluster_enabled:1\r\n"))
        pc_fail("INFO cluster on the main port: %s", reply_str(r));
    freeReplyObject(r);
    redisFree(h);
}

static const char *arg_after(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

/* cluster-port-base moves the ports; cluster-ports no turns CLUSTER off */
static void check_other_configs(const char *bin, const char *threads)
{
    struct pc_server s;
    const char *based[] = {"--threads", "1", "--cluster-ports", "yes", "--cluster-port-base", PC_FREE_PORT_ARG, NULL};
    if (pc_server_start(&s, bin, based) != 0) {
        pc_fail("a server with cluster-port-base did not start");
        return;
    }
    redisContext *h = pc_hiredis_connect(s.port);
    redisReply *r = h ? redisCommand(h, "CLUSTER SLOTS") : NULL;
    redisReply *range = r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 ? r->element[0] : NULL;
    redisReply *node = range && range->elements == 3 ? range->element[2] : NULL;
    if (!node || node->type != REDIS_REPLY_ARRAY || node->elements != 4 || reply_ll(node->element[1]) != s.aux_port)
        pc_fail("CLUSTER SLOTS with cluster-port-base %d: not one node on that port", s.aux_port);
    freeReplyObject(r);
    redisFree(h);
    struct pc_conn *c = pc_conn_open(s.aux_port);
    if (c)
        pc_expect(c, "+OK\r\n", "SET", "foo", "bar", NULL);
    pc_conn_close(&c);
    pc_test_teardown(&s);

    const char *off[] = {"--threads", threads, NULL};
    if (pc_server_start(&s, bin, off) != 0) {
        pc_fail("a server without cluster ports did not start");
        return;
    }
    c = pc_conn_open(s.port);
    if (c) {
        const char *disabled = "-ERR This instance has cluster support disabled\r\n";
        pc_expect(c, disabled, "CLUSTER", "SLOTS", NULL);
        pc_expect(c, disabled, "CLUSTER", "HELP", NULL);
        pc_expect(c, disabled, "CLUSTER", "KEYSLOT", "foo", NULL);
        pc_expect(c, disabled, "READONLY", NULL);
        pc_expect(c, "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n", "CLUSTER", "KEYSLOT", NULL);
        char *info;
        size_t il;
        info = pc_conn_cmdl(c, &il, "INFO", "cluster", NULL);
        if (!info || !strstr(info, "cluster_enabled:0\r\n"))
            pc_fail("INFO cluster without cluster ports: %s", info ? info : "(none)");
        free(info);
    }
    pc_conn_close(&c);
    pc_test_teardown(&s);
}

int main(int argc, char **argv)
{
    /* our arguments, then the server's: cluster ports on */
    char **args = calloc((size_t)argc + 4, sizeof(*args));
    int n = 0, dashes = 0;
    for (int i = 0; i < argc; i++) {
        args[n++] = argv[i];
        dashes |= strcmp(argv[i], "--") == 0;
    }
    if (!dashes)
        args[n++] = "--";
    args[n++] = "--cluster-ports";
    args[n++] = "yes";
    struct pc_server srv;
    if (pc_test_setup(n, args, &srv) != 0)
        return 2;
    main_port = srv.port;
    redisContext *h = pc_hiredis_connect(main_port);
    if (!h)
        return 2;
    int shards = shard_count(h);
    load_slots(h);
    redisFree(h);
    if (nnodes != shards)
        pc_fail("CLUSTER SLOTS names %d nodes for %d shards", nnodes, shards);
    for (int i = 0; i < nnodes; i++)
        if (node_of_port(main_port + 1 + i) < 0)
            pc_fail("no node on port %d (port + 1 + shard)", main_port + 1 + i);

    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("cl:", keys);
    check_redirects(keys);
    check_crossslot();
    check_tagged();
    check_node_keyspace(keys);
    check_descriptions(main_port);
    for (int i = 0; i < nnodes; i++)
        check_descriptions(node_port[i]);
    check_keys_in_slot();
    check_exact_replies(main_port);
    check_exact_replies(node_port[nnodes - 1]);
    check_db_refusals();
    check_main_port(keys);
    pc_test_teardown(&srv);

    const char *bin = arg_after(argc, argv, "--server");
    if (!bin)
        bin = getenv("PERCORE_SERVER");
    const char *threads = arg_after(argc, argv, "--threads");
    if (bin && !srv.external)
        check_other_configs(bin, threads ? threads : "1");
    free(args);
    return pc_test_done("test_cluster");
}
