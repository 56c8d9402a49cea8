"""The served engine driven by the Python Azure Tables SDK (azure-data-tables,
from Debian's python3-azure). tablebench's Go tests start a served engine and
run this file with unittest:

    TABLES_ENDPOINT=http://127.0.0.1:PORT/devstoreaccount1 \\
    TABLES_ACCOUNT=devstoreaccount1 TABLES_KEY=... python3 -m unittest -v test_conformance

Every case states what the Table service answers; none depends on another.
"""

import base64
import datetime
import itertools
import os
import unittest
import urllib.request
import uuid

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.core import MatchConditions
from azure.data.tables import (
    AccountSasPermissions,
    EdmType,
    EntityProperty,
    ResourceTypes,
    TableAccessPolicy,
    TableClient,
    TableCorsRule,
    TableMetrics,
    TableRetentionPolicy,
    TableSasPermissions,
    TableServiceClient,
    TableTransactionError,
    UpdateMode,
    generate_account_sas,
    generate_table_sas,
)

ENDPOINT = os.environ["TABLES_ENDPOINT"]
CRED = AzureNamedKeyCredential(os.environ["TABLES_ACCOUNT"], os.environ["TABLES_KEY"])
SERVICE = TableServiceClient(ENDPOINT, credential=CRED, retry_total=0)
_names = itertools.count()
UTC = datetime.timezone.utc


def fresh_table(prefix="py"):
    name = "%s%dx%d" % (prefix, os.getpid(), next(_names))
    return SERVICE.create_table(name)


def sas_client(table, sas):
    return TableClient(ENDPOINT, table, credential=AzureSasCredential(sas), retry_total=0)


def hour():
    return datetime.datetime.now(UTC) + datetime.timedelta(hours=1)


class Tables(unittest.TestCase):
    def test_create_list_filter_pages_delete(self):
        names = ["pylist%dx%d" % (os.getpid(), i) for i in range(5)]
        for n in names:
            SERVICE.create_table(n)
        with self.assertRaises(ResourceExistsError):
            SERVICE.create_table(names[0])
        got = [t.name for t in SERVICE.query_tables("TableName ge @lo and TableName le @hi", parameters={"lo": names[1], "hi": names[3]})]
        self.assertEqual(got, names[1:4])
        pages = [[t.name for t in page] for page in SERVICE.query_tables("TableName ge @lo and TableName le @hi", parameters={"lo": names[0], "hi": names[4]}, results_per_page=2).by_page()]
        self.assertEqual(pages, [names[0:2], names[2:4], names[4:]])
        SERVICE.delete_table(names[0])
        self.assertEqual([t.name for t in SERVICE.query_tables("TableName eq @n", parameters={"n": names[0]})], [])


class Entities(unittest.TestCase):
    def test_crud_and_etags(self):
        c = fresh_table()
        meta = c.create_entity({"PartitionKey": "p", "RowKey": "r", "name": "a", "n": 1})
        self.assertRegex(meta["etag"], r"^W/\"datetime'.+Z'\"$")
        with self.assertRaises(ResourceExistsError):
            c.create_entity({"PartitionKey": "p", "RowKey": "r"})
        e = c.get_entity("p", "r")
        self.assertEqual(e["name"], "a")
        self.assertEqual(e.metadata["etag"], meta["etag"])
        with self.assertRaises(ResourceModifiedError):
            c.update_entity({"PartitionKey": "p", "RowKey": "r", "name": "b"}, mode=UpdateMode.MERGE, etag='W/"wrong"', match_condition=MatchConditions.IfNotModified)
        c.update_entity({"PartitionKey": "p", "RowKey": "r", "name": "b"}, mode=UpdateMode.MERGE, etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
        e = c.get_entity("p", "r")
        self.assertEqual((e["name"], e["n"]), ("b", 1))
        c.update_entity({"PartitionKey": "p", "RowKey": "r", "other": True}, mode=UpdateMode.REPLACE)
        e = c.get_entity("p", "r")
        self.assertNotIn("name", e)
        self.assertIs(e["other"], True)
        with self.assertRaises(ResourceNotFoundError):
            c.update_entity({"PartitionKey": "p", "RowKey": "none", "x": 1})
        c.delete_entity("p", "r")
        with self.assertRaises(ResourceNotFoundError):
            c.get_entity("p", "r")

    def test_upsert_merge_and_replace(self):
        c = fresh_table()
        c.upsert_entity({"PartitionKey": "p", "RowKey": "u", "a": 1}, mode=UpdateMode.MERGE)
        c.upsert_entity({"PartitionKey": "p", "RowKey": "u", "b": 2}, mode=UpdateMode.MERGE)
        e = c.get_entity("p", "u")
        self.assertEqual((e["a"], e["b"]), (1, 2))
        c.upsert_entity({"PartitionKey": "p", "RowKey": "u", "c": 3}, mode=UpdateMode.REPLACE)
        e = c.get_entity("p", "u")
        self.assertEqual((e.get("a"), e["c"]), (None, 3))

    def test_every_edm_type(self):
        c = fresh_table()
        when = datetime.datetime(2010, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)
        g = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
        c.create_entity({
            "PartitionKey": "t", "RowKey": "1",
            "s": "text ünïcödé", "i32": 42, "i64": EntityProperty(1099511627776, EdmType.INT64),
            "dbl": 1.5, "whole": EntityProperty(3.0, EdmType.DOUBLE), "bool": False,
            "dt": when, "guid": g, "bin": b"\x00\x01\x02\xfa",
        })
        e = c.get_entity("t", "1")
        self.assertEqual(e["s"], "text ünïcödé")
        self.assertEqual(e["i32"], 42)
        self.assertEqual(e["i64"].value if hasattr(e["i64"], "value") else e["i64"], 1099511627776)
        self.assertEqual(e["dbl"], 1.5)
        self.assertEqual(float(e["whole"].value if hasattr(e["whole"], "value") else e["whole"]), 3.0)
        self.assertIs(e["bool"], False)
        self.assertEqual(e["dt"], when)
        self.assertEqual(e["guid"], g)
        self.assertEqual(e["bin"], b"\x00\x01\x02\xfa")

    def test_filter_select_pages(self):
        c = fresh_table()
        for i in range(12):
            c.create_entity({"PartitionKey": "odd" if i % 2 else "even", "RowKey": "%02d" % i, "n": i, "score": i + 0.5, "flag": i % 3 == 0})
        evens = [e["n"] for e in c.query_entities("PartitionKey eq @pk and n ge @lo", parameters={"pk": "even", "lo": 4}, select=["n"])]
        self.assertEqual(evens, [4, 6, 8, 10])
        flagged = sorted(e["n"] for e in c.query_entities("flag eq true and score lt 7"))
        self.assertEqual(flagged, [0, 3, 6])
        whole = sorted(e["n"] for e in c.query_entities("score gt 10"))
        self.assertEqual(whole, [10, 11])
        sizes = [len(list(p)) for p in c.list_entities(results_per_page=5).by_page()]
        self.assertEqual(sum(sizes), 12)
        self.assertTrue(all(s <= 5 for s in sizes))


class Transactions(unittest.TestCase):
    def test_hundred_operations_failure_index_and_partitions(self):
        c = fresh_table()
        c.submit_transaction([("create", {"PartitionKey": "b", "RowKey": "r%d" % i, "i": i}) for i in range(100)])
        self.assertEqual(len(list(c.query_entities("PartitionKey eq 'b'"))), 100)
        ops = [
            ("update", {"PartitionKey": "b", "RowKey": "r0", "i": -1}, {"mode": UpdateMode.MERGE}),
            ("upsert", {"PartitionKey": "b", "RowKey": "new", "i": 1000}, {"mode": UpdateMode.REPLACE}),
            ("delete", {"PartitionKey": "b", "RowKey": "r1"}),
            ("create", {"PartitionKey": "b", "RowKey": "r2"}),
        ]
        with self.assertRaises(TableTransactionError) as cm:
            c.submit_transaction(ops)
        self.assertEqual(cm.exception.index, 3)
        self.assertEqual(cm.exception.status_code, 409)
        self.assertEqual(c.get_entity("b", "r0")["i"], 0)
        c.get_entity("b", "r1")
        with self.assertRaises((TableTransactionError, HttpResponseError, ValueError)):
            c.submit_transaction([("create", {"PartitionKey": "x1", "RowKey": "1"}), ("create", {"PartitionKey": "x2", "RowKey": "1"})])
        self.assertEqual(list(c.query_entities("PartitionKey eq 'x1'")), [])

    def test_keys_that_look_percent_encoded(self):
        c = fresh_table()
        for rk in ["kA", "k%41", "a%25b", "%17"]:
            c.create_entity({"PartitionKey": "p%20q", "RowKey": rk})
        c.submit_transaction([
            ("delete", {"PartitionKey": "p%20q", "RowKey": "k%41"}),
            ("update", {"PartitionKey": "p%20q", "RowKey": "a%25b", "v": 1}),
            ("upsert", {"PartitionKey": "p%20q", "RowKey": "%17", "v": 2}, {"mode": UpdateMode.REPLACE}),
        ])
        c.get_entity("p%20q", "kA")
        with self.assertRaises(ResourceNotFoundError):
            c.get_entity("p%20q", "k%41")
        self.assertEqual(c.get_entity("p%20q", "a%25b")["v"], 1)
        self.assertEqual(c.get_entity("p%20q", "%17")["v"], 2)


class SAS(unittest.TestCase):
    def test_table_sas(self):
        c, other = fresh_table(), fresh_table()
        c.create_entity({"PartitionKey": "p", "RowKey": "1"})
        ro = sas_client(c.table_name, generate_table_sas(CRED, c.table_name, permission=TableSasPermissions(read=True), expiry=hour()))
        ro.get_entity("p", "1")
        with self.assertRaises(HttpResponseError) as cm:
            ro.create_entity({"PartitionKey": "p", "RowKey": "2"})
        self.assertEqual(cm.exception.status_code, 403)
        add_only = generate_table_sas(CRED, c.table_name, permission=TableSasPermissions(add=True), expiry=hour())
        ao = sas_client(c.table_name, add_only)
        ao.create_entity({"PartitionKey": "p", "RowKey": "2"})
        for call in (lambda: ao.get_entity("p", "1"), lambda: ao.delete_entity("p", "1"), lambda: ao.upsert_entity({"PartitionKey": "p", "RowKey": "1", "x": 1})):
            with self.assertRaises(HttpResponseError) as cm:
                call()
            self.assertEqual(cm.exception.status_code, 403)
        scoped = sas_client(other.table_name, add_only)
        with self.assertRaises(HttpResponseError) as cm:
            scoped.create_entity({"PartitionKey": "p", "RowKey": "1"})
        self.assertEqual(cm.exception.status_code, 403)
        with self.assertRaises(HttpResponseError) as cm:
            scoped.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "9"})])
        self.assertEqual(cm.exception.status_code, 403)
        with self.assertRaises(HttpResponseError) as cm:
            ao.submit_transaction([("delete", {"PartitionKey": "p", "RowKey": "1"})])
        self.assertEqual(cm.exception.status_code, 403)
        c.get_entity("p", "1")
        expired = sas_client(c.table_name, generate_table_sas(CRED, c.table_name, permission=TableSasPermissions(read=True), expiry=datetime.datetime.now(UTC) - datetime.timedelta(minutes=1)))
        with self.assertRaises(HttpResponseError) as cm:
            expired.get_entity("p", "1")
        self.assertEqual(cm.exception.status_code, 403)

    def test_key_ranges(self):
        c = fresh_table()
        for pk in "abcd":
            c.create_entity({"PartitionKey": pk, "RowKey": "1"})
        sas = generate_table_sas(CRED, c.table_name, permission=TableSasPermissions(read=True, add=True), expiry=hour(), start_pk="b", end_pk="c")
        ranged = sas_client(c.table_name, sas)
        self.assertEqual([e["PartitionKey"] for e in ranged.list_entities()], ["b", "c"])
        ranged.create_entity({"PartitionKey": "b", "RowKey": "2"})
        with self.assertRaises(HttpResponseError) as cm:
            ranged.create_entity({"PartitionKey": "e", "RowKey": "1"})
        self.assertEqual(cm.exception.status_code, 403)

    def test_account_sas(self):
        sas = generate_account_sas(CRED, resource_types=ResourceTypes.from_string("sco"), permission=AccountSasPermissions(read=True, list=True, add=True, create=True, write=True), expiry=hour())
        svc = TableServiceClient(ENDPOINT, credential=AzureSasCredential(sas), retry_total=0)
        name = "pyacct%d" % os.getpid()
        svc.create_table(name)
        self.assertEqual([t.name for t in svc.query_tables("TableName eq @n", parameters={"n": name})], [name])


class ServiceResources(unittest.TestCase):
    def test_properties_cors_stats(self):
        SERVICE.set_service_properties(
            hour_metrics=TableMetrics(enabled=True, include_apis=False, retention_policy=TableRetentionPolicy(enabled=True, days=5)),
            cors=[TableCorsRule(["https://app.example"], ["GET", "PUT"], allowed_headers=["x-ms-meta-*"], exposed_headers=["x-ms-request-id"], max_age_in_seconds=30)],
        )
        props = SERVICE.get_service_properties()
        self.assertTrue(props["hour_metrics"].enabled)
        self.assertEqual(props["hour_metrics"].retention_policy.days, 5)
        self.assertEqual(props["cors"][0].allowed_origins, ["https://app.example"])
        req = urllib.request.Request(ENDPOINT + "/Tables", method="OPTIONS", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "PUT"})
        with urllib.request.urlopen(req) as resp:
            self.assertEqual(resp.status, 200)
            self.assertEqual(resp.headers["Access-Control-Allow-Origin"], "https://app.example")
        req = urllib.request.Request(ENDPOINT + "/Tables", method="OPTIONS", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req)
        self.assertEqual(cm.exception.code, 403)
        self.assertEqual(SERVICE.get_service_stats()["geo_replication"]["status"], "live")
        SERVICE.set_service_properties(cors=[])
        self.assertEqual(SERVICE.get_service_properties()["cors"], [])

    def test_acl_and_stored_policy(self):
        c = fresh_table()
        c.create_entity({"PartitionKey": "p", "RowKey": "1"})
        c.set_table_access_policy({"readers": TableAccessPolicy(permission="r", expiry=hour(), start=datetime.datetime.now(UTC) - datetime.timedelta(minutes=1))})
        acl = c.get_table_access_policy()
        self.assertEqual(list(acl), ["readers"])
        self.assertEqual(acl["readers"].permission, "r")
        via = sas_client(c.table_name, generate_table_sas(CRED, c.table_name, policy_id="readers"))
        via.get_entity("p", "1")
        with self.assertRaises(HttpResponseError) as cm:
            via.create_entity({"PartitionKey": "p", "RowKey": "2"})
        self.assertEqual(cm.exception.status_code, 403)
        c.set_table_access_policy({})
        with self.assertRaises(HttpResponseError) as cm:
            via.get_entity("p", "1")
        self.assertEqual(cm.exception.status_code, 403)


if __name__ == "__main__":
    unittest.main()
