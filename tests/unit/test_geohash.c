/*
 * test_geohash: the geohash module (server/base/geohash.c) against values
 * redis-server 7.0.15 gives for Redis's documented example (GEOADD Sicily
 * 13.361389 38.115556 Palermo 15.087269 37.502669 Catania: ZSCORE,
 * GEOPOS, GEODIST), and the properties the search relies on: cells contain
 * what they encode, neighbours are adjacent and wrap at the antimeridian,
 * the search area covers its shape.
 */
#include "percore/geohash.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void test_encode_decode(void)
{
    struct geohash_bits h;
    CHECK(geohash_encode_wgs84(13.361389, 38.115556, GEO_STEP_MAX, &h));
    CHECK_EQ_LL(geohash_align52(h), 3479099956230698LL);
    CHECK(geohash_encode_wgs84(15.087269, 37.502669, GEO_STEP_MAX, &h));
    CHECK_EQ_LL(geohash_align52(h), 3479447370796909LL);

    double xy[2];
    CHECK(geohash_decode_score(3479099956230698.0, xy));
    CHECK(xy[0] == strtod("13.36138933897018433", NULL));
    CHECK(xy[1] == strtod("38.11555639549629859", NULL));
    double ab[2];
    CHECK(geohash_decode_score(3479447370796909.0, ab));
    CHECK(ab[0] == strtod("15.08726745843887329", NULL));
    CHECK(ab[1] == strtod("37.50266842333162032", NULL));

    char buf[32];
    snprintf(buf, sizeof buf, "%.4f", geohash_distance(xy[0], xy[1], ab[0], ab[1]));
    CHECK_MEM(buf, strlen(buf), "166274.1516");
    CHECK(geohash_distance(xy[0], xy[1], xy[0], xy[1]) == 0);

    /* out of the Mercator limits: refused */
    CHECK(!geohash_encode_wgs84(180.0001, 0, GEO_STEP_MAX, &h));
    CHECK(!geohash_encode_wgs84(0, 85.06, GEO_STEP_MAX, &h));
    CHECK(!geohash_encode_wgs84(0, 0, 0, &h));
    /* the corners are cells too */
    CHECK(geohash_encode_wgs84(180, 85.05112878, GEO_STEP_MAX, &h));
    CHECK(geohash_decode_score((double)geohash_align52(h), xy));
    CHECK(xy[0] <= 180 && xy[1] <= GEO_LAT_MAX);
}

/* every position decodes to the centre of its own cell, within half a cell */
static void test_roundtrip(void)
{
    srand(7);
    for (int i = 0; i < 20000; i++) {
        double lon = -180 + 360.0 * rand() / RAND_MAX, lat = GEO_LAT_MIN + (GEO_LAT_MAX - GEO_LAT_MIN) * rand() / RAND_MAX;
        struct geohash_bits h;
        double xy[2];
        CHECK(geohash_encode_wgs84(lon, lat, GEO_STEP_MAX, &h));
        CHECK(geohash_decode_score((double)geohash_align52(h), xy));
        CHECK(fabs(xy[0] - lon) <= 360.0 / (1 << 26) && fabs(xy[1] - lat) <= 171.0 / (1 << 26));
    }
}

/* a search's cells cover every point of its circle: each point within the radius lies in one of them */
static void test_search_area_covers(void)
{
    srand(11);
    for (int i = 0; i < 2000; i++) {
        struct geo_shape shape = {.type = GEO_SHAPE_CIRCLE, .conversion = 1};
        shape.xy[0] = -180 + 360.0 * rand() / RAND_MAX;
        shape.xy[1] = -80 + 160.0 * rand() / RAND_MAX;
        shape.radius = pow(10, 1 + 5.0 * rand() / RAND_MAX);
        struct geohash_search_area area;
        geohash_search_area_of(&shape, &area);
        const struct geohash_bits cells[9] = {area.hash,       area.north,      area.south,      area.east,
                                              area.west,       area.north_east, area.north_west, area.south_east,
                                              area.south_west};
        for (int j = 0; j < 20; j++) {
            double lon = shape.bounds[0] + (shape.bounds[2] - shape.bounds[0]) * rand() / RAND_MAX;
            double lat = shape.bounds[1] + (shape.bounds[3] - shape.bounds[1]) * rand() / RAND_MAX;
            double dist;
            struct geohash_bits p;
            if (lon < -180 || lon > 180 || !geohash_shape_contains(&shape, lon, lat, &dist) ||
                !geohash_encode_wgs84(lon, lat, GEO_STEP_MAX, &p))
                continue;
            uint64_t score = geohash_align52(p);
            bool covered = false;
            for (int c = 0; c < 9 && !covered; c++) {
                struct geohash_bits next = cells[c];
                next.bits++;
                covered = !geohash_is_zero(cells[c]) && score >= geohash_align52(cells[c]) &&
                          score < geohash_align52(next);
            }
            CHECK(covered);
        }
    }
}

static void test_box(void)
{
    struct geo_shape box = {.type = GEO_SHAPE_BOX, .conversion = 1000, .width = 200, .height = 100};
    box.xy[0] = 15;
    box.xy[1] = 37;
    double dist;
    CHECK(geohash_shape_contains(&box, 15, 37, &dist) && dist == 0);
    CHECK(geohash_shape_contains(&box, 16, 37, &dist));  /* ~89 km east: within 100 km */
    CHECK(!geohash_shape_contains(&box, 15, 37.5, &dist)); /* ~56 km north: past 50 km */
    CHECK(geohash_shape_contains(&box, 15, 37.4, &dist));
}

int main(void)
{
    test_encode_decode();
    test_roundtrip();
    test_search_area_covers();
    test_box();
    return check_done("test_geohash");
}
