/*
 * test_effects_server: FLUSHDB, FLUSHALL and SWAPDB report no key and no
 * keyspace event (Redis 7.0.15 publishes none for them: redis-server
 * --notify-keyspace-events KEAn, PSUBSCRIBE '__keyevent@*'), only the
 * databases they are about to replace, once, BEFORE they change them (the
 * hook sees the keys still there); nothing at all when they refuse their
 * arguments or (SWAPDB a a) change nothing.  Replies are Redis's.
 */
#include "effects_check.h"

static void test_flush_swap(void)
{
    FX_RUN("set", "a", "1");
    FX_RUN("set", "b", "1");
    fx_db = 1;
    FX_RUN("set", "c", "1");
    fx_db = 0;
    FX("-ERR syntax error\r\n", "", "flushdb", "x");
    FX("-ERR syntax error\r\n", "", "flushall", "sync", "extra");
    FX("+OK\r\n", "replace:0,1(2)", "swapdb", "0", "1");
    CHECK_EQ_LL(store_size(fx_store, 0), 1);
    CHECK_EQ_LL(store_size(fx_store, 1), 2);
    FX("+OK\r\n", "", "swapdb", "0", "0");
    FX("-ERR DB index is out of range\r\n", "", "swapdb", "0", "99");
    FX("-ERR invalid first DB index\r\n", "", "swapdb", "a", "1");
    FX("-ERR DB index is out of range\r\n", "", "swapdb", "0", "-1");
    fx_db = 1;
    FX("+OK\r\n", "replace:1,-1(2)", "flushdb");
    CHECK_EQ_LL(store_size(fx_store, 1), 0);
    fx_db = 0;
    FX("+OK\r\n", "replace:-1,-1(1)", "flushall");
    CHECK_EQ_LL(store_size(fx_store, 0), 0);
    FX("+OK\r\n", "replace:-1,-1(0)", "flushall", "async");
    FX("+OK\r\n", "replace:0,-1(0)", "flushdb", "sync");
}

int main(void)
{
    fx_setup();
    test_flush_swap();
    fx_teardown();
    return check_done("test_effects_server");
}
