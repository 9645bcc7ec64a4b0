/*
 * log: the server log, in Redis's line format
 *
 *     pid:M dd Mon yyyy hh:mm:ss.mmm <level> message
 *
 * with level chars '.' debug, '-' verbose, '*' notice, '#' warning, written
 * to stdout or to `logfile` (opened O_APPEND).  Each line is formatted into
 * a stack buffer and leaves in one write(), so lines from different threads
 * never interleave and no lock is taken.
 *
 * The level is `loglevel` of the current config, cached in one atomic int:
 * log_setup() and every CONFIG SET (log_config_changed) refresh it, so any
 * thread may log, the main thread included, which is no RCU reader once the
 * shards run.  LOG() checks the level before formatting anything.
 */
#ifndef PERCORE_LOG_H
#define PERCORE_LOG_H

#include <stdbool.h>

#include "percore/config.h"

/* main thread, after config_setup: open the log file; 0 ok, -1 (message on stderr) */
int log_setup(void);
void log_teardown(void);
/* any thread: the current config's loglevel is the one to honour (after CONFIG SET) */
void log_config_changed(const struct config *cfg);

/* any thread */
bool log_enabled(enum loglevel level);
void log_emit(enum loglevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG(level, ...)                    \
    do {                                   \
        if (log_enabled(level))            \
            log_emit((level), __VA_ARGS__); \
    } while (0)
#define log_debug(...) LOG(LOG_DEBUG, __VA_ARGS__)
#define log_verbose(...) LOG(LOG_VERBOSE, __VA_ARGS__)
#define log_notice(...) LOG(LOG_NOTICE, __VA_ARGS__)
#define log_warn(...) LOG(LOG_WARNING, __VA_ARGS__)

#endif
