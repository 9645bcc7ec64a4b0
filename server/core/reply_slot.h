/*
 * reply_slot: struct slot, the place of a reply that is still being computed
 * elsewhere (a remote or split command), so that replies leave in request
 * order (ARCHITECTURE.md rule 6).  Not to be confused with a hash slot
 * (percore/slot.h).  Slots are created, completed and pooled by dispatch.c
 * (dispatch.h); the home shard's thread alone touches them.
 */
#ifndef PERCORE_CORE_REPLY_SLOT_H
#define PERCORE_CORE_REPLY_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/conn.h"
#include "percore/reply.h"

struct conn;
struct slot;
struct txn;
struct block_multi;
struct command;
struct resp_arg;

/* a part's reply arrives (parts of one slot may arrive in any order) */
typedef void slot_part_fn(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* every part has arrived: complete the slot, or send the next step's parts */
typedef void slot_done_fn(struct conn *c, struct slot *s);
/* a blocking command's part found nothing and waits at its owner: its reply comes later */
typedef void slot_wait_fn(struct conn *c, struct slot *s, int part);

struct slot {
    struct slot *next;
    struct reply reply;      /* this command's reply, once complete */
    struct reply after;      /* replies of later local commands, sent after this one */
    struct reply gather;     /* element bytes gathered from parts */
    /* from here on: zeroed when a pooled slot is reused (dispatch_slot_release) */
    uint64_t txid;           /* the multi-shard transaction it runs in (its parts pass its locks), 0 none */
    struct txn *txn;         /* the transaction this slot locks for, or whose locks it releases when done */
    int parts_left;
    uint64_t ran_ns;         /* the time its command's handler ran in the parts run for it (CALL_TIME_HOME) */
    bool ran;                /* one of them ran (not only waited): one slowlog entry */
    bool sample;             /* and one latency sample (latency-tracking as its last part came) */
    bool complete;
    bool rejected;           /* refused unrun (-BUSY: a script busy on its shard): a rejected call, as Redis's */
    bool script_whole;       /* a script run with every shard's keyspace locked (dispatch_run_script_whole) */
    uint8_t rounds;          /* its runs that named keys not gathered yet */
    bool txn_end;            /* EXEC's end: completes (freeing txn's locks) once every slot before it has */
    bool block_cancelling;   /* the owner was asked to drop it */
    struct slot *block_target; /* a cancel's: the blocked slot it is for */
    struct block_multi *bmulti; /* a blocking command whose keys live on several shards (block.c) */
    bool barrier;            /* the connection parses nothing more until this completes */
    bool silent;             /* its command ran under CLIENT REPLY OFF|SKIP: its reply is dropped */
    const char *sent;        /* a whole remote command's reply, already in the output (part_whole); until done */
    size_t sent_len;
    slot_part_fn *on_part;
    slot_done_fn *on_done;
    slot_wait_fn *on_wait;   /* blocking commands only */
    /* merge state */
    long long sum;
    long long count;
    bool failed;             /* reply holds the first error */
    uint32_t nkeys;
    uint16_t *key_shard;     /* MGET/MSETNX: owner shard of each key */
    int *key_pos;            /* gathered commands: argv positions of the distinct keys */
    bool every_key;          /* gathered: its keys are every key its command reads (SORT's pattern keys too) */
    bool may_block;          /* gathered XREAD / XREADGROUP BLOCK: it may wait (not inside EXEC; block.c) */
    uint64_t *elem;          /* MGET: offset << 32 | length of key i's element in gather */
    /* multi-step commands (RENAME, MSETNX, SCAN) */
    uint64_t cursor;         /* SCAN: the shard-local cursor of the last part */
    const struct command *cmd;
    int step;
    int db;
    int resp;
    int argc;
    struct resp_arg *argv;   /* a copy of the command, in argv_bytes */
    char *argv_bytes;
    conn_merge_fn *merge;    /* conn_fanout: writes the reply from every shard's part */
};

#endif
