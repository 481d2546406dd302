# evesim as a container image, for sharded runs on Kubernetes (deploy/kubernetes/README.md).
#   docker build -t REGISTRY/evesim:0.1.0 .
# Two stages: the first compiles TypeScript with the dev dependencies, the second keeps only what
# `evesim` needs at run time (production node_modules, dist/, proto/, scenarios/).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the `prepare` script would compile before the sources are copied in;
# no production dependency has an install script.
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY workers ./workers
COPY proto ./proto
COPY scenarios ./scenarios
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# jemalloc, preloaded for every process of the image: with glibc's malloc a large fleet keeps 3-5 KiB
# more native memory per device (README "Known limits"). Linked to one path whatever the
# architecture; with LD_PRELOAD set, `evesim run` does not start itself again (src/cli/allocator-plan.ts).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(find /usr/lib -name libjemalloc.so.2 | head -n 1)" /usr/local/lib/libjemalloc.so.2 \
 && test -e /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
WORKDIR /app
# package.json stays: its "type": "module" makes Node load dist/ as ES modules.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
# proto/ is read at run time (found by walking up from dist/src/protocol).
COPY --from=build /app/proto ./proto
COPY --from=build /app/scenarios ./scenarios
# `evesim` on PATH, for a shell in the container (the merge Job globs shard files through sh).
RUN ln -s /app/bin/evesim.js /usr/local/bin/evesim
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can check it. /work is where
# the default --state-dir (.evesim-state) lands when nothing else is mounted.
RUN mkdir /work && chown 1000:1000 /work
WORKDIR /work
# --metrics-host's default in the image: a Prometheus in another container or pod can scrape it.
ENV EVESIM_METRICS_HOST=0.0.0.0
USER 1000:1000
ENTRYPOINT ["node", "/app/bin/evesim.js"]
CMD ["--help"]
