"""The template sites the coverage table lists."""

import tempfile
import unittest
from pathlib import Path

from cozystack_oracle import coverage
from cozystack_oracle.release import Release


class Sites(unittest.TestCase):
    def test_calls_outside_comments_and_strings_are_sites(self):
        with tempfile.TemporaryDirectory() as tmp:
            chart = Path(tmp) / "cozystack-v0" / "charts" / "apps" / "demo"
            (chart / "templates").mkdir(parents=True)
            (chart / "templates" / "a.yaml").write_text(
                '{{/* fail "in a comment" */}}\n'
                '{{- if .Values.x }}{{ fail "x" }}{{ end }}\n'
                'text that says fail\n'
                '{{ printf "required %s" "no" }} {{ required "size" .Values.size }}\n'
            )
            release = Release(version="v0", root=Path(tmp) / "cozystack-v0")
            release.__dict__["applications"] = {"Demo": type("A", (), {"chart": "apps/demo"})()}
            found = [(s.file, s.line, s.call) for s in coverage.sites(release) if s.chart == "apps/demo"]
            self.assertEqual(found, [("templates/a.yaml", 2, "fail"), ("templates/a.yaml", 4, "required")])


if __name__ == "__main__":
    unittest.main()
