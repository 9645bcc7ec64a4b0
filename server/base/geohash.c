/*
 * geohash: Redis 7.0's geohash cells, neighbours, search areas and
 * distances (include/percore/geohash.h says what they are).
 *
 * Design: the results of the geo commands (which members a search finds, in
 * which order without ASC/DESC, their distances to 4 decimals) depend on the
 * exact cells searched and on the last bits of every distance, so each
 * function does Redis's floating-point operations in Redis's order:
 * encoding scales the offset in the range by 2^step and truncates; decoding
 * takes a cell's centre; the search step comes from doubling the radius up
 * to the Mercator width, one less near the poles, one less again when a
 * neighbour does not reach the shape's bounding box; neighbours that lie
 * wholly outside the bounding box are dropped; a distance along one
 * meridian is the arc, not the haversine, and a box checks its height
 * first (Redis 7.0.15's binary does both; they round differently).  Moving to a neighbour wraps
 * around in longitude (the antimeridian) and in latitude, as Redis's does.
 *
 * No state, no allocation: any thread.
 */
#include "percore/geohash.h"

#include <math.h>
#include <stddef.h>

#define EARTH_RADIUS_IN_METERS 6372797.560856
#define MERCATOR_MAX 20037726.37
#define DEG_TO_RAD (M_PI / 180.0)

static inline double deg_rad(double ang)
{
    return ang * DEG_TO_RAD;
}

static inline double rad_deg(double ang)
{
    return ang / DEG_TO_RAD;
}

static const struct geohash_range wgs84_longitude = {GEO_LONG_MIN, GEO_LONG_MAX};
static const struct geohash_range wgs84_latitude = {GEO_LAT_MIN, GEO_LAT_MAX};

/* the low 32 bits of lat in the even bit positions, of lon in the odd ones */
static uint64_t interleave64(uint32_t lat, uint32_t lon)
{
    static const uint64_t mask[] = {0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
                                    0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL};
    uint64_t x = lat, y = lon;
    for (int i = 4; i >= 0; i--) {
        x = (x | (x << (1u << i))) & mask[i];
        y = (y | (y << (1u << i))) & mask[i];
    }
    return x | (y << 1);
}

/* the inverse: the even bits in the low half, the odd bits in the high half */
static uint64_t deinterleave64(uint64_t bits)
{
    static const uint64_t mask[] = {0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
                                    0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL, 0x00000000FFFFFFFFULL};
    uint64_t x = bits & mask[0], y = (bits >> 1) & mask[0];
    for (int i = 1; i <= 5; i++) {
        x = (x | (x >> (1u << (i - 1)))) & mask[i];
        y = (y | (y >> (1u << (i - 1)))) & mask[i];
    }
    return x | (y << 32);
}

bool geohash_encode(const struct geohash_range *lon_range, const struct geohash_range *lat_range, double longitude,
                    double latitude, uint8_t step, struct geohash_bits *hash)
{
    if (step > 32 || step == 0)
        return false;
    if (longitude > GEO_LONG_MAX || longitude < GEO_LONG_MIN || latitude > GEO_LAT_MAX || latitude < GEO_LAT_MIN)
        return false;
    hash->bits = 0;
    hash->step = step;
    if (latitude < lat_range->min || latitude > lat_range->max || longitude < lon_range->min ||
        longitude > lon_range->max)
        return false;
    double lat_offset = (latitude - lat_range->min) / (lat_range->max - lat_range->min);
    double lon_offset = (longitude - lon_range->min) / (lon_range->max - lon_range->min);
    lat_offset *= (double)(1ULL << step);
    lon_offset *= (double)(1ULL << step);
    hash->bits = interleave64((uint32_t)lat_offset, (uint32_t)lon_offset);
    return true;
}

bool geohash_encode_wgs84(double longitude, double latitude, uint8_t step, struct geohash_bits *hash)
{
    return geohash_encode(&wgs84_longitude, &wgs84_latitude, longitude, latitude, step, hash);
}

uint64_t geohash_align52(struct geohash_bits hash)
{
    return hash.bits << (52 - hash.step * 2);
}

/* the coordinates a cell spans; false for "no cell" */
static bool decode_area(struct geohash_bits hash, struct geohash_area *area)
{
    if (geohash_is_zero(hash))
        return false;
    area->hash = hash;
    uint64_t separated = deinterleave64(hash.bits);
    double lat_scale = wgs84_latitude.max - wgs84_latitude.min;
    double lon_scale = wgs84_longitude.max - wgs84_longitude.min;
    uint32_t ilat = (uint32_t)separated;
    uint32_t ilon = (uint32_t)(separated >> 32);
    double cells = (double)(1ULL << hash.step);
    area->latitude.min = wgs84_latitude.min + (ilat * 1.0 / cells) * lat_scale;
    area->latitude.max = wgs84_latitude.min + ((ilat + 1) * 1.0 / cells) * lat_scale;
    area->longitude.min = wgs84_longitude.min + (ilon * 1.0 / cells) * lon_scale;
    area->longitude.max = wgs84_longitude.min + ((ilon + 1) * 1.0 / cells) * lon_scale;
    return true;
}

/*
 * Redis's (uint64_t)score as its x86-64 build computes it: C leaves the conversion of a negative or too
 * large score undefined, and Redis answers GEOPOS of such a member (a sorted set that is no geo set)
 * from the bits it gets.
 */
static uint64_t score_bits(double score)
{
    if (score >= 0x1p64)
        return 0; /* +inf too: the conversion's "indefinite" value, 2^63, its top bit flipped back */
    if (score >= 0)
        return (uint64_t)score;
    if (score > -0x1p63)
        return (uint64_t)(int64_t)score; /* two's complement */
    return 1ULL << 63;                    /* -inf too: the indefinite value */
}

bool geohash_decode_score(double score, double xy[2])
{
    struct geohash_bits hash = {score_bits(score), GEO_STEP_MAX};
    struct geohash_area area;
    if (!decode_area(hash, &area))
        return false;
    xy[0] = (area.longitude.min + area.longitude.max) / 2;
    if (xy[0] > GEO_LONG_MAX)
        xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN)
        xy[0] = GEO_LONG_MIN;
    xy[1] = (area.latitude.min + area.latitude.max) / 2;
    if (xy[1] > GEO_LAT_MAX)
        xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN)
        xy[1] = GEO_LAT_MIN;
    return true;
}

/*
 * The neighbour d cells (-1, 0, 1) away along the odd bits (longitude) or
 * the even bits (latitude): add or subtract one in those bits alone,
 * wrapping within the step.
 */
static void move_bits(struct geohash_bits *hash, int d, uint64_t moved_mask)
{
    if (d == 0)
        return;
    uint64_t kept_mask = ~moved_mask;
    uint64_t moved = hash->bits & moved_mask;
    uint64_t kept = hash->bits & kept_mask;
    uint64_t filler = kept_mask >> (64 - hash->step * 2);
    if (d > 0) {
        moved = moved + (filler + 1);
    } else {
        moved = moved | filler;
        moved = moved - (filler + 1);
    }
    moved &= moved_mask >> (64 - hash->step * 2);
    hash->bits = moved | kept;
}

#define LON_BITS 0xaaaaaaaaaaaaaaaaULL
#define LAT_BITS 0x5555555555555555ULL

static struct geohash_bits neighbour(struct geohash_bits hash, int dlon, int dlat)
{
    move_bits(&hash, dlon, LON_BITS);
    move_bits(&hash, dlat, LAT_BITS);
    return hash;
}

/* Redis geohashEstimateStepsByRadius: the step whose cells fit the radius */
static int steps_for_radius(double range_meters, double lat)
{
    if (range_meters == 0)
        return 26;
    int step = 1;
    while (range_meters < MERCATOR_MAX) {
        range_meters *= 2;
        step++;
    }
    step -= 2;
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80)
            step--;
    }
    if (step < 1)
        step = 1;
    if (step > 26)
        step = 26;
    return step;
}

/* Redis geohashBoundingBox: min lon, min lat, max lon, max lat around the shape's centre */
static void bounding_box(struct geo_shape *shape)
{
    double longitude = shape->xy[0], latitude = shape->xy[1];
    double height = shape->conversion * (shape->type == GEO_SHAPE_CIRCLE ? shape->radius : shape->height / 2);
    double width = shape->conversion * (shape->type == GEO_SHAPE_CIRCLE ? shape->radius : shape->width / 2);
    const double lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
    const double lon_delta_top = rad_deg(width / EARTH_RADIUS_IN_METERS / cos(deg_rad(latitude + lat_delta)));
    const double lon_delta_bottom = rad_deg(width / EARTH_RADIUS_IN_METERS / cos(deg_rad(latitude - lat_delta)));
    bool southern = latitude < 0;
    shape->bounds[0] = southern ? longitude - lon_delta_bottom : longitude - lon_delta_top;
    shape->bounds[2] = southern ? longitude + lon_delta_bottom : longitude + lon_delta_top;
    shape->bounds[1] = latitude - lat_delta;
    shape->bounds[3] = latitude + lat_delta;
}

/* the centre's cell at step and its eight neighbours */
static void cells_at(const struct geo_shape *shape, int step, struct geohash_search_area *out)
{
    geohash_encode_wgs84(shape->xy[0], shape->xy[1], (uint8_t)step, &out->hash);
    struct geohash_bits h = out->hash;
    out->east = neighbour(h, 1, 0);
    out->west = neighbour(h, -1, 0);
    out->south = neighbour(h, 0, -1);
    out->north = neighbour(h, 0, 1);
    out->north_west = neighbour(h, -1, 1);
    out->north_east = neighbour(h, 1, 1);
    out->south_east = neighbour(h, 1, -1);
    out->south_west = neighbour(h, -1, -1);
    decode_area(h, &out->area);
}

static const struct geohash_bits no_cell = {0, 0};

void geohash_search_area_of(struct geo_shape *shape, struct geohash_search_area *out)
{
    bounding_box(shape);
    double min_lon = shape->bounds[0], min_lat = shape->bounds[1];
    double max_lon = shape->bounds[2], max_lat = shape->bounds[3];
    double radius_meters = shape->type == GEO_SHAPE_CIRCLE
                               ? shape->radius
                               : sqrt((shape->width / 2) * (shape->width / 2) +
                                      (shape->height / 2) * (shape->height / 2));
    radius_meters *= shape->conversion;

    int steps = steps_for_radius(radius_meters, shape->xy[1]);
    cells_at(shape, steps, out);

    /* a neighbour that does not reach the bounding box's edge: one step coarser */
    struct geohash_area north, south, east, west;
    decode_area(out->north, &north);
    decode_area(out->south, &south);
    decode_area(out->east, &east);
    decode_area(out->west, &west);
    bool decrease_step = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                         east.longitude.max < max_lon || west.longitude.min > min_lon;
    if (steps > 1 && decrease_step) {
        steps--;
        cells_at(shape, steps, out);
    }

    /* neighbours beyond the bounding box are not searched */
    if (steps >= 2) {
        const struct geohash_area *area = &out->area;
        if (area->latitude.min < min_lat)
            out->south = out->south_west = out->south_east = no_cell;
        if (area->latitude.max > max_lat)
            out->north = out->north_east = out->north_west = no_cell;
        if (area->longitude.min < min_lon)
            out->west = out->south_west = out->north_west = no_cell;
        if (area->longitude.max > max_lon)
            out->east = out->south_east = out->north_east = no_cell;
    }
}

/* along a meridian: the arc between the latitudes (Redis geohashGetLatDistance) */
static double lat_distance(double lat1, double lat2)
{
    return EARTH_RADIUS_IN_METERS * fabs(deg_rad(lat2) - deg_rad(lat1));
}

double geohash_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    if (v == 0.0) /* one meridian: Redis 7.0.15 takes the arc, which rounds apart from the haversine */
        return lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    return 2.0 * EARTH_RADIUS_IN_METERS * asin(sqrt(u * u + cos(lat1r) * cos(lat2r) * v * v));
}

bool geohash_shape_contains(const struct geo_shape *shape, double x, double y, double *distance)
{
    double cx = shape->xy[0], cy = shape->xy[1];
    if (shape->type == GEO_SHAPE_CIRCLE) {
        *distance = geohash_distance(cx, cy, x, y);
        return *distance <= shape->radius * shape->conversion;
    }
    /* the box: its half height along the point's meridian, then its half width along the point's parallel */
    if (lat_distance(y, cy) > shape->height * shape->conversion / 2)
        return false;
    if (geohash_distance(x, y, cx, y) > shape->width * shape->conversion / 2)
        return false;
    *distance = geohash_distance(cx, cy, x, y);
    return true;
}
