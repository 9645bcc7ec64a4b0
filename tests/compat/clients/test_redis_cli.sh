#!/usr/bin/env bash
# test_redis_cli.sh SERVER [THREADS]: redis-cli against percore, every output
# compared with the same redis-cli invocation against a real redis-server:
# one-shot commands, an interactive session driven through stdin, -n (SELECT),
# -r (repeat), --scan, --pipe (mass insert), and a session on a pseudo-tty
# (where redis-cli asks COMMAND DOCS for its hints) when `script` exists.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
SERVER=${1:?usage: test_redis_cli.sh SERVER [THREADS]}
THREADS=${2:-4}
REDIS=${REDIS_SERVER:-/usr/bin/redis-server}
command -v redis-cli >/dev/null || { echo "SKIP: redis-cli not installed (apt-get install redis-tools)"; exit 77; }
[ -x "$REDIS" ] || { echo "SKIP: $REDIS not installed"; exit 77; }

start_server PC "$SERVER" --threads "$THREADS" || exit 1
start_server REF "$REDIS" || { stop_server PC; exit 1; }
echo "percore on $PC_PORT (threads $THREADS), redis on $REF_PORT"

# same() DESC ARGS...: run `redis-cli ARGS` (stdin from $INPUT if set) against
# both servers, compare stdout+exit status
same() {
  local desc=$1; shift
  local a b sa sb
  a=$(printf '%b' "${INPUT:-}" | timeout 30 redis-cli -p "$REF_PORT" "$@" 2>&1); sa=$?
  b=$(printf '%b' "${INPUT:-}" | timeout 30 redis-cli -p "$PC_PORT" "$@" 2>&1); sb=$?
  if [ "$a" == "$b" ] && [ "$sa" == "$sb" ]; then
    pass
  else
    fail "$desc: redis-cli $*"
    echo "  redis   (exit $sa): $(printf '%s' "$a" | head -c 800 | od -c | head -20)" >&2
    echo "  percore (exit $sb): $(printf '%s' "$b" | head -c 800 | od -c | head -20)" >&2
  fi
}

# one-shot commands (flushed first on both)
same flush flushall
same "set" set a 1
same "get" get a
same "incr" incr a
same "incrby" incrby a 10
same "get missing" get nokey
same "mset spread" mset k1 a k2 b "{user1}.a" c "{user2}.b" d x{y}z e
same "mget spread" mget k1 k2 "{user1}.a" "{user2}.b" x{y}z nokey
same "mget --no-raw" --no-raw mget k1 nokey k2
same "del" del k1 k2 nokey
same "exists" exists "{user1}.a" "{user2}.b"
same "error reply" incr "{user1}.a"
same "wrong arity" get
same "unknown command" nosuchcmd x
same "ttl" ttl "{user1}.a"
same "expire" expire "{user1}.a" 1000
same "persist" persist "{user1}.a"
same "dbsize" dbsize
same "keys sorted" --no-raw keys 'nomatch*'
same "type" type x{y}z
same "-n 3 select" -n 3 set indb3 v
same "-n 3 get" -n 3 get indb3
same "-n 3 dbsize" -n 3 dbsize
same "-n 16 bad db" -n 16 get a
same "-r repeat" -r 5 incr ctr
same "get ctr" get ctr
same "ping" ping
same "echo with spaces" echo "hello world"
same "binary via -x" set fromstdin placeholder
INPUT='line1\nline2' same "-x stdin arg" -x set fromstdin
same "get stdin value" get fromstdin
same "config get" config get maxmemory
same "config get --no-raw" --no-raw config get timeout

# --scan: key order may differ, so compare sorted
for p in '*' 'k*' '{user1}*'; do
  a=$(redis-cli -p "$REF_PORT" --scan --pattern "$p" | sort)
  b=$(redis-cli -p "$PC_PORT" --scan --pattern "$p" | sort)
  if [ "$a" == "$b" ]; then pass; else fail "--scan --pattern '$p': redis [$a] percore [$b]"; fi
done

# interactive session through stdin
INPUT='set s1 hello\nget s1\nappend s1 " world"\nget s1\nincr s1\nmget s1 nokey s1\nset "q k" "q v"\nget "q k"\nselect 2\nget s1\nselect 0\nget s1\ndel s1 "q k"\nquit\n'
same "stdin session" 
INPUT='set a 1\nget a\n' same "stdin session (brief example)"
INPUT='ping\nnosuch\nget\nset x "unbalanced\nping\n' same "stdin session with errors"

# --pipe: mass insertion of raw RESP (redis-cli appends an ECHO and waits for it)
PIPEFILE=$(mktemp)
for i in $(seq 1 5000); do printf '*3\r\n$3\r\nSET\r\n$%d\r\nmass:%d\r\n$1\r\nv\r\n' $((5 + ${#i})) "$i"; done >"$PIPEFILE"
a=$(redis-cli -p "$REF_PORT" --pipe <"$PIPEFILE" 2>&1 | tail -1)
b=$(redis-cli -p "$PC_PORT" --pipe <"$PIPEFILE" 2>&1 | tail -1)
rm -f "$PIPEFILE"
if [ "$a" == "$b" ]; then pass; else fail "--pipe: redis [$a] percore [$b]"; fi
same "dbsize after --pipe" dbsize

# a pseudo-tty session (TERM=dumb: linenoise's basic mode): redis-cli asks
# COMMAND DOCS for its hints and formats replies as "(integer) 6"
if command -v script >/dev/null; then
  tty_run() {
    (sleep 0.5; printf 'set t 5\nincr t\nget t\nmget t nokey\nget\nquit\n') |
      TERM=dumb timeout 30 script -qec "redis-cli -p $1" /dev/null 2>&1 | tr -d '\r' |
      sed -E 's/127\.0\.0\.1:[0-9]+(\[[0-9]+\])?> //g' | grep -E '^(OK|\(|"|[0-9]+\) )'
  }
  a=$(tty_run "$REF_PORT")
  b=$(tty_run "$PC_PORT")
  if [ -n "$a" ] && [ "$a" == "$b" ]; then pass; else fail "tty session: redis [$a] percore [$b]"; fi
fi

stop_server REF
stop_server PC
finish test_redis_cli
