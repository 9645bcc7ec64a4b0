/*
 * metrics: GET /metrics in the Prometheus text format 0.0.4.
 *
 * An evhttp server on the stats aggregator's own event_base (bound by the
 * main thread at setup, then run only by the aggregator thread), so a scrape
 * never touches a shard thread: it takes the same view INFO shows
 * (stats_view_take: the snapshot less the CONFIG RESETSTAT baseline, levels
 * live) while it is an online RCU reader, writes it out and goes offline.
 * Any other path answers 404, any other method 405.
 */
#include "percore/metrics.h"

#include "percore/config.h"
#include "percore/log.h"
#include "percore/stats.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <string.h>
#include <urcu-qsbr.h>

static struct evhttp *http;

static void metric_head(struct evbuffer *b, const char *name, const char *type, const char *help)
{
    evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric(struct evbuffer *b, const char *name, const char *type, const char *help, unsigned long long v)
{
    metric_head(b, name, type, help);
    evbuffer_add_printf(b, "%s %llu\n", name, v);
}

/* a label value: \ " and newline escaped */
static void label_value(struct evbuffer *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            evbuffer_add_printf(b, "\\%c", *s);
        else if (*s == '\n')
            evbuffer_add(b, "\\n", 2);
        else
            evbuffer_add(b, s, 1);
    }
}

enum cmd_field { CMD_CALLS, CMD_SECONDS, CMD_FAILED, CMD_REJECTED };

static void metric_cmds(struct evbuffer *b, const struct stats_view *v, const char *name, const char *help,
                        enum cmd_field f)
{
    metric_head(b, name, "counter", help);
    for (size_t i = 0; i < v->ncmds; i++) {
        const struct stats_cmd_view *c = &v->cmds[i];
        evbuffer_add_printf(b, "%s{cmd=\"", name);
        label_value(b, c->name);
        unsigned long long x = f == CMD_CALLS ? c->calls : f == CMD_SECONDS ? c->usec
                             : f == CMD_FAILED ? c->failed : c->rejected;
        if (f == CMD_SECONDS) /* Prometheus's base unit, to the microsecond INFO counts */
            evbuffer_add_printf(b, "\"} %llu.%06llu\n", x / 1000000, x % 1000000);
        else
            evbuffer_add_printf(b, "\"} %llu\n", x);
    }
}

enum shard_field { SH_KEYS, SH_COMMANDS, SH_SENT, SH_RECEIVED, SH_INBOX_FULL };

static void metric_shards(struct evbuffer *b, const struct stats_view *v, const char *name, const char *type,
                          const char *help, enum shard_field f)
{
    metric_head(b, name, type, help);
    for (int i = 0; i < v->nshards; i++) {
        const struct stats_shard_view *s = &v->shards[i];
        unsigned long long x = f == SH_KEYS ? s->keys : f == SH_COMMANDS ? s->commands
                             : f == SH_SENT ? s->handoff_batches_sent
                             : f == SH_RECEIVED ? s->handoff_batches_received : s->handoff_inbox_full;
        evbuffer_add_printf(b, "%s{shard=\"%d\"} %llu\n", name, i, x);
    }
}

static void metrics_write(struct evbuffer *b, const struct stats_view *v)
{
    const struct stats_totals *t = &v->t;
    metric(b, "percore_commands_processed_total", "counter", "Commands processed.",
           t->total_commands_processed);
    metric_cmds(b, v, "percore_commands_total", "Calls per command.", CMD_CALLS);
    metric_cmds(b, v, "percore_command_duration_seconds_total", "Seconds spent in each command.", CMD_SECONDS);
    metric_cmds(b, v, "percore_command_failed_total", "Calls per command that replied with an error.",
                CMD_FAILED);
    metric_cmds(b, v, "percore_command_rejected_total", "Calls per command refused before running.",
                CMD_REJECTED);
    metric_head(b, "percore_errors_total", "counter", "Error replies by error prefix.");
    for (size_t i = 0; i < v->nerrors; i++) {
        evbuffer_add(b, "percore_errors_total{error=\"", 28);
        label_value(b, v->errors[i].name);
        evbuffer_add_printf(b, "\"} %llu\n", (unsigned long long)v->errors[i].count);
    }
    metric(b, "percore_connected_clients", "gauge", "Client connections open.", t->connected_clients);
    metric(b, "percore_connections_received_total", "counter", "Client connections accepted.",
           t->total_connections_received);
    metric(b, "percore_rejected_connections_total", "counter", "Client connections refused (maxclients).",
           t->rejected_connections);
    metric(b, "percore_keyspace_hits_total", "counter", "Key lookups that found the key.", t->keyspace_hits);
    metric(b, "percore_keyspace_misses_total", "counter", "Key lookups that did not find the key.",
           t->keyspace_misses);
    metric(b, "percore_expired_keys_total", "counter", "Keys expired.", t->expired_keys);
    metric(b, "percore_evicted_keys_total", "counter", "Keys evicted at maxmemory.", t->evicted_keys);
    metric(b, "percore_net_input_bytes_total", "counter", "Bytes read from clients.", t->total_net_input_bytes);
    metric(b, "percore_net_output_bytes_total", "counter", "Bytes written to clients.",
           t->total_net_output_bytes);
    metric(b, "percore_used_memory_bytes", "gauge", "Bytes held by the stores.", t->used_memory);
    metric_head(b, "percore_instantaneous_ops_per_second", "gauge", "Commands per second, recent mean.");
    evbuffer_add_printf(b, "percore_instantaneous_ops_per_second %.2f\n", v->ops_per_sec);
    metric_shards(b, v, "percore_shard_keys", "gauge", "Keys held by each shard.", SH_KEYS);
    metric_shards(b, v, "percore_shard_commands_total", "counter", "Commands received by each shard.",
                  SH_COMMANDS);
    metric_shards(b, v, "percore_shard_handoff_batches_sent_total", "counter",
                  "Cross-shard batches each shard sent.", SH_SENT);
    metric_shards(b, v, "percore_shard_handoff_batches_received_total", "counter",
                  "Cross-shard batches each shard executed for others.", SH_RECEIVED);
    metric_shards(b, v, "percore_shard_inbox_full_total", "counter",
                  "Sends each shard found refused by a full inbox.", SH_INBOX_FULL);
}

static void metrics_on_request(struct evhttp_request *req, void *arg)
{
    (void)arg;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
    if (!path || strcmp(path, "/metrics") != 0) {
        evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8");
        struct evbuffer *b = evbuffer_new();
        evbuffer_add_printf(b, "not found: try /metrics\n");
        evhttp_send_reply(req, HTTP_NOTFOUND, "Not Found", b);
        evbuffer_free(b);
        return;
    }
    struct evbuffer *b = evbuffer_new();
    struct stats_view v;
    rcu_thread_online();
    stats_view_take(&v, NULL, 0);
    metrics_write(b, &v);
    stats_view_release(&v);
    rcu_ptr_quiescent();
    rcu_thread_offline();
    evhttp_add_header(headers, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, HTTP_OK, "OK", b);
    evbuffer_free(b);
}

int metrics_setup(struct event_base *base, const char *addr, int port)
{
    http = evhttp_new(base);
    if (!http) {
        log_warn("Cannot create the metrics endpoint");
        return -1;
    }
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    evhttp_set_gencb(http, metrics_on_request, NULL);
    if (!evhttp_bind_socket_with_handle(http, addr, (ev_uint16_t)port)) {
        log_warn("Could not create the metrics listening socket %s:%d", addr, port);
        evhttp_free(http);
        http = NULL;
        return -1;
    }
    return 0;
}

void metrics_teardown(void)
{
    if (http)
        evhttp_free(http);
    http = NULL;
}
