// The served engine driven by the JavaScript Azure Tables SDK
// (@azure/data-tables, pinned in tools/package.json). tablebench's Go tests
// start a served engine and run this file with node's test runner:
//
//   TABLES_ENDPOINT=http://127.0.0.1:PORT/devstoreaccount1 \
//   TABLES_ACCOUNT=devstoreaccount1 TABLES_KEY=... node --test conformance.mjs
//
// Every case states what the Table service answers; none depends on another.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  TableTransaction,
  generateAccountSas,
  generateTableSas,
  odata,
} from "@azure/data-tables";

const endpoint = process.env.TABLES_ENDPOINT;
const account = process.env.TABLES_ACCOUNT;
const key = process.env.TABLES_KEY;
if (!endpoint || !account || !key) {
  throw new Error("set TABLES_ENDPOINT, TABLES_ACCOUNT and TABLES_KEY to a Table endpoint (tablebench serve prints them)");
}
const cred = new AzureNamedKeyCredential(account, key);
const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const service = new TableServiceClient(endpoint, cred, opts);

let n = 0;
async function freshTable(prefix = "js") {
  const name = `${prefix}${process.pid}x${n++}`;
  await service.createTable(name);
  return new TableClient(endpoint, name, cred, opts);
}

// rejects returns the error a call fails with, or fails the test.
async function rejects(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("the call succeeded; the service refuses it");
}

test("tables: create, list with a filter and pages, delete", async () => {
  const names = [];
  for (let i = 0; i < 5; i++) {
    const name = `jslist${process.pid}x${i}`;
    names.push(name);
    await service.createTable(name);
  }
  const listed = [];
  for await (const t of service.listTables({ queryOptions: { filter: odata`TableName ge ${names[1]} and TableName le ${names[3]}` } })) {
    listed.push(t.name);
  }
  assert.deepEqual(listed, names.slice(1, 4));
  const pages = [];
  for await (const page of service.listTables({ queryOptions: { filter: odata`TableName ge ${names[0]} and TableName le ${names[4]}` } }).byPage({ maxPageSize: 2 })) {
    pages.push(page.map((t) => t.name));
  }
  assert.deepEqual(pages, [names.slice(0, 2), names.slice(2, 4), names.slice(4)]);
  await service.deleteTable(names[0]);
  const after = [];
  for await (const t of service.listTables({ queryOptions: { filter: odata`TableName eq ${names[0]}` } })) after.push(t.name);
  assert.deepEqual(after, []);
});

test("entities: create, get, update, delete with ETags", async () => {
  const c = await freshTable();
  const created = await c.createEntity({ partitionKey: "p", rowKey: "r", name: "a", n: 1 });
  assert.match(created.etag, /^W\/"datetime'.+Z'"$/);
  const dup = await rejects(c.createEntity({ partitionKey: "p", rowKey: "r" }));
  assert.equal(dup.statusCode, 409);
  const got = await c.getEntity("p", "r");
  assert.equal(got.name, "a");
  assert.equal(got.etag, created.etag);
  const stale = await rejects(c.updateEntity({ partitionKey: "p", rowKey: "r", name: "b" }, "Merge", { etag: 'W/"datetime\'2001-01-01T00%3A00%3A00.0000000Z\'"' }));
  assert.equal(stale.statusCode, 412);
  const wrong = await rejects(c.updateEntity({ partitionKey: "p", rowKey: "r", name: "b" }, "Merge", { etag: 'W/"wrong"' }));
  assert.equal(wrong.statusCode, 412);
  await c.updateEntity({ partitionKey: "p", rowKey: "r", name: "b" }, "Merge", { etag: got.etag });
  const merged = await c.getEntity("p", "r");
  assert.equal(merged.name, "b");
  assert.equal(merged.n, 1);
  await c.updateEntity({ partitionKey: "p", rowKey: "r", other: true }, "Replace");
  const replaced = await c.getEntity("p", "r");
  assert.equal(replaced.name, undefined);
  assert.equal(replaced.other, true);
  const missing = await rejects(c.updateEntity({ partitionKey: "p", rowKey: "none", x: 1 }, "Merge"));
  assert.equal(missing.statusCode, 404);
  await c.deleteEntity("p", "r");
  const gone = await rejects(c.getEntity("p", "r"));
  assert.equal(gone.statusCode, 404);
  assert.equal(gone.details.odataError.code, "ResourceNotFound");
});

test("upserts merge and replace", async () => {
  const c = await freshTable();
  await c.upsertEntity({ partitionKey: "p", rowKey: "u", a: 1 }, "Merge");
  await c.upsertEntity({ partitionKey: "p", rowKey: "u", b: 2 }, "Merge");
  let e = await c.getEntity("p", "u");
  assert.deepEqual([e.a, e.b], [1, 2]);
  await c.upsertEntity({ partitionKey: "p", rowKey: "u", c: 3 }, "Replace");
  e = await c.getEntity("p", "u");
  assert.deepEqual([e.a, e.b, e.c], [undefined, undefined, 3]);
});

test("every EDM type round-trips", async () => {
  const c = await freshTable();
  const when = new Date("2010-11-01T12:00:00.123Z");
  const bin = new Uint8Array([0, 1, 2, 250]);
  await c.createEntity({
    partitionKey: "t",
    rowKey: "1",
    s: "text ünïcödé",
    i32: 42,
    i64: { value: "1099511627776", type: "Int64" },
    dbl: 1.5,
    whole: { value: "3", type: "Double" },
    bool: false,
    dt: when,
    guid: { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" },
    bin,
  });
  const e = await c.getEntity("t", "1", { disableTypeConversion: true });
  assert.deepEqual(e.s, { value: "text ünïcödé", type: "String" });
  assert.deepEqual(e.i32, { value: "42", type: "Int32" });
  assert.deepEqual(e.i64, { value: "1099511627776", type: "Int64" });
  assert.deepEqual(e.dbl, { value: "1.5", type: "Double" });
  assert.equal(e.whole.type, "Double");
  assert.equal(Number(e.whole.value), 3);
  assert.deepEqual(e.bool, { value: "false", type: "Boolean" });
  assert.equal(e.dt.type, "DateTime");
  assert.equal(new Date(e.dt.value).getTime(), when.getTime());
  assert.deepEqual(e.guid, { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" });
  assert.equal(e.bin.type, "Binary");
  assert.deepEqual(Buffer.from(e.bin.value, "base64"), Buffer.from(bin));
  const typed = await c.getEntity("t", "1");
  assert.equal(typed.dt.getTime(), when.getTime());
  assert.deepEqual(Buffer.from(typed.bin), Buffer.from(bin));
});

test("queries: filter, select and pages", async () => {
  const c = await freshTable();
  for (let i = 0; i < 12; i++) {
    await c.createEntity({ partitionKey: i % 2 ? "odd" : "even", rowKey: String(i).padStart(2, "0"), n: i, score: i + 0.5, flag: i % 3 === 0 });
  }
  const evens = [];
  for await (const e of c.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"even"} and n ge ${4}`, select: ["n"] } })) {
    evens.push(e.n);
    assert.equal(e.score, undefined);
  }
  assert.deepEqual(evens, [4, 6, 8, 10]);
  const flagged = [];
  for await (const e of c.listEntities({ queryOptions: { filter: "flag eq true and score lt 7" } })) flagged.push(e.n);
  assert.deepEqual(flagged.sort((a, b) => a - b), [0, 3, 6]);
  const sizes = [];
  for await (const page of c.listEntities().byPage({ maxPageSize: 5 })) sizes.push(page.length);
  assert.equal(sizes.reduce((a, b) => a + b, 0), 12);
  assert.ok(sizes.every((s) => s <= 5));
  const all = [];
  for await (const e of c.listEntities({ queryOptions: { filter: "true" } })) all.push(e.rowKey);
  assert.equal(all.length, 12);
});

test("transactions: 100 operations, a failing one and its index, one partition only", async () => {
  const c = await freshTable();
  const t = new TableTransaction();
  for (let i = 0; i < 100; i++) t.createEntity({ partitionKey: "b", rowKey: `r${i}`, i });
  await c.submitTransaction(t.actions);
  let count = 0;
  for await (const _ of c.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"b"}` } })) count++;
  assert.equal(count, 100);

  const mixed = new TableTransaction();
  mixed.updateEntity({ partitionKey: "b", rowKey: "r0", i: -1 }, "Merge");
  mixed.upsertEntity({ partitionKey: "b", rowKey: "new", i: 1000 }, "Replace");
  mixed.deleteEntity("b", "r1");
  mixed.createEntity({ partitionKey: "b", rowKey: "r2" }); // exists: the transaction fails here
  const err = await rejects(c.submitTransaction(mixed.actions));
  assert.equal(err.statusCode, 409);
  assert.match(String(err.message), /^3:/);
  const r0 = await c.getEntity("b", "r0");
  assert.equal(r0.i, 0, "nothing of a failed transaction is applied");
  await c.getEntity("b", "r1");

  // (A transaction across partitions the SDK refuses itself; the served
  // engine's refusal is tested with raw requests and the other SDKs.)
  const tooMany = new TableTransaction();
  for (let i = 0; i < 101; i++) tooMany.createEntity({ partitionKey: "m", rowKey: `r${i}` });
  const merr = await rejects(c.submitTransaction(tooMany.actions));
  assert.equal(merr.statusCode, 400);
});

test("transactions keep keys that look percent-encoded", async () => {
  const c = await freshTable();
  for (const rk of ["kA", "k%41", "a%25b", "%17"]) await c.createEntity({ partitionKey: "p%20q", rowKey: rk });
  const t = new TableTransaction();
  t.deleteEntity("p%20q", "k%41");
  t.updateEntity({ partitionKey: "p%20q", rowKey: "a%25b", v: 1 }, "Merge");
  t.upsertEntity({ partitionKey: "p%20q", rowKey: "%17", v: 2 }, "Replace");
  await c.submitTransaction(t.actions);
  await c.getEntity("p%20q", "kA");
  const gone = await rejects(c.getEntity("p%20q", "k%41"));
  assert.equal(gone.statusCode, 404);
  assert.equal((await c.getEntity("p%20q", "a%25b")).v, 1);
  assert.equal((await c.getEntity("p%20q", "%17")).v, 2);
});

function sasClient(table, sas) {
  return new TableClient(endpoint, table, new AzureSASCredential(sas), opts);
}

test("table SAS: read-only, add-only, scope, expiry and key ranges", async () => {
  const c = await freshTable();
  const other = await freshTable();
  await c.createEntity({ partitionKey: "p", rowKey: "1" });
  const ro = sasClient(c.tableName, generateTableSas(c.tableName, cred, { permissions: { query: true } }));
  await ro.getEntity("p", "1");
  assert.equal((await rejects(ro.createEntity({ partitionKey: "p", rowKey: "2" }))).statusCode, 403);

  const addOnly = generateTableSas(c.tableName, cred, { permissions: { add: true } });
  const ao = sasClient(c.tableName, addOnly);
  await ao.createEntity({ partitionKey: "p", rowKey: "2" });
  assert.equal((await rejects(ao.getEntity("p", "1"))).statusCode, 403);
  assert.equal((await rejects(ao.deleteEntity("p", "1"))).statusCode, 403);
  assert.equal((await rejects(ao.upsertEntity({ partitionKey: "p", rowKey: "1", x: 1 }))).statusCode, 403, "an upsert needs add and update");
  // The SAS for one table cannot reach another, directly or in a transaction.
  const scoped = sasClient(other.tableName, addOnly);
  assert.equal((await rejects(scoped.createEntity({ partitionKey: "p", rowKey: "1" }))).statusCode, 403);
  const t = new TableTransaction();
  t.createEntity({ partitionKey: "p", rowKey: "9" });
  assert.equal((await rejects(scoped.submitTransaction(t.actions))).statusCode, 403);
  const del = new TableTransaction();
  del.deleteEntity("p", "1");
  assert.equal((await rejects(ao.submitTransaction(del.actions))).statusCode, 403, "an add-only SAS cannot delete in a transaction");
  await c.getEntity("p", "1");

  const expired = sasClient(c.tableName, generateTableSas(c.tableName, cred, { permissions: { query: true }, expiresOn: new Date(Date.now() - 60000) }));
  assert.equal((await rejects(expired.getEntity("p", "1"))).statusCode, 403);

  for (const pk of ["a", "b", "c", "d"]) await c.createEntity({ partitionKey: pk, rowKey: "1" });
  const ranged = sasClient(c.tableName, generateTableSas(c.tableName, cred, { permissions: { query: true, add: true }, startPartitionKey: "b", endPartitionKey: "c" }));
  const seen = [];
  for await (const e of ranged.listEntities()) seen.push(e.partitionKey);
  assert.deepEqual(seen, ["b", "c"]);
  await ranged.createEntity({ partitionKey: "b", rowKey: "2" });
  assert.equal((await rejects(ranged.createEntity({ partitionKey: "e", rowKey: "1" }))).statusCode, 403);
  assert.equal((await rejects(ranged.getEntity("a", "1"))).statusCode, 403);
});

test("account SAS lists and creates tables", async () => {
  const sas = generateAccountSas(cred, { permissions: { list: true, write: true, add: true, create: true, read: true }, resourceTypes: "sco", expiresOn: new Date(Date.now() + 3600000) });
  const svc = new TableServiceClient(endpoint, new AzureSASCredential(sas), opts);
  const name = `jsacct${process.pid}`;
  await svc.createTable(name);
  const found = [];
  for await (const t of svc.listTables({ queryOptions: { filter: odata`TableName eq ${name}` } })) found.push(t.name);
  assert.deepEqual(found, [name]);
  const ro = new TableServiceClient(endpoint, new AzureSASCredential(generateAccountSas(cred, { permissions: { read: true }, resourceTypes: "o", expiresOn: new Date(Date.now() + 3600000) })), opts);
  assert.equal((await rejects(ro.createTable(`jsno${process.pid}`))).statusCode, 403);
});

test("service properties and CORS", async () => {
  await service.setProperties({
    cors: [{ allowedOrigins: "https://app.example", allowedMethods: "GET,PUT", allowedHeaders: "x-ms-meta-*,content-type", exposedHeaders: "x-ms-request-id", maxAgeInSeconds: 60 }],
    hourMetrics: { version: "1.0", enabled: true, includeAPIs: false, retentionPolicy: { enabled: true, days: 7 } },
  });
  const props = await service.getProperties();
  assert.equal(props.cors.length, 1);
  assert.equal(props.cors[0].allowedOrigins, "https://app.example");
  assert.equal(props.hourMetrics.enabled, true);
  assert.equal(props.hourMetrics.retentionPolicy.days, 7);
  const ok = await fetch(`${endpoint}/Tables`, { method: "OPTIONS", headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-ms-meta-abc" } });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("access-control-allow-origin"), "https://app.example");
  assert.equal(ok.headers.get("access-control-max-age"), "60");
  const denied = await fetch(`${endpoint}/Tables`, { method: "OPTIONS", headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "GET" } });
  assert.equal(denied.status, 403);
  const badMethod = await fetch(`${endpoint}/Tables`, { method: "OPTIONS", headers: { Origin: "https://app.example", "Access-Control-Request-Method": "DELETE" } });
  assert.equal(badMethod.status, 403);
  // Stats are served by the secondary endpoint only. The SDK finds it by
  // renaming the host, which an IP endpoint cannot take; path style, it is
  // the account's name with -secondary.
  const stats = await new TableServiceClient(`${endpoint}-secondary`, cred, opts).getStatistics();
  assert.equal(stats.geoReplication.status, "live");
  await service.setProperties({ cors: [] });
  assert.equal((await service.getProperties()).cors.length, 0);
});

test("table ACLs and a SAS that refers to a stored policy", async () => {
  const c = await freshTable();
  await c.createEntity({ partitionKey: "p", rowKey: "1" });
  const start = new Date(Date.now() - 60000);
  const expiry = new Date(Date.now() + 3600000);
  await c.setAccessPolicy([{ id: "readers", accessPolicy: { start, expiry, permission: "r" } }]);
  const acl = await c.getAccessPolicy();
  assert.equal(acl.length, 1);
  assert.equal(acl[0].id, "readers");
  assert.equal(acl[0].accessPolicy.permission, "r");
  assert.equal(acl[0].accessPolicy.expiry.getTime(), Math.floor(expiry.getTime() / 1000) * 1000);
  const viaPolicy = sasClient(c.tableName, generateTableSas(c.tableName, cred, { identifier: "readers" }));
  await viaPolicy.getEntity("p", "1");
  assert.equal((await rejects(viaPolicy.createEntity({ partitionKey: "p", rowKey: "2" }))).statusCode, 403);
  const unknown = sasClient(c.tableName, generateTableSas(c.tableName, cred, { identifier: "nobody" }));
  assert.equal((await rejects(unknown.getEntity("p", "1"))).statusCode, 403);
  await c.setAccessPolicy([]);
  assert.equal((await rejects(viaPolicy.getEntity("p", "1"))).statusCode, 403, "a removed policy revokes its SAS");
});
