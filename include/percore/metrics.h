/*
 * metrics: the Prometheus text endpoint (format 0.0.4), GET /metrics on
 * `metrics-port`, served by the stats aggregator thread's event_base with
 * libevent's evhttp.  Figures come from the same view INFO shows
 * (stats_view_take); every other path answers 404.
 */
#ifndef PERCORE_METRICS_H
#define PERCORE_METRICS_H

struct event_base;

/* main thread, before the aggregator runs base: listen on addr:port; 0 ok, -1 (logged) */
int metrics_setup(struct event_base *base, const char *addr, int port);
/* the aggregator thread (online RCU reader), before base is freed; no-op when not set up */
void metrics_teardown(void);

#endif
