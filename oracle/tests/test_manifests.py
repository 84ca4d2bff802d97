"""What kube-apiserver refuses when Flux applies a rendered object."""

import random
import re
import unittest

from cozystack_oracle.manifests import Manifest, applied, apply_problems, objects, split, update_problems

#: Helm's separator (pkg/release/v1/util/manifest.go) with Go's ASCII ``\s``.
HELM_SEPARATOR = re.compile(r"(?:^|[ \t\n\f\r]*\n)---[ \t\n\f\r]*")


def problems(obj: dict) -> list[str]:
    return [r.message for r in apply_problems(Manifest("t.yaml", ""), obj)]


class ApplyProblems(unittest.TestCase):
    def test_names_are_validated_as_their_kind_wants(self):
        self.assertEqual(problems({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a.b-c"}}), [])
        self.assertIn("lowercase RFC 1123 subdomain", problems({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "App.User"}})[0])
        self.assertIn("DNS-1035", problems({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1abc"}})[0])
        self.assertIn("63 characters", problems({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a" * 64}})[0])
        # RBAC names are path segments: a colon is fine, a slash is not.
        self.assertEqual(problems({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "cozy:tenant"}}), [])
        self.assertTrue(problems({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a/b"}}))

    def test_label_values_are_at_most_63_characters_of_their_alphabet(self):
        ok = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "labels": {"a.io/b": "x-y_z.1", "e": ""}}}
        self.assertEqual(problems(ok), [])
        long = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "labels": {"host": "a" * 64}}}
        self.assertIn("no more than 63", problems(long)[0])
        spaced = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "labels": {"host": "UPPER case"}}}
        self.assertIn("valid label value", problems(spaced)[0])

    def test_objects_larger_than_etcd_stores_are_refused(self):
        names = [f"data-etcd-{i}" for i in range(100_000)]
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cleanup"},
                "rules": [{"apiGroups": [""], "resources": ["persistentvolumeclaims"], "resourceNames": names}]}
        self.assertIn("request is too large", problems(role)[0])
        role["rules"][0]["resourceNames"] = names[:1000]
        self.assertEqual(problems(role), [])

    def test_documents_split_as_helm_splits_them(self):
        rendered = {"a/templates/x.yaml": "---\na: 1\n---\n\n---\nb: 2\n", "a/templates/NOTES.txt": "hello"}
        self.assertEqual(list(objects(rendered)), [{"a": 1}, {"b": 2}])

    def test_split_finds_the_separators_helms_expression_finds(self):
        cases = ["", "---", "a---b", "a\n---b", "---\n\n---\nx", "a \n \n---  \n----\n", "\n\n---\r\n---"]
        rng = random.Random(7)
        cases += ["".join(rng.choice("-\n a\t") for _ in range(rng.randrange(40))) for _ in range(5000)]
        for text in cases:
            self.assertEqual(split(text), HELM_SEPARATOR.split(text), repr(text))


def statefulset(storage_class: str, size: str = "10Gi", replicas: int = 1) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"replicas": replicas, "serviceName": "db", "template": {"spec": {}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                           "spec": {"storageClassName": storage_class,
                                                    "resources": {"requests": {"storage": size}}}}]},
    }


class Updates(unittest.TestCase):
    def test_a_statefulset_keeps_its_volume_claim_templates(self):
        old = [("t.yaml", applied(statefulset("replicated"), "r", "tenant-foo"))]
        for changed in (statefulset("local"), statefulset("replicated", "20Gi")):
            new = [("t.yaml", applied(changed, "r", "tenant-foo"))]
            refusals = list(update_problems(old, new))
            self.assertEqual(len(refusals), 1)
            self.assertIn("volumeClaimTemplates", refusals[0].message)
        # Replicas and the pod template may change.
        scaled = [("t.yaml", applied(statefulset("replicated", replicas=3), "r", "tenant-foo"))]
        self.assertEqual(list(update_problems(old, scaled)), [])

    def test_hooks_are_recreated_not_updated(self):
        hook = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "annotations": {"helm.sh/hook": "post-install"}},
                "spec": {"selector": {"a": "1"}}}
        changed = {**hook, "spec": {"selector": {"a": "2"}}}
        self.assertEqual(list(update_problems([("j.yaml", hook)], [("j.yaml", changed)])), [])

    def test_applied_objects_carry_their_namespace_and_owner(self):
        obj = applied({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, "app", "tenant-foo")
        self.assertEqual(obj["metadata"]["namespace"], "tenant-foo")
        self.assertEqual(obj["metadata"]["annotations"]["meta.helm.sh/release-name"], "app")
        ns = applied({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}, "app", "tenant-foo")
        self.assertNotIn("namespace", ns["metadata"])


if __name__ == "__main__":
    unittest.main()
