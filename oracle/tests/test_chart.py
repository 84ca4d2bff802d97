"""The lookup rewrite: every call found, nothing else touched."""

import unittest

from cozystack_oracle.chart import LOOKUP_TEMPLATE, rewrite_lookups


def call(args: str) -> str:
    return f'(include "{LOOKUP_TEMPLATE}" (list {args}) | fromJson)'


class RewriteLookups(unittest.TestCase):
    def test_a_plain_call_reads_the_fixed_cluster(self):
        source = '{{- $s := lookup "v1" "Secret" .Release.Namespace (printf "%s-x" .Release.Name) }}'
        out, count = rewrite_lookups(source)
        self.assertEqual(count, 1)
        self.assertEqual(out, "{{- $s := " + call('"v1" "Secret" .Release.Namespace (printf "%s-x" .Release.Name)') + " }}")

    def test_a_call_in_parentheses_keeps_its_field(self):
        out, count = rewrite_lookups('{{- range (lookup "v1" "PersistentVolumeClaim" $ns "").items }}')
        self.assertEqual(count, 1)
        self.assertIn(call('"v1" "PersistentVolumeClaim" $ns ""') + ").items", out)

    def test_strings_comments_and_text_are_left_alone(self):
        source = (
            '{{/* lookup "v1" "Secret" "" "" */}}\n'
            'echo "timed out waiting for lookup inputs"\n'
            '{{ fail (printf "lookup returned nothing for %s" .Release.Name) }}\n'
            "{{`{{ $labels.job }}`}} {{ .Values.lookupTable }}\n"
        )
        self.assertEqual(rewrite_lookups(source), (source, 0))

    def test_a_raw_string_holding_braces_does_not_end_the_action(self):
        source = '{{ printf `}}` }} {{ lookup "v1" "Namespace" "" .Release.Namespace }}'
        out, count = rewrite_lookups(source)
        self.assertEqual(count, 1)
        self.assertTrue(out.startswith("{{ printf `}}` }} {{ " + call('"v1" "Namespace" "" .Release.Namespace')))


if __name__ == "__main__":
    unittest.main()
