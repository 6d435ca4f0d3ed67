// The contract check (scripts/contract-check): the OpenAPI document the code serves against the
// last released one, compared by api-smart-diff (pinned in clients/ts/package.json, installed
// by `npm ci` with the SDK's build tools). A breaking change fails the check unless the API's
// major version (`info.version`) went up; docs/versioning.md says what counts as breaking.
//   node scripts/lib/contract-check.mjs [--released FILE] [--current FILE]
// Defaults: the newest openapi/released/<version>.json, and openapi/openapi.json.
// Exit 0: compatible (or a new major version); 1: a breaking change, or a version gone back;
// 2: usage, or a document that cannot be read.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(join(ROOT, "clients/ts/package.json"));

function semver(version) {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(String(version));
  if (!match) throw new Error(`info.version ${JSON.stringify(version)} is not MAJOR.MINOR.PATCH`);
  return match.slice(1).map(Number);
}

function compareVersions(a, b) {
  const [x, y] = [semver(a), semver(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

function newestRelease(dir) {
  const versions = readdirSync(dir)
    .filter((name) => /^\d+\.\d+\.\d+\.json$/.test(name))
    .map((name) => name.slice(0, -".json".length))
    .sort(compareVersions);
  if (versions.length === 0) throw new Error(`no released document (<version>.json) in ${dir}`);
  return join(dir, `${versions.at(-1)}.json`);
}

function load(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

// A webhook's payload is what the platform receives: compared as a response (a field removed
// breaks the receiver, a new one does not), under a path of its own. (api-smart-diff compares
// `paths` in context, request or response, but not a 3.1 document's `webhooks`.)
function withWebhooksAsResponses(doc) {
  const paths = { ...doc.paths };
  for (const [name, item] of Object.entries(doc.webhooks ?? {})) {
    const path = `/webhooks/${name}`;
    if (path in paths) throw new Error(`the path ${path} is also a webhook's name`);
    paths[path] = Object.fromEntries(Object.entries(item).map(([method, op]) => [method, {
      operationId: op.operationId,
      responses: { 200: { description: "the payload", content: op.requestBody?.content ?? {} } },
    }]));
  }
  const { webhooks: _, ...rest } = doc;
  return { ...rest, paths };
}

function where(diff) {
  return diff.path.map((key) => String(key)).join(" > ");
}

function check(releasedFile, currentFile) {
  const apiSmartDiff = require("api-smart-diff");
  const [released, current] = [load(releasedFile), load(currentFile)];
  const [was, now] = [released.info.version, current.info.version];
  if (compareVersions(now, was) < 0) {
    console.error(`contract check: info.version ${now} is older than the released ${was}`);
    return 1;
  }
  const started = performance.now();
  const compared = apiSmartDiff.apiCompare(
    withWebhooksAsResponses(released), withWebhooksAsResponses(current),
  );
  // a change to a component is judged where it is used, in a request or a response: by
  // itself (`components`) its classification cannot know which, so only `paths` count
  const diffs = compared.diffs.filter((diff) => diff.path[0] === "paths");
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const counts = {};
  for (const diff of diffs) counts[diff.type] = (counts[diff.type] ?? 0) + 1;
  const summary = Object.entries(counts).map(([type, n]) => `${n} ${type}`).join(", ");
  const [from, to] = [releasedFile, currentFile].map((file) => relative(process.cwd(), file));
  console.log(`contract check: ${to} (${now}) against ${from} (${was}): `
    + `${summary || "no change to the operations"} (compared in ${seconds} s)`);
  for (const diff of diffs.filter((d) => d.type === "deprecated")) {
    console.log(`  deprecated: ${diff.description ?? where(diff)}`);
  }
  // a change the tool cannot classify (a new `if`/`then` rule in a request, say) may
  // restrict what clients send: it fails as a breaking one does, until a person decides
  const breaking = diffs.filter((d) => d.type === "breaking" || d.type === "unclassified");
  if (breaking.length === 0) return 0;
  const newMajor = semver(now)[0] > semver(was)[0];
  for (const diff of breaking) {
    const kind = diff.type === "unclassified" ? "unclassified" : "breaking";
    console.log(`  ${newMajor ? `${kind} (new major version)` : kind.toUpperCase()}: `
      + `${diff.description ?? diff.action}\n    at ${where(diff)}`);
  }
  if (newMajor) return 0;
  console.error(`contract check: ${breaking.length} breaking change(s) to API ${was}. Make the `
    + "change compatible (a new optional field, a new operation), or release a new major "
    + "version: docs/versioning.md");
  return 1;
}

function main() {
  const { values } = parseArgs({
    options: { released: { type: "string" }, current: { type: "string" } },
  });
  try {
    const released = values.released ?? newestRelease(join(ROOT, "openapi/released"));
    return check(released, values.current ?? join(ROOT, "openapi/openapi.json"));
  } catch (error) {
    console.error(`contract check: ${error.message}`);
    return 2;
  }
}

process.exitCode = main();
