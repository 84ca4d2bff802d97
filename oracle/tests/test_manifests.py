"""What kube-apiserver refuses when Flux applies a rendered object."""

import unittest

from cozystack_oracle.manifests import Manifest, apply_problems, objects


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


if __name__ == "__main__":
    unittest.main()
