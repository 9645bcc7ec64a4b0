/*
 * test_effects_set: what the set write handlers report (keys modified,
 * keyspace events), case by case, as Redis 7.0.15 does for the same
 * commands (effects_cases.h says how; tests/compat/effects_oracle.py checks
 * these tables against a real redis-server).
 */
#include "effects_cases.h"

static const struct fx_case set_cases[] = {
    /* SADD: only when a member was added */
    FX(0, "", "sadd s a b", ":2", "n:new:s M:s s:sadd:s"),
    FX(0, "sadd s a", "sadd s a b", ":1", "M:s s:sadd:s"),
    FX(0, "sadd s a b", "sadd s b a", ":0", ""),
    FX(0, "set s x", "sadd s a", "-WRONGTYPE", ""),
    FX(5, "", "sadd s 1 2", ":2", "n:new:s M:s s:sadd:s"),
    /* SREM: only when a member went; "del" after it when the set emptied */
    FX(0, "", "srem s a", ":0", ""),
    FX(0, "sadd s a b", "srem s c", ":0", ""),
    FX(0, "sadd s a b", "srem s a c", ":1", "M:s s:srem:s"),
    FX(0, "sadd s a b", "srem s a b c", ":2", "M:s s:srem:s g:del:s"),
    FX(0, "set s x", "srem s a", "-WRONGTYPE", ""),
    /* SPOP: "spop", "del" when emptied, then the key modified */
    FX(0, "", "spop s", "$-1", ""),
    FX(0, "sadd s a b", "spop s", "$1", "s:spop:s M:s"),
    FX(0, "sadd s a", "spop s", "$1\r\na", "s:spop:s g:del:s M:s"),
    FX(0, "sadd s 7", "spop s", "$1\r\n7", "s:spop:s g:del:s M:s"),
    FX(0, "set s x", "spop s", "-WRONGTYPE", ""),
    FX(0, "sadd s a", "spop s 1 2", "-ERR syntax error", ""),
    /* SPOP with a count: each of Redis's three ways */
    FX(0, "", "spop s 2", "*0", ""),
    FX(0, "sadd s a", "spop s 0", "*0", ""),
    FX(0, "sadd s a", "spop s -1", "-ERR value is out of range, must be positive", ""),
    FX(0, "set s x", "spop s 2", "-WRONGTYPE", ""),
    FX(0, "sadd s a b", "spop s 5", "*2", "s:spop:s g:del:s M:s"),
    FX(0, "sadd s a b c d e f g h i j", "spop s 2", "*2", "s:spop:s M:s"),
    FX(0, "sadd s a b c d e f g h i j", "spop s 9", "*9", "s:spop:s M:s"),
    FX(0, "sadd s 1 2 3 4 5 6 7 8 9 10", "spop s 9", "*9", "s:spop:s M:s"),
    /* SMOVE: "srem" on the source (and "del"), "new" for a new destination, "sadd" when it was added */
    FX(0, "", "smove a b x", ":0", ""),
    FX(0, "sadd a y", "smove a b x", ":0", ""),
    FX(0, "sadd a x y", "smove a b x", ":1", "s:srem:a n:new:b M:a M:b s:sadd:b"),
    FX(0, "sadd a x;sadd b y", "smove a b x", ":1", "s:srem:a g:del:a M:a M:b s:sadd:b"),
    FX(0, "sadd a x y;sadd b x", "smove a b x", ":1", "s:srem:a M:a"),
    FX(0, "sadd a x", "smove a b x", ":1", "s:srem:a g:del:a n:new:b M:a M:b s:sadd:b"),
    FX(0, "sadd a x", "smove a a x", ":1", ""),
    FX(0, "sadd a x", "smove a a y", ":0", ""),
    FX(0, "sadd a x;set b v", "smove a b x", "-WRONGTYPE", ""),
    FX(0, "set a v", "smove a b x", "-WRONGTYPE", ""),
    /* the STORE forms: the destination alone; "del" for an empty result when it existed */
    FX(0, "sadd a x y;sadd b y", "sinterstore d a b", ":1", "n:new:d M:d s:sinterstore:d"),
    FX(0, "sadd a x;set d v", "sinterstore d a a", ":1", "M:d s:sinterstore:d"),
    FX(0, "sadd a x;sadd b y", "sinterstore d a b", ":0", ""),
    FX(0, "sadd a x;sadd b y;sadd d z", "sinterstore d a b", ":0", "M:d g:del:d"),
    FX(0, "sadd a x;sadd d z", "sinterstore d a nokey", ":0", "M:d g:del:d"),
    FX(0, "sadd a x", "sinterstore d a nokey", ":0", ""),
    FX(0, "sadd a x;set b v;sadd d z", "sinterstore d a b", "-WRONGTYPE", ""),
    FX(0, "sadd a x y;sadd b y", "sinterstore a a b", ":1", "M:a s:sinterstore:a"),
    FX(0, "sadd a x;sadd b y", "sunionstore d a b", ":2", "n:new:d M:d s:sunionstore:d"),
    FX(0, "sadd a x;sadd d z", "sunionstore d a", ":1", "M:d s:sunionstore:d"),
    FX(0, "sadd d z", "sunionstore d n1 n2", ":0", "M:d g:del:d"),
    FX(0, "", "sunionstore d n1 n2", ":0", ""),
    FX(0, "set a v", "sunionstore d a", "-WRONGTYPE", ""),
    FX(0, "sadd a x y;sadd b y;sadd d z", "sdiffstore d a b", ":1", "M:d s:sdiffstore:d"),
    FX(0, "sadd a x y;sadd b y", "sdiffstore d a b", ":1", "n:new:d M:d s:sdiffstore:d"),
    FX(0, "sadd a x;sadd b x", "sdiffstore d a b", ":0", ""),
    FX(0, "sadd a x;sadd b x;sadd d z", "sdiffstore d a b", ":0", "M:d g:del:d"),
    FX(0, "sadd a x y;sadd b y", "sdiffstore a a b", ":1", "M:a s:sdiffstore:a"),
    FX(2, "sadd a x", "sunionstore d a", ":1", "n:new:d M:d s:sunionstore:d"),
};

int main(void)
{
    fx_setup();
    fx_check_cases(set_cases, sizeof set_cases / sizeof set_cases[0]);
    fx_teardown();
    return check_done("test_effects_set");
}
