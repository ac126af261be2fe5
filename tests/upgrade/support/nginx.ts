// nginx in front of the services as docs/deployment.md ("Reverse proxy (nginx)") configures it: an upstream per
// service listing its instances with `keepalive 32`, and the documented proxy settings; one port per service on the
// loopback address instead of a TLS host name each. It runs in the foreground as the test's own process, with its
// prefix, configuration, logs and pid file in a folder of its own. Taking an instance out of an upstream (or
// putting it back) rewrites the configuration and reloads nginx (SIGHUP), as an operator does: new workers take the
// new configuration, and the old ones finish the requests they hold and exit.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendantsOf, startLogged, type LoggedProcess } from "@tessera/test-support/drill";

export interface Upstream {
  /** The upstream's name in the configuration, e.g. `tessera_signon`. */
  name: string;
  /** The port nginx listens on for this service. */
  port: number;
  /** Each instance's port, and whether it is in the upstream now. */
  instances: Map<number, boolean>;
  /** `client_max_body_size` of the service's server block. */
  maxBodySize: string;
}

export interface Nginx {
  /** `http://127.0.0.1:<port>` of an upstream's server block. */
  url(upstream: string): string;
  /** Takes an instance out of its upstream (`false`) or puts it back (`true`), and reloads nginx; resolves once only workers of the new configuration remain. */
  setInstance(upstream: string, port: number, on: boolean): Promise<void>;
  /** The access log's lines (the documented `tessera` format, with the upstream address added). */
  accessLogLines(): string[];
  stop(): Promise<void>;
}

const binary = "/usr/sbin/nginx";

function configuration(prefix: string, upstreams: readonly Upstream[]): string {
  const blocks = upstreams.map((upstream) => {
    const servers = [...upstream.instances].filter(([, on]) => on).map(([port]) => `        server 127.0.0.1:${port};`);
    return `    upstream ${upstream.name} {
${servers.join("\n")}
        keepalive 32;
    }
    server {
        listen 127.0.0.1:${upstream.port};
        client_max_body_size ${upstream.maxBodySize};
        access_log ${join(prefix, "access.log")} tessera;
        location / {
            proxy_pass http://${upstream.name};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Request-Id $request_id;
        }
    }`;
  });
  return `daemon off;
master_process on;
worker_processes 1;
pid ${join(prefix, "nginx.pid")};
error_log ${join(prefix, "error.log")} notice;
events {
    worker_connections 1024;
}
http {
    log_format tessera '$remote_addr [$time_local] "$request_method $uri" $status $body_bytes_sent $request_time $upstream_addr';
    client_body_temp_path ${join(prefix, "client_body")};
    proxy_temp_path ${join(prefix, "proxy")};
    fastcgi_temp_path ${join(prefix, "fastcgi")};
    uwsgi_temp_path ${join(prefix, "uwsgi")};
    scgi_temp_path ${join(prefix, "scgi")};
    # The test's clients open a connection per request: an idle keep-alive connection that a reload closes just as
    # a client sends on it is reset, which a browser retries and fetch does not. The upstream side keeps its
    # connections alive, as documented.
    keepalive_timeout 0;
${blocks.join("\n")}
}
`;
}

/** The workers of nginx's master `pid`: its child processes. */
function workersOf(pid: number): number[] {
  return descendantsOf(pid);
}

/**
 * Starts nginx with an upstream per entry of `services`: the port its server block listens on, and its instances' ports.
 */
export async function startNginx(services: Record<string, { port: number; instances: number[]; maxBodySize: string }>): Promise<Nginx> {
  const prefix = mkdtempSync(join(tmpdir(), "tessera-nginx-"));
  // When the test runs as root, nginx's workers run as an unprivileged user and need to reach the temp folders.
  chmodSync(prefix, 0o755);
  const upstreams = new Map<string, Upstream>();
  for (const [name, { port, instances, maxBodySize }] of Object.entries(services)) {
    upstreams.set(name, { name: `tessera_${name}`, port, instances: new Map(instances.map((instance) => [instance, true])), maxBodySize });
  }
  const confFile = join(prefix, "nginx.conf");
  const write = () => writeFileSync(confFile, configuration(prefix, [...upstreams.values()]));
  write();
  const nginx: LoggedProcess = startLogged("nginx", binary, ["-p", prefix, "-c", confFile, "-e", join(prefix, "error.log")], {
    logFile: join(prefix, "nginx.out"),
    cwd: prefix,
    env: process.env,
  });
  const waitForWorkers = async (excluding: readonly number[], timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (nginx.hasExited()) throw new Error(`nginx exited (${await nginx.exited}):\n${readFileSync(join(prefix, "error.log"), "utf8").slice(-3000)}`);
      const workers = workersOf(nginx.pid);
      if (workers.length > 0 && workers.every((pid) => !excluding.includes(pid))) return;
      if (Date.now() > deadline) throw new Error(`nginx's workers of the previous configuration still run after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const answering = async () => {
    const deadline = Date.now() + 10_000;
    const port = [...upstreams.values()][0]?.port;
    for (;;) {
      try {
        await (await fetch(`http://127.0.0.1:${port}/healthcheck/live`)).arrayBuffer();
        return;
      } catch {
        if (Date.now() > deadline || nginx.hasExited()) throw new Error(`nginx does not answer:\n${readFileSync(join(prefix, "error.log"), "utf8").slice(-3000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  await waitForWorkers([], 10_000);
  await answering();
  return {
    url(name) {
      const upstream = upstreams.get(name);
      if (upstream === undefined) throw new Error(`no upstream ${name}`);
      return `http://127.0.0.1:${upstream.port}`;
    },
    async setInstance(name, port, on) {
      const upstream = upstreams.get(name);
      if (upstream?.instances.has(port) !== true) throw new Error(`no instance ${port} in upstream ${name}`);
      upstream.instances.set(port, on);
      write();
      const before = workersOf(nginx.pid);
      process.kill(nginx.pid, "SIGHUP");
      // The old workers exit once the requests they hold are answered: after that, nothing reaches an instance taken out.
      await waitForWorkers(before, 60_000);
    },
    accessLogLines() {
      try {
        return readFileSync(join(prefix, "access.log"), "utf8").trimEnd().split("\n");
      } catch {
        return [];
      }
    },
    async stop() {
      if (!nginx.hasExited()) process.kill(nginx.pid, "SIGQUIT");
      const timer = setTimeout(() => {
        if (!nginx.hasExited()) process.kill(nginx.pid, "SIGKILL");
      }, 10_000);
      await nginx.exited;
      clearTimeout(timer);
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
