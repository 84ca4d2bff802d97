"""What a site's template condition says it reads."""

import tempfile
import unittest
from pathlib import Path

from cozystack_oracle.templates import Scan, scan_file


def scan(template: str) -> Scan:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.yaml"
        path.write_text(template)
        found = Scan()
        scan_file(found, path, "templates/t.yaml")
        return found


class Reads(unittest.TestCase):
    def test_paths_through_variables_range_and_guards(self):
        found = scan(
            '{{- if .Values.backup.enabled }}\n'
            '{{- range $i, $vol := .Values.extra.volumes }}\n'
            '{{- if eq ($vol.name | default "") "" }}{{ fail "empty" }}{{ end }}\n'
            '{{- end }}\n'
            '{{ required "key" .Values.backup.key }}\n'
            '{{- end }}\n'
        )
        fail, required = found.calls
        self.assertIn(("extra", "volumes", "*", "name"), fail.guards)
        self.assertIn(("backup", "enabled"), fail.guards)
        self.assertEqual(required.reads, (("backup", "key"),))
        self.assertEqual(required.guards, (("backup", "enabled"),))

    def test_the_release_name_is_noted(self):
        found = scan('{{- if ne .Release.Name "etcd" }}{{ fail "name" }}{{ end }}\n')
        self.assertEqual(found.calls[0].release, frozenset({"Name"}))
        self.assertIn("etcd", found.calls[0].literals)


if __name__ == "__main__":
    unittest.main()
