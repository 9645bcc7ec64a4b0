/*
 * geohash: Redis 7.0's 52-bit geohash and the area search built on it
 * (Redis's geohash.c and geohash_helper.c), for the geo commands.
 *
 * A position is a cell of a 2^26 x 2^26 grid over longitude [-180, 180] and
 * latitude [-85.05112878, 85.05112878] (the Web Mercator limits), its
 * latitude bits in the even positions and its longitude bits in the odd
 * ones; the 52 bits, as an integer, are the position's sorted set score.  A
 * search covers its shape with the cell of the centre at a step (a prefix
 * length) chosen from the radius, plus that cell's eight neighbours, each of
 * which is one score range of the sorted set.  Distances are the haversine
 * great-circle formula on a sphere of radius 6372797.560856 m (along one
 * meridian the arc itself, as Redis 7.0.15 computes it).
 *
 * Every computation is Redis's, in its order of floating-point operations,
 * so that cells, distances and the boxes searched (hence results and their
 * order) are bit for bit Redis's.  Pure functions: any thread.
 */
#ifndef PERCORE_GEOHASH_H
#define PERCORE_GEOHASH_H

#include <stdbool.h>
#include <stdint.h>

#define GEO_STEP_MAX 26 /* 26 * 2 = 52 bits */
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN -180
#define GEO_LONG_MAX 180

/* a cell: its `step` * 2 interleaved bits; bits 0 and step 0 is "no cell" */
struct geohash_bits {
    uint64_t bits;
    uint8_t step;
};

struct geohash_range {
    double min;
    double max;
};

/* a cell and the coordinates it spans */
struct geohash_area {
    struct geohash_bits hash;
    struct geohash_range longitude;
    struct geohash_range latitude;
};

/* what a search covers: the centre's cell and the neighbours not ruled out (those are "no cell") */
struct geohash_search_area {
    struct geohash_bits hash;
    struct geohash_area area;
    struct geohash_bits north, south, east, west, north_east, north_west, south_east, south_west;
};

enum geo_shape_type { GEO_SHAPE_CIRCLE = 0, GEO_SHAPE_BOX = 1 };

/* a search's shape, its sizes in the request's unit (`conversion` meters each) */
struct geo_shape {
    enum geo_shape_type type;
    double xy[2];      /* the centre: longitude, latitude */
    double conversion; /* meters per unit */
    double radius;     /* GEO_SHAPE_CIRCLE */
    double width;      /* GEO_SHAPE_BOX */
    double height;
    double bounds[4];  /* set by geohash_search_area_of: min lon, min lat, max lon, max lat */
};

/* Redis geohashEncode over the given ranges: false when outside them or the WGS84 limits */
bool geohash_encode(const struct geohash_range *lon_range, const struct geohash_range *lat_range, double longitude,
                    double latitude, uint8_t step, struct geohash_bits *hash);
/* the same over the WGS84 (Web Mercator) ranges */
bool geohash_encode_wgs84(double longitude, double latitude, uint8_t step, struct geohash_bits *hash);
/* the cell's bits left-aligned to 52 (the score of its first position) */
uint64_t geohash_align52(struct geohash_bits hash);
/* a member's score to the centre of its 52-bit cell, xy[0] longitude, xy[1] latitude; false: undecodable */
bool geohash_decode_score(double score, double xy[2]);
/* the cells to search for shape (its bounds filled in), Redis geohashCalculateAreasByShapeWGS84 */
void geohash_search_area_of(struct geo_shape *shape, struct geohash_search_area *out);
/* is the cell "no cell" (a neighbour ruled out) */
static inline bool geohash_is_zero(struct geohash_bits h)
{
    return h.bits == 0 && h.step == 0;
}

/* great-circle distance in meters, Redis 7.0.15's geohashGetDistance */
double geohash_distance(double lon1, double lat1, double lon2, double lat2);
/* is (x, y) within shape (Redis geoWithinShape); *distance its distance from the centre in meters when it is */
bool geohash_shape_contains(const struct geo_shape *shape, double x, double y, double *distance);

#endif
