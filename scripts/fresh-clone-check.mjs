// Proves that a fresh clone works as the README says: `npm ci`, then `npm start`.
//
//   node scripts/fresh-clone-check.mjs
//
// 1. clones this repository's HEAD into a temporary directory (links ../shared beside it
//    when there is one) and runs `npm ci --prefer-offline --no-audit --no-fund` there;
// 2. runs `npm start` in the clone (its ./data starts empty) and waits until all three
//    services are ready; reads the superadmin password and the API token it prints;
// 3. checks real requests: Sign-on's metadata; the superadmin signs in through the
//    /sign-in form (CSRF token and cookies), sets up the 2-step verification Sign-on asks
//    superadmins for (an authenticator app's code computed here), and then signs in to the
//    example application through the OAuth flow; Completion answers the printed token with the demo course's data;
//    the example application's /healthz;
// 4. sends SIGINT as Ctrl-C does (to the whole process group) and expects exit code 0;
// 5. starts again: the data is reused (no new password printed, the old one, with a
//    2-step code, and the token still work), and stops cleanly again.
// Exits 0 when all of it held; otherwise prints what failed and exits 1. Ports 3000 to
// 3002 must be free. The temporary directory is removed at the end.
import { execFileSync, spawn } from "node:child_process";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, symlink } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, URLSearchParams } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const signon = "http://localhost:3000";
const completion = "http://127.0.0.1:3001/api/completion/v1";
const editorial = "http://127.0.0.1:3002";
const demoCourseKey = "course-v1:TesseraX+DL101+2026";
const began = Date.now();

function step(message) {
  console.log(`fresh-clone-check [${((Date.now() - began) / 1000).toFixed(1)} s] ${message}`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function portInUse(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** A cookie jar per origin, enough for the sign-in flows here. */
class Browser {
  jars = new Map();

  async fetch(url, init = {}) {
    const { origin } = new URL(url);
    const jar = this.jars.get(origin) ?? new Map();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, { ...init, redirect: "manual", headers: { ...init.headers, ...(cookie ? { cookie } : {}) } });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(";");
      const index = pair.indexOf("=");
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === "" || /max-age=0/i.test(header)) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }

  /** Follows redirects from `response`, across origins, and returns the last response. */
  async follow(response, from, limit = 10) {
    let current = response;
    let url = from;
    for (let i = 0; i < limit && current.status >= 300 && current.status < 400; i++) {
      url = new URL(current.headers.get("location"), url).href;
      current = await this.fetch(url);
    }
    return { response: current, url };
  }

  cookie(origin, name) {
    return this.jars.get(origin)?.get(name);
  }
}

function decodeEntities(value) {
  return value.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Signs in at Sign-on's form (reached from `url`), then follows the redirects; returns the last response and its URL. */
async function signIn(browser, url, email, password) {
  const page = await browser.follow(await browser.fetch(url), url);
  check(page.response.status === 200, `the sign-in page answered ${page.response.status}`);
  const html = await page.response.text();
  const csrf = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1];
  check(csrf !== undefined && returnTo !== undefined, "the sign-in page has no form with a CSRF token");
  const posted = await browser.fetch(`${signon}/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: decodeEntities(csrf), return_to: decodeEntities(returnTo), email, password }).toString(),
  });
  check(posted.status === 303, `POST /sign-in answered ${posted.status}, not 303: ${await posted.text()}`);
  return browser.follow(posted, `${signon}/sign-in`);
}

/** The code an authenticator app shows for a base32 secret in 30-second step `step` (RFC 6238: SHA-1, 6 digits). */
function totp(base32, step) {
  const bits = [...base32].map((character) => "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".indexOf(character).toString(2).padStart(5, "0")).join("");
  const key = Buffer.from(bits.match(/.{8}/g).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

/** A 30-second step after `last` (a code counts once), waiting for it when needed. */
async function freshStep(last) {
  while (Math.floor(Date.now() / 30_000) <= last) await new Promise((resolve) => setTimeout(resolve, 1000));
  return Math.floor(Date.now() / 30_000);
}

/**
 * The 2-step part of the superadmin's sign-in: at the first start Sign-on sends
 * them to set it up (superadmins must use it), later it asks for the code.
 * `twoStep` keeps the secret and the last step used across starts.
 */
async function completeTwoStep(browser, signedIn, twoStep) {
  const path = new URL(signedIn.url).pathname;
  const html = await signedIn.response.text();
  const csrf = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1] ?? "/";
  check(signedIn.response.status === 200 && csrf !== undefined, `after the password, ${signedIn.url} answered ${signedIn.response.status} without a form`);
  if (twoStep.secret === null) {
    check(path === "/account/two-step", `the superadmin was not sent to set up 2-step verification after the password, but to ${signedIn.url}`);
    twoStep.secret = /<p class="secret" id="secret">([A-Z2-7 ]+)<\/p>/.exec(html)?.[1]?.replace(/ /g, "");
    check(twoStep.secret !== undefined, "the 2-step set-up page shows no key");
  } else {
    check(path === "/sign-in/two-step", `the superadmin was not asked for a 2-step code after the password, but sent to ${signedIn.url}`);
  }
  twoStep.lastStep = await freshStep(twoStep.lastStep);
  const posted = await browser.fetch(`${signon}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: decodeEntities(csrf), return_to: decodeEntities(returnTo), code: totp(twoStep.secret, twoStep.lastStep) }).toString(),
  });
  check(posted.status === 303, `POST ${path} answered ${posted.status}, not 303: ${await posted.text()}`);
}

/** Runs `npm start` in `cwd` in its own process group; resolves with its output once it is ready. */
function npmStart(cwd) {
  const child = spawn("npm", ["start"], { cwd, env: { ...process.env, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start was not ready after 120 s:\n${output.slice(-4000)}`)), 120_000);
    const onData = (chunk) => {
      output += chunk;
      if (output.includes("Press Ctrl-C to stop.")) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`npm start ended (${signal ?? `exit code ${code}`}) before it was ready:\n${output.slice(-4000)}`));
    });
  });
  return {
    ready,
    output: () => output,
    /** Ctrl-C: SIGINT to the process group, as a terminal sends it; resolves with the exit. */
    interrupt: async () => {
      process.kill(-child.pid, "SIGINT");
      const timer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), 30_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
    kill: () => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

function printed(output, label) {
  const value = new RegExp(`^\\s*${label}\\s+(\\S+)\\s*$`, "m").exec(output)?.[1];
  check(value !== undefined, `npm start did not print "${label}":\n${output.slice(-4000)}`);
  return value;
}

async function checkServices(password, token, twoStep) {
  const metadata = await fetch(`${signon}/.well-known/oauth-authorization-server`);
  check(metadata.status === 200, `Sign-on metadata answered ${metadata.status}`);
  const { issuer, token_endpoint: tokenEndpoint } = await metadata.json();
  check(issuer === signon && typeof tokenEndpoint === "string", `unexpected Sign-on metadata: issuer ${issuer}`);

  const browser = new Browser();
  await completeTwoStep(browser, await signIn(browser, `${signon}/sign-in`, "admin@example.com", password), twoStep);
  check(/^[0-9a-f]{64}$/.test(browser.cookie(signon, "signon_session") ?? ""), "signing in set no Sign-on session cookie");

  // The example application's sign-in: authorize (already signed in), callback, its own session.
  const app = await browser.follow(await browser.fetch(`${editorial}/auth/gds`), `${editorial}/auth/gds`);
  check(app.response.status === 200 && app.url.startsWith(editorial), `signing in to the example application ended at ${app.url} (${app.response.status})`);
  const home = await app.response.text();
  check(home.includes("admin@example.com"), "the example application's page does not show the signed-in superadmin");

  const list = await fetch(`${completion}/course/?username=bruno`, { headers: { authorization: `Bearer ${token}` } });
  check(list.status === 200, `Completion course list answered ${list.status}`);
  const { results } = await list.json();
  const course = results.find((item) => item.course_key === demoCourseKey);
  check(course?.completion?.ratio === 1, `Completion does not show bruno's finished demo course: ${JSON.stringify(results)}`);
  const refused = await fetch(`${completion}/course/`, { headers: { authorization: "Bearer not-a-token" } });
  check(refused.status === 401, `Completion answered ${refused.status} to a wrong token`);

  const health = await fetch(`${editorial}/healthz`);
  check(health.status === 200 && (await health.json()).status === "ok", `the example application's /healthz answered ${health.status}`);
}

async function main() {
  for (const port of [3000, 3001, 3002]) {
    check(!(await portInUse(port)), `port ${port} is in use; stop what runs there first`);
  }
  const parent = await mkdtemp(join(tmpdir(), "tessera-fresh-clone-"));
  // Run by root (CI, containers), the embedded PostgreSQL server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
  const clone = join(parent, "tessera");
  let running;
  try {
    step(`cloning HEAD into ${clone}`);
    execFileSync("git", ["clone", "--quiet", "--no-hardlinks", root, clone], { stdio: "inherit" });
    const shared = join(dirname(root.replace(/\/$/, "")), "shared");
    if (existsSync(shared)) await symlink(shared, join(parent, "shared"));

    step("npm ci");
    execFileSync("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: clone, stdio: "inherit" });

    step("npm start (first start)");
    running = npmStart(clone);
    const first = await running.ready;
    check(first.includes("First start:"), "the first start did not report the first-start set-up");
    const password = printed(first, "Password");
    const token = printed(first, "API token");
    step("ready; checking requests");
    const twoStep = { secret: null, lastStep: 0 };
    await checkServices(password, token, twoStep);
    step("Ctrl-C");
    const stopped = await running.interrupt();
    check(stopped.code === 0, `npm start exited with ${stopped.signal ?? `code ${stopped.code}`} after Ctrl-C:\n${running.output().slice(-4000)}`);
    running = undefined;

    step("npm start (second start)");
    running = npmStart(clone);
    const second = await running.ready;
    check(second.includes("Reusing the data") && !second.includes("First start:") && !second.includes(password), "the second start did not reuse the data");
    await checkServices(password, token, twoStep);
    const again = await running.interrupt();
    check(again.code === 0, `the second npm start exited with ${again.signal ?? `code ${again.code}`} after Ctrl-C`);
    running = undefined;
    step("passed");
  } finally {
    running?.kill();
    await rm(parent, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  console.error(`fresh-clone-check: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
