/*
 * test_effects_list: what the list write handlers report (keys modified,
 * keyspace events), the blocking ones included when they pop at once (a
 * blocked client is served by running its handler again, core/block.c),
 * case by case, as Redis 7.0.15 does for the same commands
 * (effects_cases.h says how; tests/compat/effects_oracle.py checks these
 * tables against a real redis-server).
 */
#include "effects_cases.h"

static const struct fx_case list_cases[] = {
    /* pushes: "new" first for a new key, then the key and "lpush"/"rpush" */
    FX(0, "", "lpush l a b", ":2", "n:new:l M:l l:lpush:l"),
    FX(0, "rpush l a", "rpush l b", ":2", "M:l l:rpush:l"),
    FX(0, "set l v", "lpush l a", "-WRONGTYPE", ""),
    FX(0, "", "lpushx l a", ":0", ""),
    FX(0, "", "rpushx l a", ":0", ""),
    FX(0, "rpush l a", "rpushx l b c", ":3", "M:l l:rpush:l"),
    FX(0, "rpush l a", "lpushx l b", ":2", "M:l l:lpush:l"),
    FX(0, "set l v", "lpushx l a", "-WRONGTYPE", ""),
    FX(4, "", "rpush l a", ":1", "n:new:l M:l l:rpush:l"),
    /* LINSERT: only when the pivot was there */
    FX(0, "", "linsert l before p x", ":0", ""),
    FX(0, "rpush l a", "linsert l before p x", ":-1", ""),
    FX(0, "rpush l a p", "linsert l after p x", ":3", "M:l l:linsert:l"),
    FX(0, "rpush l a", "linsert l middle a x", "-ERR syntax error", ""),
    FX(0, "set l v", "linsert l before a x", "-WRONGTYPE", ""),
    /* LSET */
    FX(0, "rpush l a b", "lset l 1 x", "+OK", "M:l l:lset:l"),
    FX(0, "rpush l a", "lset l 5 x", "-ERR index out of range", ""),
    FX(0, "", "lset l 0 x", "-ERR no such key", ""),
    FX(0, "rpush l a", "lset l x x", "-ERR value is not an integer", ""),
    FX(0, "set l v", "lset l 0 x", "-WRONGTYPE", ""),
    /* LREM: "lrem" when it removed, "del" after it when the list emptied */
    FX(0, "", "lrem l 0 a", ":0", ""),
    FX(0, "rpush l a b", "lrem l 0 c", ":0", ""),
    FX(0, "rpush l a b a", "lrem l 0 a", ":2", "M:l l:lrem:l"),
    FX(0, "rpush l a b a", "lrem l -1 a", ":1", "M:l l:lrem:l"),
    FX(0, "rpush l a a", "lrem l 0 a", ":2", "M:l l:lrem:l g:del:l"),
    FX(0, "set l v", "lrem l 0 a", "-WRONGTYPE", ""),
    /* LTRIM: "ltrim" whenever the list exists, even if nothing went */
    FX(0, "", "ltrim l 0 1", "+OK", ""),
    FX(0, "rpush l a b", "ltrim l 0 -1", "+OK", "l:ltrim:l M:l"),
    FX(0, "rpush l a b c", "ltrim l 1 1", "+OK", "l:ltrim:l M:l"),
    FX(0, "rpush l a b", "ltrim l 5 10", "+OK", "l:ltrim:l g:del:l M:l"),
    FX(0, "rpush l a", "ltrim l x 1", "-ERR value is not an integer", ""),
    FX(0, "set l v", "ltrim l 0 1", "-WRONGTYPE", ""),
    /* LPOP RPOP, with and without a count */
    FX(0, "rpush l a b", "lpop l", "$1\r\na", "l:lpop:l M:l"),
    FX(0, "rpush l a", "rpop l", "$1\r\na", "l:rpop:l g:del:l M:l"),
    FX(0, "", "lpop l", "$-1", ""),
    FX(0, "", "lpop l 2", "*-1", ""),
    FX(0, "rpush l a", "lpop l 0", "*0", ""),
    FX(0, "rpush l a b c", "lpop l 2", "*2", "l:lpop:l M:l"),
    FX(0, "rpush l a b", "rpop l 5", "*2", "l:rpop:l g:del:l M:l"),
    FX(0, "rpush l a", "lpop l -1", "-ERR value is out of range, must be positive", ""),
    FX(0, "rpush l a", "lpop l 1 2", "-ERR wrong number of arguments", ""),
    FX(0, "set l v", "rpop l", "-WRONGTYPE", ""),
    /* LMOVE RPOPLPUSH: the push on the destination first, then the pop on the source */
    FX(0, "rpush s a b", "lmove s d left right", "$1\r\na", "n:new:d M:d l:rpush:d l:lpop:s M:s"),
    FX(0, "rpush s a;rpush d b", "lmove s d right left", "$1\r\na", "M:d l:lpush:d l:rpop:s g:del:s M:s"),
    FX(0, "rpush l a", "lmove l l left right", "$1\r\na", "M:l l:rpush:l l:lpop:l M:l"),
    FX(0, "rpush l a b", "lmove l l right left", "$1\r\nb", "M:l l:lpush:l l:rpop:l M:l"),
    FX(0, "rpush s a b", "rpoplpush s d", "$1\r\nb", "n:new:d M:d l:lpush:d l:rpop:s M:s"),
    FX(0, "", "lmove s d left left", "$-1", ""),
    FX(0, "", "rpoplpush s d", "$-1", ""),
    FX(0, "rpush s a;set d v", "lmove s d left left", "-WRONGTYPE", ""),
    FX(0, "set s v", "rpoplpush s d", "-WRONGTYPE", ""),
    FX(0, "rpush s a", "lmove s d up left", "-ERR syntax error", ""),
    /* LMPOP: the key it popped from */
    FX(0, "rpush a x y", "lmpop 2 nokey a left count 5", "*2", "l:lpop:a g:del:a M:a"),
    FX(0, "rpush a x;rpush b y z", "lmpop 2 a b right", "*2", "l:rpop:a g:del:a M:a"),
    FX(0, "rpush b y z", "lmpop 2 a b right", "*2", "l:rpop:b M:b"),
    FX(0, "", "lmpop 2 a b right", "*-1", ""),
    FX(0, "set a v", "lmpop 1 a left", "-WRONGTYPE", ""),
    FX(0, "rpush a x", "lmpop 1 a left count 0", "-ERR count should be greater than 0", ""),
    /* the blocking forms when they can pop at once: as the pops above */
    FX(0, "rpush b x y", "blpop a b 0", "*2", "l:lpop:b M:b"),
    FX(0, "rpush a x", "brpop a 0", "*2", "l:rpop:a g:del:a M:a"),
    FX(0, "", "blpop a 0.01", "*-1", ""),
    FX(0, "set a v", "blpop a 0", "-WRONGTYPE", ""),
    FX(0, "rpush a x", "blpop a -1", "-ERR timeout is negative", ""),
    FX(0, "rpush s a", "blmove s d right left 0", "$1\r\na", "n:new:d M:d l:lpush:d l:rpop:s g:del:s M:s"),
    FX(0, "rpush s a b", "brpoplpush s s 0", "$1\r\nb", "M:s l:lpush:s l:rpop:s M:s"),
    FX(0, "rpush s a;set d v", "blmove s d left left 0", "-WRONGTYPE", ""),
    FX(0, "rpush a x y", "blmpop 0 1 a right count 1", "*2", "l:rpop:a M:a"),
    FX(0, "rpush a x y", "blmpop 0 1 a left count 3", "*2", "l:lpop:a g:del:a M:a"),
    FX(0, "", "blmpop 0.01 1 a left", "*-1", ""),
};

int main(void)
{
    fx_setup();
    fx_check_cases(list_cases, sizeof list_cases / sizeof list_cases[0]);
    fx_teardown();
    return check_done("test_effects_list");
}
