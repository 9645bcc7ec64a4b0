/*
 * fileio: the two steps every durable file write here takes (the RDB
 * writer, the AOF writer): all of a buffer written through short writes and
 * EINTR, and a directory fsynced so that a rename in it survives a crash.
 *
 * Threading: no state; any thread (they block: writer threads only, never a
 * shard's loop).
 */
#ifndef PERCORE_FILEIO_H
#define PERCORE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>

/* write all n bytes of p to fd; false on an error (errno set) */
bool fileio_write_all(int fd, const void *p, size_t n);
/* fsync the directory dir (a rename in it made durable); 0, or -1 with errno */
int fileio_fsync_dir(const char *dir);

#endif
