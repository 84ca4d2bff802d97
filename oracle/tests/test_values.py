"""How values travel from spec to templates: Flux's merge, cozystack-api's
defaulting on read."""

import unittest

from pathlib import Path

from cozystack_oracle.helm import ChartTree, coalesce_values, install_values, Dependency
from cozystack_oracle.generate import merge_patch
from cozystack_oracle.values import default_like_cozystack_api, merge_maps


def coalesce(chart: dict, user: dict | None, v423: bool = False) -> dict:
    return coalesce_values(ChartTree("c", Path("c"), chart), user, v423)


class MergePatch(unittest.TestCase):
    def test_null_deletes_where_flux_would_keep_it(self):
        stored = {"spec": {"size": "10Gi", "tls": {"enabled": True, "x": 1}}}
        self.assertEqual(merge_patch(stored, {"spec": {"size": None, "tls": {"enabled": False}}}),
                         {"spec": {"tls": {"enabled": False, "x": 1}}})
        self.assertEqual(merge_patch(stored, {"spec": {"tls": [1]}}), {"spec": {"size": "10Gi", "tls": [1]}})


class MergeMaps(unittest.TestCase):
    def test_maps_meet_and_anything_else_replaces(self):
        base = {"_cluster": {"a": 1}, "x": {"y": 1, "z": 2}, "l": [1]}
        self.assertEqual(
            merge_maps(base, {"x": {"y": None}, "l": [2], "n": None}),
            {"_cluster": {"a": 1}, "x": {"y": None, "z": 2}, "l": [2], "n": None},
        )
        self.assertEqual(base["x"], {"y": 1, "z": 2}, "the base is not changed")


class CoalesceLikeHelm411(unittest.TestCase):
    CHART = {"replicas": 2, "size": "10Gi", "users": {}, "backup": {"enabled": False, "schedule": "0 2 * * *"}, "list": [1, 2], "gone": None}

    def test_a_null_deletes_the_key_and_its_default(self):
        out = coalesce(self.CHART, {"size": None, "backup": {"schedule": None}})
        self.assertNotIn("size", out)
        self.assertEqual(out["backup"], {"enabled": False})

    def test_a_null_the_chart_does_not_default_stays(self):
        out = coalesce(self.CHART, {"extra": None, "users": {"alice": {"password": None}, "bob": None}})
        self.assertIsNone(out["extra"])
        # Inside a table that meets a default table every null goes, one level down they stay.
        self.assertEqual(out["users"], {"alice": {"password": None}})

    def test_tables_meet_and_anything_else_wins_whole(self):
        out = coalesce(self.CHART, {"backup": {"enabled": True}, "list": [3], "replicas": "x"})
        self.assertEqual(out["backup"], {"enabled": True, "schedule": "0 2 * * *"})
        self.assertEqual((out["list"], out["replicas"]), ([3], "x"))
        self.assertIsNone(coalesce(self.CHART, None)["gone"])

    def test_v4_2_3_keeps_the_nulls_v4_1_1_deletes_and_drops_the_charts_own(self):
        # helm/helm #31644 and #31979: what the SDK would do, not the platform.
        out = coalesce(self.CHART, {"users": {"bob": None}}, v423=True)
        self.assertEqual(out["users"], {"bob": None})
        self.assertNotIn("gone", out)

    def test_a_subchart_block_keeps_its_nulls_for_the_subchart(self):
        sub = ChartTree("lib", Path("c/charts/lib"), {"k": 1, "m": {"a": 1}})
        chart = ChartTree("c", Path("c"), {"lib": {"m": {"a": None}}}, [sub])
        self.assertEqual(coalesce_values(chart, {})["lib"], {"k": 1, "m": {}, "global": {}})
        # v4.2.3 strips the parent's nulls before they reach the subchart.
        self.assertEqual(coalesce_values(chart, {}, v423=True)["lib"], {"k": 1, "m": {"a": 1}, "global": {}})

    def test_a_condition_removes_a_declared_subchart(self):
        sub = ChartTree("extra", Path("c/charts/extra"), {"x": 1})
        chart = ChartTree("c", Path("c"), {"extra": {"enabled": False}}, [sub], [Dependency("extra", "extra.enabled")])
        values = install_values(chart, {})
        self.assertEqual(chart.subcharts, [])
        self.assertEqual(values["extra"], {"enabled": False})


class Defaulting(unittest.TestCase):
    SCHEMA = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "default": 2},
            "tls": {"type": "object", "default": {}, "properties": {"enabled": {"type": "boolean", "default": False}}},
            "users": {"type": "object", "default": {}, "additionalProperties": {
                "type": "object", "properties": {"readonly": {"type": "boolean", "default": False}}}},
            "size": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": "10Gi", "x-kubernetes-int-or-string": True},
            "nothing": {"type": "string"},
        },
    }

    def test_every_default_is_filled_map_entries_included(self):
        self.assertEqual(
            default_like_cozystack_api({"users": {"alice": {}}}, self.SCHEMA),
            {"replicas": 2, "tls": {"enabled": False}, "users": {"alice": {"readonly": False}}, "size": "10Gi"},
        )

    def test_a_null_of_a_typed_field_becomes_its_default(self):
        self.assertEqual(default_like_cozystack_api({"tls": None, "size": None, "nothing": None}, self.SCHEMA)["tls"], {"enabled": False})
        out = default_like_cozystack_api({"size": None, "nothing": None}, self.SCHEMA)
        self.assertEqual((out["size"], out["nothing"]), ("10Gi", None))

    def test_a_wrong_type_where_an_object_goes_is_replaced(self):
        self.assertEqual(default_like_cozystack_api({"tls": "yes"}, self.SCHEMA)["tls"], {"enabled": False})


if __name__ == "__main__":
    unittest.main()
