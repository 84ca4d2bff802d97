"""How values travel from spec to templates: Flux's merge, cozystack-api's
defaulting on read."""

import unittest

from cozystack_oracle.values import default_like_cozystack_api, merge_maps


class MergeMaps(unittest.TestCase):
    def test_maps_meet_and_anything_else_replaces(self):
        base = {"_cluster": {"a": 1}, "x": {"y": 1, "z": 2}, "l": [1]}
        self.assertEqual(
            merge_maps(base, {"x": {"y": None}, "l": [2], "n": None}),
            {"_cluster": {"a": 1}, "x": {"y": None, "z": 2}, "l": [2], "n": None},
        )
        self.assertEqual(base["x"], {"y": 1, "z": 2}, "the base is not changed")


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
