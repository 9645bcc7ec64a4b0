#!/usr/bin/python3
"""test_cluster.py PORT THREADS: redis-py's RedisCluster (Debian python3-redis),
unchanged, against a running server with --cluster-ports yes on PORT (started
by test_cluster.sh).  Seeded with the main port it must discover one master
per shard on PORT+1..PORT+THREADS, SET/GET keys that live on every shard,
MGET {tag}ged keys (one slot, so one node), and see each key on exactly the
node that owns its slot."""
import os
import sys

from redis.cluster import RedisCluster
from redis.exceptions import ResponseError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expect  # noqa: E402
from expect import check, eq  # noqa: E402


def main():
    port, threads = int(sys.argv[1]), int(sys.argv[2])
    rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
    nodes = sorted(n.port for n in rc.get_primaries())
    eq(nodes, list(range(port + 1, port + 1 + threads)), "the masters discovered from the main port")

    flushed = rc.flushall()  # {node: True} per master (a bool in other redis-py versions)
    check(flushed is True or (len(flushed) == threads and all(flushed.values())), "FLUSHALL: %r" % (flushed,))
    eq(rc.dbsize(target_nodes=RedisCluster.PRIMARIES), 0, "DBSIZE after FLUSHALL")
    keys = ["py:%d" % i for i in range(64)]
    for k in keys:
        eq(rc.set(k, "v-" + k), True, "SET " + k)
    for k in keys:
        eq(rc.get(k), "v-" + k, "GET " + k)
    owners = {rc.get_node_from_key(k).port for k in keys}
    eq(len(owners), threads, "shards the 64 keys live on")

    # each key is on the node that owns its slot; the others redirect there
    for k in keys[:16]:
        owner = rc.get_node_from_key(k)
        for node in rc.get_primaries():
            try:
                got = node.redis_connection.exists(k)
            except ResponseError as e:
                got = str(e)
            if node.port == owner.port:
                eq(got, 1, "EXISTS %s on its owner %d" % (k, node.port))
            else:
                eq(got, "%d 127.0.0.1:%d" % (rc.keyslot(k), owner.port), "EXISTS %s on %d" % (k, node.port))
    sizes = rc.dbsize(target_nodes=RedisCluster.PRIMARIES)
    eq(sizes, len(keys), "DBSIZE summed over the masters")

    tagged = {"{user7}.name": "ann", "{user7}.mail": "a@x", "{user7}.age": "7"}
    eq(rc.mset(tagged), True, "MSET of {tag}ged keys")
    eq(rc.mget(list(tagged)), list(tagged.values()), "MGET of {tag}ged keys")
    eq(rc.delete(*tagged), 3, "DEL of {tag}ged keys")
    eq(rc.mget_nonatomic(keys[:8]), ["v-" + k for k in keys[:8]], "MGET over several slots (split by the client)")
    eq(rc.keyslot("foo"), 12182, "keyslot")
    eq(rc.cluster_keyslot("foo"), 12182, "CLUSTER KEYSLOT")
    rc.close()

    return expect.done("test_cluster.py")


if __name__ == "__main__":
    sys.exit(main())
