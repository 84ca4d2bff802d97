"""The template sites the coverage table lists."""

import tempfile
import unittest
from pathlib import Path

from cozystack_oracle import coverage
from cozystack_oracle.release import Release


def demo_release(tmp: str, template: str) -> Release:
    """A release whose one application chart, apps/demo, has the template
    ``templates/a.yaml``."""
    chart = Path(tmp) / "cozystack-v0" / "charts" / "apps" / "demo"
    (chart / "templates").mkdir(parents=True)
    (chart / "templates" / "a.yaml").write_text(template)
    release = Release(version="v0", root=Path(tmp) / "cozystack-v0")
    release.__dict__["applications"] = {"Demo": type("A", (), {"chart": "apps/demo"})()}
    return release


class Sites(unittest.TestCase):
    def test_calls_outside_comments_and_strings_are_sites(self):
        with tempfile.TemporaryDirectory() as tmp:
            release = demo_release(
                tmp,
                '{{/* fail "in a comment" */}}\n'
                '{{- if .Values.x }}{{ fail "x" }}{{ end }}\n'
                'text that says fail\n'
                '{{ printf "required %s" "no" }} {{ required "size" .Values.size }}\n',
            )
            found = [(s.file, s.line, s.call) for s in coverage.sites(release) if s.chart == "apps/demo"]
            self.assertEqual(found, [("templates/a.yaml", 2, "fail"), ("templates/a.yaml", 4, "required")])

    def test_a_failure_inside_a_define_is_known_by_its_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            release = demo_release(
                tmp,
                '{{- define "demo.group" }}\n'
                '{{- fail (printf "nodeGroup %q: ephemeralStorage is gone" .name) }}\n'
                '{{- end }}\n'
                '{{ include "demo.group" . }}\n'
                '{{ fail "x" }}\n',
            )
            message = 'execution error at (demo/templates/a.yaml:4:3): nodeGroup "md0": ephemeralStorage is gone'
            report = [{
                "release": "v0",
                "helm": {"stage": "template", "message": message},
                "bundle": {"violations": [{"rule": "chart-render/ephemeral-storage"}]},
                "excused": "",
            }]
            reached = coverage._reached(report, release)
            self.assertEqual(reached["demo/templates/a.yaml:2"].failed, 1)
            self.assertEqual(reached["demo/templates/a.yaml:2"].rules, {"chart-render/ephemeral-storage"})
            # "x" is too short to tell apart: only its own location counts.
            self.assertNotIn("demo/templates/a.yaml:5", reached)


class Dead(unittest.TestCase):
    def test_a_define_nothing_renders_includes_is_dead_code(self):
        with tempfile.TemporaryDirectory() as tmp:
            release = demo_release(tmp, '{{ include "demo.used" . }}\n')
            helpers = Path(tmp) / "cozystack-v0" / "charts" / "apps" / "demo" / "templates" / "_helpers.tpl"
            helpers.write_text(
                '{{- define "demo.used" }}{{ include "demo.inner" . }}{{ end }}\n'
                '{{- define "demo.inner" }}{{ fail "reached through demo.used" }}{{ end }}\n'
                '{{- define "demo.unused" }}\n{{ fail "never included" }}\n{{ end }}\n'
                '{{/* include "demo.unused" in a comment does not count */}}\n'
            )
            found = {s.line: s.dead for s in coverage.sites(release) if s.chart == "apps/demo"}
            self.assertEqual(found[2], "")
            self.assertIn('define "demo.unused"', found[4])


if __name__ == "__main__":
    unittest.main()
