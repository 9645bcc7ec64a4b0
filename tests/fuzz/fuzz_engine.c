/*
 * fuzz_engine: libFuzzer target for the whole command path in one process:
 * bytes -> RESP parser -> dispatch (inline, handoff to other shards, split
 * and gathered commands) -> the commands and the store -> the reply encoder,
 * on the real shard threads of fuzz_harness.h (how a stream runs, what every
 * reply must be, what is reset after it).
 *
 * Input: the control byte (fuzz_input.h: the pieces the stream arrives in;
 * FUZZ_FLAG: the client's home is the last shard instead of shard 0), then
 * the request stream, cut to RESP_INLINE_MAX bytes.
 *
 * Neutralised.  SHUTDOWN (it would end the process) is cut out of the stream
 * before it is sent: the target parses the stream with the server's own
 * parser, as permissively as any client state allows (no size limit,
 * authenticated), so it sees every command the server could run, at the
 * same boundaries.  A stream with a CONFIG command has the config reset
 * after it.
 *
 * Threading: libFuzzer's thread only; the harness runs the shards.
 */
#include "percore/resp.h"
#include "percore/util.h"

#include "fuzz_harness.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_harness_start("fuzz_engine");
    return 0;
}

/*
 * The stream without its SHUTDOWN commands (malloc'd, *len updated); *config:
 * it holds a CONFIG command.  Parsed as permissively as the server could.
 */
static char *neutralise(const char *s, size_t *len, bool *config)
{
    struct resp_parser p;
    char *out = malloc(*len + 1);
    size_t pos = 0, out_len = 0, consumed;
    resp_parser_init(&p);
    *config = false;
    while (pos < *len && resp_parse(&p, s + pos, *len - pos, LLONG_MAX, &consumed) == RESP_OK) {
        bool shutdown = p.argc > 0 && util_eq_nocase(p.argv[0].ptr, p.argv[0].len, "shutdown");
        *config |= p.argc > 0 && util_eq_nocase(p.argv[0].ptr, p.argv[0].len, "config");
        if (!shutdown) {
            memcpy(out + out_len, s + pos, consumed);
            out_len += consumed;
        }
        pos += consumed;
    }
    memcpy(out + out_len, s + pos, *len - pos); /* an incomplete or malformed end, as it is */
    out_len += *len - pos;
    resp_parser_deinit(&p);
    *len = out_len;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len = size - 1 < RESP_INLINE_MAX ? size - 1 : RESP_INLINE_MAX;
    bool config;
    char *stream = neutralise((const char *)data + 1, &len, &config);
    fuzz_harness_run(stream, len, data[0], config);
    free(stream);
    return 0;
}
