"""Exceptions excuse one failure, never a file or a whole object."""

import tempfile
import unittest
from pathlib import Path

from cozystack_oracle.exceptions import ExceptionsError, load
from cozystack_oracle.render import Outcome


def exceptions(text: str):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "exceptions.yaml"
        path.write_text(text)
        return load(path)


LOOKUP = """
missed:
  - kinds: [Kubernetes]
    where: kubernetes/templates/cluster.yaml:532
    message: 'nodeGroup (?P<name>.+): specified instanceType'
    warns: {rule: chart-render/instance-type-not-shipped, field: [nodeGroups, "{name}", instanceType]}
    reason: cluster state
  - kinds: [VMInstance]
    where: vm-instance/templates/vm.yaml:80
    message: "Specified disk not exists in cluster: (?P<value>.*)"
    warns: {rule: chart-render/vm-disk-unverified, field: [disks, "*", name]}
    reason: cluster state
"""


def warning(rule: str, field: str, message: str = "") -> dict:
    return {"rule": rule, "field": field, "message": message}


class Missed(unittest.TestCase):
    def test_the_warning_must_be_on_the_field_that_failed(self):
        found = exceptions(LOOKUP)
        failed = Outcome("template", "kubernetes/templates/cluster.yaml:532", 'nodeGroup md1: specified instanceType "x" not found in cluster')
        rule = "chart-render/instance-type-not-shipped"
        self.assertTrue(found.excuse_missed("Kubernetes", "v1.6.2", "default", failed, [warning(rule, "spec.nodeGroups.md1.instanceType")]))
        # The rule firing on another group does not excuse this one.
        self.assertFalse(found.excuse_missed("Kubernetes", "v1.6.2", "default", failed, [warning(rule, "spec.nodeGroups.md0.instanceType")]))
        self.assertFalse(found.excuse_missed("Kubernetes", "v1.6.2", "default", failed, []))
        # Another kind, another line or a nested release is not this failure.
        self.assertFalse(found.excuse_missed("KubernetesNodes", "v1.6.2", "default", failed, [warning(rule, "spec.nodeGroups.md1.instanceType")]))
        elsewhere = Outcome("template", "kubernetes/templates/cluster.yaml:533", failed.message)
        self.assertFalse(found.excuse_missed("Kubernetes", "v1.6.2", "default", elsewhere, [warning(rule, "spec.nodeGroups.md1.instanceType")]))
        nested = Outcome("template", failed.location, failed.message, ("x-system",))
        self.assertFalse(found.excuse_missed("Kubernetes", "v1.6.2", "default", nested, [warning(rule, "spec.nodeGroups.md1.instanceType")]))

    def test_a_value_named_by_helm_must_be_named_by_the_warning(self):
        found = exceptions(LOOKUP)
        failed = Outcome("template", "vm-instance/templates/vm.yaml:80", "Specified disk not exists in cluster: data")
        rule = "chart-render/vm-disk-unverified"
        self.assertTrue(found.excuse_missed("VMInstance", "v1.6.2", "default", failed, [warning(rule, "spec.disks[1].name", 'disk "data"')]))
        self.assertFalse(found.excuse_missed("VMInstance", "v1.6.2", "default", failed, [warning(rule, "spec.disks[0].name", 'disk "root"')]))

    def test_loose_entries_are_refused(self):
        for text in (
            # no kinds
            "missed:\n  - where: stage:cozystack-api\n    reason: x\n",
            # a pattern for a whole file
            "missed:\n  - kinds: [VMInstance]\n    where: 'vm-instance/templates/vm.yaml:*'\n    warns: {rule: r, field: [a]}\n    reason: x\n",
            # a message without a place
            "missed:\n  - kinds: [VMInstance]\n    message: disk\n    reason: x\n",
            # a template failure with no warning on its field
            "missed:\n  - kinds: [VMInstance]\n    where: vm-instance/templates/vm.yaml:80\n    reason: x\n",
            # a warning field the message does not capture
            "missed:\n  - kinds: [Kubernetes]\n    where: kubernetes/templates/cluster.yaml:532\n"
            "    warns: {rule: r, field: [nodeGroups, '{name}']}\n    reason: x\n",
            # a denial without kinds
            "denied:\n  - rule: values-schema/render-bound\n    reason: x\n",
        ):
            with self.subTest(text=text), self.assertRaises(ExceptionsError):
                exceptions(text)


class Denied(unittest.TestCase):
    TEXT = """
denied:
  - kinds: [Harbor]
    rule: harbor-retention/ignored-retention-key
    reason: data loss
"""

    def test_an_object_is_excused_only_when_every_violation_is(self):
        found = exceptions(self.TEXT)
        listed = {"rule": "harbor-retention/ignored-retention-key"}
        other = {"rule": "values-schema/undeclared-key"}
        self.assertEqual(found.excuse_denied("Harbor", "v1.6.2", [listed, listed]), ["data loss"])
        self.assertEqual(found.excuse_denied("Harbor", "v1.6.2", [listed, other]), [])
        self.assertEqual(found.excuse_denied("Postgres", "v1.6.2", [listed]), [])


if __name__ == "__main__":
    unittest.main()


class Releases(unittest.TestCase):
    def test_a_line_names_each_of_its_releases(self):
        found = exceptions("""
missed:
  - kinds: [Ingress]
    where: ingress/templates/nginx-ingress.yaml:15
    releases: [v1.5]
    warns: {rule: chart-render/host-ingress-proxy-protocol, field: [proxyProtocol]}
    reason: the v1.5 charts
denied:
  - kinds: [Ingress]
    rule: chart-render/x
    releases: [v1.6.1]
    reason: one release
""")
        failed = Outcome("template", "ingress/templates/nginx-ingress.yaml:15", "boom")
        warned = [warning("chart-render/host-ingress-proxy-protocol", "spec.proxyProtocol")]
        for release in ("v1.5.1", "v1.5.4"):
            self.assertTrue(found.excuse_missed("Ingress", release, "default", failed, warned), release)
        self.assertFalse(found.excuse_missed("Ingress", "v1.6.2", "default", failed, warned))
        denial = [{"rule": "chart-render/x", "field": "spec", "message": ""}]
        self.assertTrue(found.excuse_denied("Ingress", "v1.6.1", denial))
        self.assertFalse(found.excuse_denied("Ingress", "v1.6.2", denial))
