"""A cluster renders a chart again whenever what the render reads changed,
and only then (:meth:`cozystack_oracle.cluster.Cluster.render`)."""

import tempfile
import unittest
from pathlib import Path

from cozystack_oracle import sdk
from cozystack_oracle.cluster import Cluster
from cozystack_oracle.release import Release

TEMPLATE = """\
{{- if .Values.boom }}{{ fail "boom" }}{{ end }}
{{- $secret := lookup "v1" "Secret" "ns" "s" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  found: {{ dig "metadata" "name" "none" $secret | quote }}
  size: {{ .Values.size | quote }}
"""


class Renders(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        chart = root / "charts" / "apps" / "c"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
        (chart / "values.yaml").write_text("size: 1\n")
        (chart / "templates" / "cm.yaml").write_text(TEMPLATE)
        self.cluster = Cluster(release=Release(version="test", root=root), workdir=root / "work")

    def tearDown(self):
        self.tmp.cleanup()

    def data(self, values: dict) -> str:
        return self.cluster.render("apps/c", values, "r", "ns")["c/templates/cm.yaml"]

    def test_the_same_inputs_give_the_same_render(self):
        self.assertEqual(self.data({"size": 2}), self.data({"size": 2}))
        self.assertIn('size: "3"', self.data({"size": 3}))

    def test_a_lookup_reads_what_the_cluster_holds_now(self):
        self.assertIn('found: "none"', self.data({}))
        self.cluster.objects.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}})
        self.assertIn('found: "s"', self.data({}))

    def test_a_failed_render_fails_again(self):
        for _ in range(2):
            with self.assertRaisesRegex(sdk.HelmError, "boom"):
                self.data({"boom": True})


if __name__ == "__main__":
    unittest.main()
