/*
 * test_effects_geo: what the geo commands (server/cmd/geo.c) report they
 * did -- modified keys and keyspace events, in order -- driven directly on
 * one store (effects_check.h).  The events and their order are
 * redis-server 7.0.15's (notify-keyspace-events KAn): GEOADD is ZADD's
 * ("new", the signal, "zadd"); the STORE forms signal and notify their
 * destination only ("new" when created, then "georadiusstore" or
 * "geosearchstore"), or "del" it when the result is empty; searches none.
 */
#include "effects_check.h"

static void test_geoadd(void)
{
    fx_reset();
    FX(":2\r\n", "n:new@0:g mod@0:g z:zadd@0:g", "geoadd", "g", "13.361389", "38.115556", "Palermo", "15.087269",
       "37.502669", "Catania");
    FX(":0\r\n", "", "geoadd", "g", "13.361389", "38.115556", "Palermo");
    FX(":0\r\n", "mod@0:g z:zadd@0:g", "geoadd", "g", "1", "1", "Palermo");
    FX(":1\r\n", "mod@0:g z:zadd@0:g", "geoadd", "g", "ch", "2", "2", "Palermo");
    FX(":0\r\n", "", "geoadd", "g", "nx", "3", "3", "Palermo");
    FX(":0\r\n", "", "geoadd", "missing", "xx", "3", "3", "Palermo");
    FX("-ERR invalid longitude,latitude pair 200.000000,1.000000\r\n", "", "geoadd", "g", "200", "1", "x");
    FX("-ERR syntax error\r\n", "", "geoadd", "g", "nx", "xx", "1", "1", "x");
    FX_RUN("set", "s", "foo");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "geoadd", "s", "1", "1", "x");
    fx_db = 2;
    FX(":1\r\n", "n:new@2:g mod@2:g z:zadd@2:g", "geoadd", "g", "1", "1", "x");
}

static void test_store(void)
{
    fx_reset();
    FX_RUN("geoadd", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania");
    FX(":2\r\n", "n:new@0:d mod@0:d z:geosearchstore@0:d", "geosearchstore", "d", "g", "fromlonlat", "15", "37",
       "byradius", "200", "km");
    FX(":1\r\n", "mod@0:d z:geosearchstore@0:d", "geosearchstore", "d", "g", "fromlonlat", "15", "37", "byradius",
       "200", "km", "count", "1", "storedist");
    FX(":0\r\n", "mod@0:d g:del@0:d", "geosearchstore", "d", "g", "fromlonlat", "100", "37", "byradius", "1", "km");
    FX(":0\r\n", "", "geosearchstore", "d", "g", "fromlonlat", "100", "37", "byradius", "1", "km");
    FX(":0\r\n", "", "geosearchstore", "d", "nokey", "fromlonlat", "100", "37", "byradius", "1", "km");
    FX(":2\r\n", "n:new@0:r mod@0:r z:georadiusstore@0:r", "georadius", "g", "15", "37", "200", "km", "store",
       "r");
    FX(":2\r\n", "mod@0:r z:georadiusstore@0:r", "georadiusbymember", "g", "Catania", "200", "km", "storedist",
       "r");
    FX(":0\r\n", "mod@0:r g:del@0:r", "georadius", "nokey", "15", "37", "200", "km", "store", "r");
    FX("*2\r\n$7\r\nCatania\r\n$7\r\nPalermo\r\n", "", "georadius", "g", "15", "37", "200", "km", "asc");
    FX("-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n", "",
       "georadius", "g", "15", "37", "200", "km", "withdist", "store", "r");
}

int main(void)
{
    fx_setup();
    test_geoadd();
    test_store();
    fx_teardown();
    return check_done("test_effects_geo");
}
