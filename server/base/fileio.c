/*
 * fileio: whole writes and directory fsyncs for the files the writer
 * threads make durable (fileio.h).
 */
#include "percore/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

bool fileio_write_all(int fd, const void *p, size_t n)
{
    const char *at = p;
    while (n) {
        ssize_t w = write(fd, at, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        at += w;
        n -= (size_t)w;
    }
    return true;
}

int fileio_fsync_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int rc = fsync(dfd);
    int saved = errno;
    close(dfd);
    errno = saved;
    return rc;
}
