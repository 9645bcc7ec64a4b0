/*
 * fuzz_harness: the in-process shards the whole-path fuzz targets drive
 * (fuzz_harness.c says how a stream runs and what is reset after it).
 */
#ifndef PERCORE_FUZZ_HARNESS_H
#define PERCORE_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUZZ_SHARDS 4

/* the engine (named name) and its shards, with the harness's limits; exits the process when it cannot */
void fuzz_harness_start(const char *name);
/* the stream on a fresh client: control is fuzz_input.h's byte (its FUZZ_FLAG: the client's home is the
 * last shard, else shard 0); then the resets, the config's too when `config` */
void fuzz_harness_run(const char *stream, size_t len, uint8_t control, bool config);

#endif
