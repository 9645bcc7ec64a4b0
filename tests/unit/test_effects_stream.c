/*
 * test_effects_stream: what the stream commands (server/cmd/stream.c)
 * report they did -- modified keys and keyspace events, in order -- driven
 * directly on one store (effects_check.h).  The events and their order are
 * redis-server 7.0.15's (notify-keyspace-events KAn), the modified keys
 * where its t_stream.c calls signalModifiedKey (XSETID and the group
 * commands: none, but MKSTREAM's new stream), and the keys it makes ready
 * for blocked clients (XGROUP DESTROY).
 */
#include "effects_check.h"

static void test_xadd(void)
{
    fx_reset();
    FX("$3\r\n1-1\r\n", "n:new@0:s mod@0:s t:xadd@0:s", "xadd", "s", "1-1", "a", "1");
    FX("$3\r\n2-0\r\n", "mod@0:s t:xadd@0:s", "xadd", "s", "2-*", "b", "2");
    FX("-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n", "", "xadd", "s",
       "1-1", "a", "1");
    FX("-ERR The ID specified in XADD must be greater than 0-0\r\n", "", "xadd", "t", "0-0", "a", "1");
    FX("$-1\r\n", "", "xadd", "t", "NOMKSTREAM", "*", "a", "1");
    FX("$3\r\n3-0\r\n", "mod@0:s t:xadd@0:s t:xtrim@0:s", "xadd", "s", "MAXLEN", "1", "3-0", "c", "3");
    FX("$3\r\n4-0\r\n", "mod@0:s t:xadd@0:s", "xadd", "s", "MAXLEN", "5", "4-0", "c", "3");
    FX("$3\r\n5-0\r\n", "mod@0:s t:xadd@0:s t:xtrim@0:s", "xadd", "s", "MAXLEN", "~", "0", "5-0", "c", "3");
    FX(":0\r\n", "", "xlen", "s");
    FX_RUN("set", "str", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "xadd", "str", "*", "a", "1");
    fx_db = 3;
    FX("$3\r\n1-1\r\n", "n:new@3:s mod@3:s t:xadd@3:s", "xadd", "s", "1-1", "a", "1");
}

/* consumer groups: events only (Redis's t_stream.c signals no modified key but for MKSTREAM's new stream);
 * XGROUP DESTROY makes the key ready for its blocked XREADGROUP clients */
static void test_groups(void)
{
    fx_reset();
    FX_RUN("xadd", "g", "1-0", "a", "1");
    FX("+OK\r\n", "t:xgroup-create@0:g", "xgroup", "create", "g", "grp", "0");
    FX("-BUSYGROUP Consumer Group name already exists\r\n", "", "xgroup", "create", "g", "grp", "0");
    FX("+OK\r\n", "n:new@0:m mod@0:m t:xgroup-create@0:m", "xgroup", "create", "m", "grp", "$", "MKSTREAM");
    FX(":1\r\n", "t:xgroup-createconsumer@0:g", "xgroup", "createconsumer", "g", "grp", "alice");
    FX(":0\r\n", "", "xgroup", "createconsumer", "g", "grp", "alice");
    FX("*1\r\n*2\r\n$1\r\ng\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
       "t:xgroup-createconsumer@0:g", "xreadgroup", "group", "grp", "bob", "streams", "g", ">");
    FX("*1\r\n*2\r\n$1\r\ng\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n", "",
       "xreadgroup", "group", "grp", "bob", "streams", "g", "0-1");
    FX(":1\r\n", "", "xack", "g", "grp", "1-0");
    FX("+OK\r\n", "t:xgroup-setid@0:g", "xgroup", "setid", "g", "grp", "0");
    FX("*1\r\n$3\r\n1-0\r\n", "t:xgroup-createconsumer@0:g", "xclaim", "g", "grp", "carol", "0", "1-0",
       "FORCE", "JUSTID");
    FX(":1\r\n", "t:xgroup-delconsumer@0:g", "xgroup", "delconsumer", "g", "grp", "carol");
    FX(":1\r\n", "t:xgroup-destroy@0:g ready@0:g", "xgroup", "destroy", "g", "grp");
    FX(":0\r\n", "", "xgroup", "destroy", "g", "grp");
}

static void test_xtrim_xdel_xsetid(void)
{
    fx_reset();
    FX_RUN("xadd", "s", "1-1", "a", "1");
    FX_RUN("xadd", "s", "2-1", "a", "1");
    FX_RUN("xadd", "s", "3-1", "a", "1");
    FX(":0\r\n", "", "xtrim", "s", "MAXLEN", "5");
    FX(":1\r\n", "mod@0:s t:xtrim@0:s", "xtrim", "s", "MINID", "2");
    FX(":0\r\n", "", "xtrim", "nosuch", "MAXLEN", "0");
    FX(":0\r\n", "", "xdel", "s", "9-9");
    FX(":1\r\n", "mod@0:s t:xdel@0:s", "xdel", "s", "2-1", "2-1");
    FX(":0\r\n", "", "xdel", "nosuch", "1-1");
    FX("+OK\r\n", "t:xsetid@0:s", "xsetid", "s", "9-9");
    FX("-ERR The ID specified in XSETID is smaller than the target stream top item\r\n", "", "xsetid", "s", "1-1");
    FX("-ERR no such key\r\n", "", "xsetid", "nosuch", "1-1");
    FX(":1\r\n", "mod@0:s t:xdel@0:s", "xdel", "s", "3-1");
    FX(":1\r\n", "", "exists", "s");
    FX(":0\r\n", "", "xlen", "s");
}

int main(void)
{
    fx_setup();
    test_xadd();
    test_xtrim_xdel_xsetid();
    test_groups();
    fx_teardown();
    return check_done("test_effects_stream");
}
