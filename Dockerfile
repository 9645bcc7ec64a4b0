# percore: build on Debian 12, run on a slim Debian 12 with only the runtime libraries.
FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
      libevent-dev liburcu-dev libnuma-dev libmimalloc-dev libhiredis-dev liblzf-dev \
      liblua5.1-0-dev lua-cjson-dev lua-bitop-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY include include
COPY server server
COPY client client
COPY tests tests
COPY bench bench
COPY conf conf
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build -j"$(nproc)" --target percore-server

FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libevent-2.1-7 libevent-core-2.1-7 \
      libevent-pthreads-2.1-7 libevent-extra-2.1-7 liburcu8 libnuma1 libmimalloc2.0 liblzf1 liblua5.1-0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/percore-server /usr/local/bin/percore-server
COPY conf/percore.conf /etc/percore/percore.conf
EXPOSE 6379
# listen on every interface inside the container; threads default to the cpus it may use (one shard on 2 or fewer)
CMD ["percore-server", "/etc/percore/percore.conf", "--bind", "0.0.0.0"]
