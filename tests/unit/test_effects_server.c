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
    fx_run("set a 1");
    fx_run("set b 1");
    fx_db = 1;
    fx_run("set c 1");
    fx_db = 0;
    FX("flushdb x", "-ERR syntax error\r\n", "");
    FX("flushall sync extra", "-ERR syntax error\r\n", "");
    FX("swapdb 0 1", "+OK\r\n", "R 0 1 keys=2");
    CHECK_EQ_LL(store_size(fx_store, 0), 1);
    CHECK_EQ_LL(store_size(fx_store, 1), 2);
    FX("swapdb 0 0", "+OK\r\n", "");
    FX("swapdb 0 99", "-ERR DB index is out of range\r\n", "");
    FX("swapdb a 1", "-ERR invalid first DB index\r\n", "");
    FX("swapdb 0 -1", "-ERR DB index is out of range\r\n", "");
    fx_db = 1;
    FX("flushdb", "+OK\r\n", "R 1 -1 keys=2");
    CHECK_EQ_LL(store_size(fx_store, 1), 0);
    fx_db = 0;
    FX("flushall", "+OK\r\n", "R -1 -1 keys=1");
    CHECK_EQ_LL(store_size(fx_store, 0), 0);
    FX("flushall async", "+OK\r\n", "R -1 -1 keys=0");
    FX("flushdb sync", "+OK\r\n", "R 0 -1 keys=0");
}

int main(void)
{
    fx_setup();
    test_flush_swap();
    fx_teardown();
    return check_done("test_effects_server");
}
