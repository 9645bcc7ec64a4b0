/*
 * log: Redis-format log lines to stdout or the logfile (see
 * include/percore/log.h).
 *
 * Threading: any thread.  The fd and the level are atomics written at setup
 * and on CONFIG SET; a line is one write() of a buffer on the caller's stack
 * (O_APPEND makes concurrent whole-line writes land intact).  Nothing here
 * is on the command path: handlers log only failures.
 */
#include "percore/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 1024

static atomic_int log_fd = 1;             /* stdout until log_setup opens the logfile */
static atomic_int log_level = LOG_NOTICE; /* the current config's loglevel */

int log_setup(void)
{
    const struct config *cfg = config_current();
    log_config_changed(cfg);
    if (cfg->logfile && cfg->logfile[0]) {
        int fd = open(cfg->logfile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "Can't open the log file: %s\n", strerror(errno));
            return -1;
        }
        atomic_store(&log_fd, fd);
    }
    return 0;
}

void log_teardown(void)
{
    int fd = atomic_exchange(&log_fd, 1);
    if (fd != 1)
        close(fd);
}

void log_config_changed(const struct config *cfg)
{
    atomic_store_explicit(&log_level, (int)cfg->loglevel, memory_order_relaxed);
}

bool log_enabled(enum loglevel level)
{
    return (int)level >= atomic_load_explicit(&log_level, memory_order_relaxed);
}

void log_emit(enum loglevel level, const char *fmt, ...)
{
    static const char level_chars[] = ".-*#";
    char line[LOG_LINE_MAX];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    int off = snprintf(line, sizeof(line), "%d:M ", (int)getpid());
    off += (int)strftime(line + off, sizeof(line) - (size_t)off, "%d %b %Y %H:%M:%S.", &tm);
    off += snprintf(line + off, sizeof(line) - (size_t)off, "%03d %c ", (int)(tv.tv_usec / 1000),
                    level_chars[level <= LOG_WARNING ? level : LOG_WARNING]);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + off, sizeof(line) - (size_t)off - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    off += n;
    if (off > (int)sizeof(line) - 2)
        off = (int)sizeof(line) - 2; /* truncated: still one whole line */
    line[off++] = '\n';
    ssize_t rc = write(atomic_load_explicit(&log_fd, memory_order_relaxed), line, (size_t)off);
    (void)rc; /* nowhere to report a failing log */
}
