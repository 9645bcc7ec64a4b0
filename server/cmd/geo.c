/*
 * geo: the geo command family (Redis's geo.c): GEOADD GEODIST GEOHASH GEOPOS
 * GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUSBYMEMBER and their _RO forms.
 *
 * Design: a geo set is a sorted set whose scores are 52-bit geohashes
 * (include/percore/geohash.h).  GEOADD checks and encodes every position,
 * then runs ZADD itself on the rewritten argv (ZADD key [options] score
 * member ...), so it stores, notifies ("zadd") and counts exactly as ZADD,
 * and it propagates as that ZADD, as Redis's replaceClientCommandVector
 * makes it.  A search (one generic handler, Redis's georadiusGeneric, with
 * its order of checks and its error texts) covers its shape with the nine
 * cells of geohash_search_area_of, reads each cell's score range from the
 * sorted set in Redis's cell order, keeps the members within the shape, and
 * sorts by distance with glibc's qsort (everything) or Redis's partial
 * quicksort (COUNT fewer than found), so ties come out as Redis's do; the
 * unsorted order is the cells' order.  Distances print with 4 decimals as
 * Redis 7.0.15's fixedpoint_d2string rounds them, positions as Redis's
 * addReplyHumanLongDouble (RESP2 bulk string, RESP3 double).
 *
 * Storing: STORE/STOREDIST (GEORADIUS, GEORADIUSBYMEMBER) and
 * GEOSEARCHSTORE put the result into their destination through
 * zset_put_destination (zset.c), as a skiplist shrunk to a listpack when it
 * fits, with the "georadiusstore"/"geosearchstore" event and one change per
 * member stored; an empty result deletes the destination.
 *
 * Threading and routing: a handler runs on the shard thread that owns its
 * keys and touches only ctx->store.  GEOSEARCHSTORE, GEORADIUS and
 * GEORADIUSBYMEMBER are ROUTE_GATHER (the last two find their destination
 * with CMD_STORE_KEY): when source and destination live on different
 * shards, the dispatcher locks both, brings them into one store, runs the
 * handler there and writes the destination back, atomically.
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"
#include "zset_family.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/geohash.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/pqsort.h"
#include "percore/reply.h"
#include "percore/util.h"
#include "percore/zset.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arguments ------------------------------------------------------------- */

/* Redis extractLongLatOrReply: argv[0] longitude, argv[1] latitude, within the geohash limits */
static bool lonlat_or_reply(struct cmd_ctx *ctx, const struct resp_arg *argv, double xy[2])
{
    if (!cmd_get_double_or_reply(ctx, &argv[0], &xy[0], NULL) ||
        !cmd_get_double_or_reply(ctx, &argv[1], &xy[1], NULL))
        return false;
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_errorf(ctx->out, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return false;
    }
    return true;
}

/* Redis extractUnitOrReply: meters per unit, or -1 with the error replied */
static double unit_or_reply(struct cmd_ctx *ctx, const struct resp_arg *unit)
{
    if (cmd_arg_is(unit, "m"))
        return 1;
    if (cmd_arg_is(unit, "km"))
        return 1000;
    if (cmd_arg_is(unit, "ft"))
        return 0.3048;
    if (cmd_arg_is(unit, "mi"))
        return 1609.34;
    reply_error(ctx->out, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* Redis extractDistanceOrReply: argv[0] the radius, argv[1] its unit */
static bool radius_or_reply(struct cmd_ctx *ctx, const struct resp_arg *argv, struct geo_shape *shape)
{
    double radius;
    if (!cmd_get_double_or_reply(ctx, &argv[0], &radius, "ERR need numeric radius"))
        return false;
    if (radius < 0) {
        reply_error(ctx->out, "ERR radius cannot be negative");
        return false;
    }
    double to_meters = unit_or_reply(ctx, &argv[1]);
    if (to_meters < 0)
        return false;
    shape->radius = radius;
    shape->conversion = to_meters;
    shape->type = GEO_SHAPE_CIRCLE;
    return true;
}

/* Redis extractBoxOrReply: argv[0] width, argv[1] height, argv[2] their unit */
static bool box_or_reply(struct cmd_ctx *ctx, const struct resp_arg *argv, struct geo_shape *shape)
{
    double width, height;
    if (!cmd_get_double_or_reply(ctx, &argv[0], &width, "ERR need numeric width") ||
        !cmd_get_double_or_reply(ctx, &argv[1], &height, "ERR need numeric height"))
        return false;
    if (height < 0 || width < 0) {
        reply_error(ctx->out, "ERR height or width cannot be negative");
        return false;
    }
    double to_meters = unit_or_reply(ctx, &argv[2]);
    if (to_meters < 0)
        return false;
    shape->width = width;
    shape->height = height;
    shape->conversion = to_meters;
    shape->type = GEO_SHAPE_BOX;
    return true;
}

/* the position of member in z; false when it is not there */
static bool member_position(struct zset *z, const struct resp_arg *member, double xy[2])
{
    double score;
    return zset_score(z, member->ptr, member->len, &score) && geohash_decode_score(score, xy);
}

/* ---- replies ----------------------------------------------------------------- */

/*
 * Redis 7.0.15's addReplyDoubleDistance (fixedpoint_d2string with 4 digits): d * 10^4 rounded to an
 * integer (llrint: to even), written with a dot before its last 4 digits -- not printf's "%.4f", which
 * rounds the exact binary value and so differs on ties like 8862790.56775
 */
static void reply_distance(struct reply *out, double d)
{
    char buf[48];
    int n;
    if (d == 0) {
        n = snprintf(buf, sizeof buf, "0.0000");
    } else {
        long long scaled = llrint(d * 10000.0);
        unsigned long long v = scaled < 0 ? 0ULL - (unsigned long long)scaled : (unsigned long long)scaled;
        n = snprintf(buf, sizeof buf, "%s%llu.%04llu", scaled < 0 ? "-" : "", v / 10000, v % 10000);
    }
    reply_bulk(out, buf, (size_t)n);
}

/* Redis addReplyHumanLongDouble: "%.17Lf" less its trailing zeros, a bulk string (RESP2) or a double (RESP3) */
static void reply_coordinate(struct reply *out, double d)
{
    char buf[128];
    int n = util_ld_to_str(buf + 1, sizeof buf - 3, (long double)d);
    if (out->resp == 2) {
        reply_bulk(out, buf + 1, (size_t)n);
        return;
    }
    buf[0] = ',';
    memcpy(buf + 1 + n, "\r\n", 2);
    reply_raw(out, buf, (size_t)n + 3);
}

/* ---- GEOADD ------------------------------------------------------------------- */

/* GEOADD key [NX|XX] [CH] lon lat member ...: ZADD key [NX|XX] [CH] score member ... */
static void cmd_geoadd(struct cmd_ctx *ctx)
{
    bool xx = false, nx = false;
    int first = 2;
    for (; first < ctx->argc; first++) {
        const struct resp_arg *opt = &ctx->argv[first];
        if (cmd_arg_is(opt, "nx"))
            nx = true;
        else if (cmd_arg_is(opt, "xx"))
            xx = true;
        else if (!cmd_arg_is(opt, "ch"))
            break;
    }
    if ((ctx->argc - first) % 3 || (xx && nx)) {
        reply_syntax_error(ctx->out);
        return;
    }

    int elements = (ctx->argc - first) / 3;
    int zargc = first + elements * 2;
    struct resp_arg *zargv = mem_alloc(sizeof(*zargv) * (size_t)zargc);
    char *scores = mem_alloc(24 * (size_t)(elements ? elements : 1));
    const struct command *zadd = command_step(CMD_S_ZADD);
    zargv[0] = command_name_arg(zadd);
    for (int i = 1; i < first; i++)
        zargv[i] = ctx->argv[i];
    for (int i = 0; i < elements; i++) {
        const struct resp_arg *pos = &ctx->argv[first + i * 3];
        double xy[2];
        struct geohash_bits hash;
        if (!lonlat_or_reply(ctx, pos, xy))
            goto done;
        geohash_encode_wgs84(xy[0], xy[1], GEO_STEP_MAX, &hash);
        char *score = scores + 24 * i;
        zargv[first + i * 2] = (struct resp_arg){score, (size_t)util_ll_to_str(score, (long long)geohash_align52(hash))};
        zargv[first + i * 2 + 1] = pos[2];
    }

    const struct resp_arg *argv = ctx->argv;
    int argc = ctx->argc;
    ctx->argv = zargv;
    ctx->argc = zargc;
    zadd->proc(ctx);
    ctx->argv = argv;
    ctx->argc = argc;
    if (cmd_propagating(ctx))
        cmd_propagate(ctx, zargc, zargv);
done:
    mem_release(scores);
    mem_release(zargv);
}

/* ---- GEODIST GEOHASH GEOPOS ---------------------------------------------------- */

/* GEODIST key member1 member2 [unit] */
static void cmd_geodist(struct cmd_ctx *ctx)
{
    double to_meters = 1;
    if (ctx->argc == 5) {
        to_meters = unit_or_reply(ctx, &ctx->argv[4]);
        if (to_meters < 0)
            return;
    } else if (ctx->argc > 5) {
        reply_syntax_error(ctx->out);
        return;
    }
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    double a[2], b[2];
    if (o == NULL || !member_position(object_collection_ptr(o), &ctx->argv[2], a) ||
        !member_position(object_collection_ptr(o), &ctx->argv[3], b)) {
        reply_null(ctx->out);
        return;
    }
    reply_distance(ctx->out, geohash_distance(a[0], a[1], b[0], b[1]) / to_meters);
}

/* the standard 11-character geohash of a position (latitude range -90..90, as Redis re-encodes it) */
static void standard_geohash(const double xy[2], char buf[11])
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    static const struct geohash_range lon = {-180, 180}, lat = {-90, 90};
    struct geohash_bits hash = {0, 0};
    geohash_encode(&lon, &lat, xy[0], xy[1], GEO_STEP_MAX, &hash);
    for (int i = 0; i < 10; i++)
        buf[i] = alphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1f];
    buf[10] = alphabet[0]; /* 52 bits make 10.4 characters: the 11th is 0, as Redis's */
}

/* GEOHASH key member ... */
static void cmd_geohash(struct cmd_ctx *ctx)
{
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    reply_array(ctx->out, ctx->argc - 2);
    for (int j = 2; j < ctx->argc; j++) {
        double xy[2];
        char buf[11];
        if (o == NULL || !member_position(object_collection_ptr(o), &ctx->argv[j], xy)) {
            reply_null(ctx->out);
            continue;
        }
        standard_geohash(xy, buf);
        reply_bulk(ctx->out, buf, sizeof buf);
    }
}

/* GEOPOS key member ... */
static void cmd_geopos(struct cmd_ctx *ctx)
{
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    reply_array(ctx->out, ctx->argc - 2);
    for (int j = 2; j < ctx->argc; j++) {
        double xy[2];
        if (o == NULL || !member_position(object_collection_ptr(o), &ctx->argv[j], xy)) {
            reply_null_array(ctx->out);
            continue;
        }
        reply_array(ctx->out, 2);
        reply_coordinate(ctx->out, xy[0]);
        reply_coordinate(ctx->out, xy[1]);
    }
}

/* ---- the search --------------------------------------------------------------- */

/* a member found (Redis's geoPoint) */
struct geo_point {
    double longitude;
    double latitude;
    double dist;       /* from the centre, meters (the request's unit once replied) */
    double score;      /* its geohash */
    size_t member_off; /* its bytes in the found list's `bytes` */
    size_t member_len;
};

/* the members a search found, in the order found */
struct geo_found {
    struct geo_point *points;
    size_t used;
    size_t cap;
    char *bytes; /* the members' bytes, one after the other */
    size_t len;
    size_t bytes_cap;
};

static void found_append(struct geo_found *f, const double xy[2], double dist, double score, const char *member,
                         size_t len)
{
    if (f->used == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 8;
        f->points = mem_realloc(f->points, f->cap * sizeof(*f->points));
    }
    if (f->bytes == NULL || f->len + len > f->bytes_cap) { /* never NULL once used: empty members point here */
        f->bytes_cap = (f->len + len) * 2 + 64;
        f->bytes = mem_realloc(f->bytes, f->bytes_cap);
    }
    memcpy(f->bytes + f->len, member, len);
    f->points[f->used++] = (struct geo_point){xy[0], xy[1], dist, score, f->len, len};
    f->len += len;
}

/*
 * Redis geoGetPointsInRange: the members of z with min <= score < max
 * that lie within shape, appended; stops once `limit` (0: none) are found.
 */
static void points_in_range(struct zset *z, double min, double max, const struct geo_shape *shape,
                            struct geo_found *f, size_t limit)
{
    struct zset_range range = {min, max, false, true};
    struct zset_iter it;
    for (zset_iter_score(z, &range, false, &it); it.valid; zset_iter_step(&it, false)) {
        double score = zset_iter_scoreval(&it);
        if (!zset_value_lte_max(score, &range))
            break;
        double xy[2], dist;
        if (geohash_decode_score(score, xy) && geohash_shape_contains(shape, xy[0], xy[1], &dist)) {
            size_t len;
            const char *member = zset_iter_member(&it, &len);
            found_append(f, xy, dist, score, member, len);
        }
        if (f->used && limit && f->used >= limit)
            break;
    }
}

/* Redis membersOfAllNeighbors: the centre's cell, then N S E W NE NW SE SW, a cell equal to the last one
 * searched skipped (huge radii wrap around) */
static void search_cells(struct zset *z, const struct geohash_search_area *area, const struct geo_shape *shape,
                         struct geo_found *f, size_t limit)
{
    const struct geohash_bits cells[9] = {area->hash,       area->north,      area->south,
                                          area->east,       area->west,       area->north_east,
                                          area->north_west, area->south_east, area->south_west};
    int last = 0;
    for (int i = 0; i < 9; i++) {
        if (geohash_is_zero(cells[i]))
            continue;
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step)
            continue;
        if (f->used && limit && f->used >= limit)
            break;
        struct geohash_bits next = cells[i];
        next.bits++;
        points_in_range(z, (double)geohash_align52(cells[i]), (double)geohash_align52(next), shape, f, limit);
        last = i;
    }
}

static int by_distance_asc(const void *a, const void *b)
{
    const struct geo_point *pa = a, *pb = b;
    if (pa->dist > pb->dist)
        return 1;
    if (pa->dist == pb->dist)
        return 0;
    return -1;
}

static int by_distance_desc(const void *a, const void *b)
{
    return -by_distance_asc(a, b);
}

enum geo_sort { SORT_NONE = 0, SORT_ASC, SORT_DESC };

/* which command runs the search: where its arguments are, what it accepts */
enum {
    GEO_FROM_COORDS = 1 << 0, /* GEORADIUS: key lon lat radius unit */
    GEO_FROM_MEMBER = 1 << 1, /* GEORADIUSBYMEMBER: key member radius unit */
    GEO_NO_STORE = 1 << 2,    /* the _RO forms: no STORE/STOREDIST */
    GEO_SEARCH = 1 << 3,      /* GEOSEARCH: FROMMEMBER/FROMLONLAT, BYRADIUS/BYBOX */
    GEO_SEARCH_STORE = 1 << 4 /* GEOSEARCHSTORE: dest first, STOREDIST a flag */
};

/* the options of a search (after its fixed arguments) */
struct geo_request {
    const struct resp_arg *storekey; /* NULL: reply the members */
    bool storedist;
    bool withdist, withhash, withcoord;
    bool from_member, from_lonlat, by_radius, by_box;
    bool any;
    enum geo_sort sort;
    long long count; /* 0: all */
};

/* Redis georadiusGeneric's option loop; false when it replied an error */
static bool parse_options(struct cmd_ctx *ctx, int base, int flags, struct zset *z, struct geo_shape *shape,
                          struct geo_request *rq)
{
    int remaining = ctx->argc - base;
    for (int i = 0; i < remaining; i++) {
        const struct resp_arg *arg = &ctx->argv[base + i];
        if (cmd_arg_is(arg, "withdist")) {
            rq->withdist = true;
        } else if (cmd_arg_is(arg, "withhash")) {
            rq->withhash = true;
        } else if (cmd_arg_is(arg, "withcoord")) {
            rq->withcoord = true;
        } else if (cmd_arg_is(arg, "any")) {
            rq->any = true;
        } else if (cmd_arg_is(arg, "asc")) {
            rq->sort = SORT_ASC;
        } else if (cmd_arg_is(arg, "desc")) {
            rq->sort = SORT_DESC;
        } else if (cmd_arg_is(arg, "count") && i + 1 < remaining) {
            if (!cmd_get_ll_or_reply(ctx, arg + 1, &rq->count))
                return false;
            if (rq->count <= 0) {
                reply_error(ctx->out, "ERR COUNT must be > 0");
                return false;
            }
            i++;
        } else if ((cmd_arg_is(arg, "store") || cmd_arg_is(arg, "storedist")) && i + 1 < remaining &&
                   !(flags & (GEO_NO_STORE | GEO_SEARCH))) {
            rq->storekey = arg + 1;
            rq->storedist = cmd_arg_is(arg, "storedist");
            i++;
        } else if (cmd_arg_is(arg, "storedist") && (flags & GEO_SEARCH_STORE)) {
            rq->storedist = true;
        } else if (cmd_arg_is(arg, "frommember") && i + 1 < remaining && (flags & GEO_SEARCH) && !rq->from_lonlat) {
            if (z != NULL && !member_position(z, arg + 1, shape->xy)) {
                reply_error(ctx->out, "ERR could not decode requested zset member");
                return false;
            }
            rq->from_member = true;
            i++;
        } else if (cmd_arg_is(arg, "fromlonlat") && i + 2 < remaining && (flags & GEO_SEARCH) && !rq->from_member) {
            if (!lonlat_or_reply(ctx, arg + 1, shape->xy))
                return false;
            rq->from_lonlat = true;
            i += 2;
        } else if (cmd_arg_is(arg, "byradius") && i + 2 < remaining && (flags & GEO_SEARCH) && !rq->by_box) {
            if (!radius_or_reply(ctx, arg + 1, shape))
                return false;
            rq->by_radius = true;
            i += 2;
        } else if (cmd_arg_is(arg, "bybox") && i + 3 < remaining && (flags & GEO_SEARCH) && !rq->by_radius) {
            if (!box_or_reply(ctx, arg + 1, shape))
                return false;
            rq->by_box = true;
            i += 3;
        } else {
            reply_syntax_error(ctx->out);
            return false;
        }
    }
    return true;
}

/* Redis's checks after the options; false when it replied an error */
static bool check_request(struct cmd_ctx *ctx, int flags, const struct geo_request *rq)
{
    if (rq->storekey && (rq->withdist || rq->withhash || rq->withcoord)) {
        reply_errorf(ctx->out, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     flags & GEO_SEARCH_STORE ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return false;
    }
    const struct resp_arg *name = &ctx->argv[0];
    if ((flags & GEO_SEARCH) && !(rq->from_member || rq->from_lonlat)) {
        reply_errorf(ctx->out, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                     (int)name->len, name->ptr);
        return false;
    }
    if ((flags & GEO_SEARCH) && !(rq->by_radius || rq->by_box)) {
        reply_errorf(ctx->out, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s", (int)name->len,
                     name->ptr);
        return false;
    }
    if (rq->any && !rq->count) {
        reply_error(ctx->out, "ERR the ANY argument requires COUNT argument");
        return false;
    }
    return true;
}

/* the found members (the first `n`, in their order) as the reply */
static void reply_found(struct cmd_ctx *ctx, const struct geo_request *rq, const struct geo_shape *shape,
                        const struct geo_found *f, size_t n)
{
    int options = rq->withdist + rq->withcoord + rq->withhash;
    reply_array(ctx->out, (long long)n);
    for (size_t i = 0; i < n; i++) {
        const struct geo_point *p = &f->points[i];
        if (options)
            reply_array(ctx->out, options + 1);
        reply_bulk(ctx->out, f->bytes + p->member_off, p->member_len);
        if (rq->withdist)
            reply_distance(ctx->out, p->dist / shape->conversion);
        if (rq->withhash)
            reply_int(ctx->out, (long long)p->score);
        if (rq->withcoord) {
            reply_array(ctx->out, 2);
            reply_coordinate(ctx->out, p->longitude);
            reply_coordinate(ctx->out, p->latitude);
        }
    }
}

/* the found members (the first `n`) into the destination: scores their geohash, or distance (STOREDIST) */
static void store_found(struct cmd_ctx *ctx, const struct geo_request *rq, const struct geo_shape *shape,
                        const struct geo_found *f, size_t n, int flags)
{
    struct zset *dst = zset_create(ZSET_ENC_SKIPLIST);
    size_t maxelelen = 0;
    for (size_t i = 0; i < n; i++) {
        const struct geo_point *p = &f->points[i];
        double score = rq->storedist ? p->dist / shape->conversion : p->score;
        int out = 0;
        zset_add(dst, score, f->bytes + p->member_off, p->member_len, 0, &out, NULL, SIZE_MAX, SIZE_MAX);
        if (p->member_len > maxelelen)
            maxelelen = p->member_len;
    }
    if (n) {
        long long entries = ctx->config ? ctx->config->zset_max_listpack_entries : 128;
        long long value = ctx->config ? ctx->config->zset_max_listpack_value : 64;
        zset_maybe_shrink(dst, maxelelen, entries < 0 ? 0 : (size_t)entries, value < 0 ? 0 : (size_t)value);
    }
    zset_put_destination(ctx, rq->storekey, dst, flags & GEO_SEARCH ? "geosearchstore" : "georadiusstore",
                         (long long)n);
}

/* Redis georadiusGeneric: the source sorted set at argv[srckey] */
static void geo_search_generic(struct cmd_ctx *ctx, int srckey, int flags)
{
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[srckey], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    struct zset *z = o ? object_collection_ptr(o) : NULL;

    struct geo_shape shape = {0};
    struct geo_request rq = {0};
    int base;
    if (flags & GEO_FROM_COORDS) {
        base = 6;
        if (!lonlat_or_reply(ctx, &ctx->argv[2], shape.xy) || !radius_or_reply(ctx, &ctx->argv[4], &shape))
            return;
    } else if (flags & GEO_FROM_MEMBER) {
        base = 5;
        if (z != NULL) {
            if (!member_position(z, &ctx->argv[2], shape.xy)) {
                reply_error(ctx->out, "ERR could not decode requested zset member");
                return;
            }
            if (!radius_or_reply(ctx, &ctx->argv[3], &shape))
                return;
        }
    } else {
        base = flags & GEO_SEARCH_STORE ? 3 : 2;
        if (flags & GEO_SEARCH_STORE)
            rq.storekey = &ctx->argv[1];
    }
    if (!parse_options(ctx, base, flags, z, &shape, &rq) || !check_request(ctx, flags, &rq))
        return;

    if (z == NULL) {
        if (rq.storekey)
            zset_put_destination(ctx, rq.storekey, zset_create(ZSET_ENC_SKIPLIST), NULL, 0);
        else
            reply_array(ctx->out, 0);
        return;
    }

    /* COUNT without ASC/DESC sorts ascending, to return the nearest (not with ANY) */
    if (rq.count != 0 && rq.sort == SORT_NONE && !rq.any)
        rq.sort = SORT_ASC;

    struct geohash_search_area area;
    geohash_search_area_of(&shape, &area);
    struct geo_found found = {0};
    search_cells(z, &area, &shape, &found, rq.any ? (size_t)rq.count : 0);

    if (found.used == 0 && rq.storekey == NULL) {
        reply_array(ctx->out, 0);
    } else {
        size_t n = rq.count == 0 || found.used < (size_t)rq.count ? found.used : (size_t)rq.count;
        if (rq.sort != SORT_NONE && found.used) {
            pqsort_cmp_fn *cmp = rq.sort == SORT_ASC ? by_distance_asc : by_distance_desc;
            if (n == found.used)
                qsort(found.points, found.used, sizeof(*found.points), cmp);
            else
                pqsort(found.points, found.used, sizeof(*found.points), cmp, 0, n - 1);
        }
        if (rq.storekey == NULL)
            reply_found(ctx, &rq, &shape, &found, n);
        else
            store_found(ctx, &rq, &shape, &found, n, flags);
    }
    mem_release(found.points);
    mem_release(found.bytes);
}

static void cmd_georadius(struct cmd_ctx *ctx)
{
    geo_search_generic(ctx, 1, GEO_FROM_COORDS);
}

static void cmd_georadiusbymember(struct cmd_ctx *ctx)
{
    geo_search_generic(ctx, 1, GEO_FROM_MEMBER);
}

static void cmd_georadius_ro(struct cmd_ctx *ctx)
{
    geo_search_generic(ctx, 1, GEO_FROM_COORDS | GEO_NO_STORE);
}

static void cmd_georadiusbymember_ro(struct cmd_ctx *ctx)
{
    geo_search_generic(ctx, 1, GEO_FROM_MEMBER | GEO_NO_STORE);
}

static void cmd_geosearch(struct cmd_ctx *ctx)
{
    geo_search_generic(ctx, 1, GEO_SEARCH);
}

static void cmd_geosearchstore(struct cmd_ctx *ctx)
{
    geo_search_generic(ctx, 2, GEO_SEARCH | GEO_SEARCH_STORE);
}

/* ---- table --------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND INFO reports them */
const struct command command_family_geo[] = {
    {"geoadd", cmd_geoadd, -5, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER, "@write @geo @slow"},
    {"geodist", cmd_geodist, -4, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @geo @slow"},
    {"geohash", cmd_geohash, -2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @geo @slow"},
    {"geopos", cmd_geopos, -2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @geo @slow"},
    {"georadius", cmd_georadius, -6, CMD_WRITE | CMD_DENYOOM | CMD_STORE_KEY, 1, 1, 1, ROUTE_GATHER,
     "@write @geo @slow"},
    {"georadius_ro", cmd_georadius_ro, -6, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @geo @slow"},
    {"georadiusbymember", cmd_georadiusbymember, -5, CMD_WRITE | CMD_DENYOOM | CMD_STORE_KEY, 1, 1, 1,
     ROUTE_GATHER, "@write @geo @slow"},
    {"georadiusbymember_ro", cmd_georadiusbymember_ro, -5, CMD_READONLY, 1, 1, 1, ROUTE_OWNER,
     "@read @geo @slow"},
    {"geosearch", cmd_geosearch, -7, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @geo @slow"},
    {"geosearchstore", cmd_geosearchstore, -8, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, ROUTE_GATHER,
     "@write @geo @slow"},
};

const size_t command_family_geo_count = sizeof(command_family_geo) / sizeof(command_family_geo[0]);
