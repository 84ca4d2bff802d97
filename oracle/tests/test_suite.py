"""How many samples each release gets."""

import unittest

from cozystack_oracle.suite import patches, per_release

RELEASES = ["v1.7.0-rc.3c780acd", "v1.6.2", "v1.6.1", "v1.6.0", "v1.5.4", "v1.5.3", "v1.5.1"]


class PerRelease(unittest.TestCase):
    def test_the_newest_of_each_line_gets_per_kind(self):
        counts = per_release(RELEASES, 130, 40)
        self.assertEqual(
            counts,
            {"v1.7.0-rc.3c780acd": 130, "v1.6.2": 130, "v1.6.1": 40, "v1.6.0": 40,
             "v1.5.4": 130, "v1.5.3": 40, "v1.5.1": 40},
        )

    def test_without_a_patch_count_every_release_gets_per_kind(self):
        self.assertEqual(set(per_release(RELEASES, 12, None).values()), {12})

    def test_patches_are_the_older_releases_of_a_line(self):
        self.assertEqual(patches(RELEASES), {"v1.6.1", "v1.6.0", "v1.5.3", "v1.5.1"})
        self.assertEqual(patches(["v1.5.3"]), set())


if __name__ == "__main__":
    unittest.main()
