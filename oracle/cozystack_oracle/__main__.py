"""``python -m cozystack_oracle``: the Helm oracle's command line.

    render FILE...        each application object's outcome, as the platform renders it
    suite                 the differential suite (make oracle)
    nulls                 values-schema's table of nulls that fail a render
    coverage              chart-render's README table of template fail/required sites
    test                  the oracle's own unit tests
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import unittest
from pathlib import Path

import yaml

from . import coverage, probes
from . import nulls as nulls_table
from . import suite
from .cluster import Cluster
from .release import Release, versions
from .render import Renderer
from .variants import VARIANTS

HERE = Path(__file__).resolve().parent.parent
ROOT = HERE.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cozystack_oracle", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="the release data (../shared/data)")
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="render application objects as the platform does")
    render.add_argument("--release", default="v1.6.2", help="whose charts: a release of releases/ (default v1.6.2)")
    render.add_argument("--variant", default="default", choices=sorted(VARIANTS), help="the platform variant")
    render.add_argument("files", nargs="+", type=Path)
    nulls = commands.add_parser("nulls", help="write values-schema's table of nulls that fail a render")
    nulls.add_argument("--release", action="append", dest="releases", help="a release of releases/ (default every one with its own charts)")
    nulls.add_argument("--workers", type=int, default=0)
    commands.add_parser("test", help="the oracle's own unit tests")
    cover = commands.add_parser("coverage", help="chart-render's README table of template fail/required sites")
    cover.add_argument("--report", type=Path, default=ROOT / "target" / "oracle" / "report.json")
    cover.add_argument("--readme", type=Path, default=ROOT / "policies" / "chart-render" / "README.md")
    mode = cover.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the README's table from the report")
    mode.add_argument("--check", action="store_true", help="fail when a template site has no row")
    probe = commands.add_parser("probes", help="search values that reach the template sites the last run did not")
    probe.add_argument("--report", type=Path, default=ROOT / "target" / "oracle" / "report.json")
    probe.add_argument("--release", action="append", dest="releases", help="a release of releases/ (default every released one)")
    probe.add_argument("--workers", type=int, default=0)
    probe.add_argument("--write", action="store_true", help="write probes/sites.yaml (with the probes it already has)")
    run = commands.add_parser("suite", help="the differential suite against the bundle")
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--per-kind", type=int, default=80, help="samples per kind and release (before their stored copies)")
    run.add_argument("--patch-per-kind", type=int, default=None,
                     help="samples per kind of a release older than the newest of its line (default --per-kind)")
    run.add_argument("--patch-light", action="store_true",
                     help="leave out the cases and nulls of a release older than the newest of its line")
    run.add_argument("--release", action="append", dest="releases",
                     help="a release of releases/, candidates included (default every released one)")
    run.add_argument("--cli", type=Path, default=ROOT / "target" / "release" / "cozystack-policies")
    run.add_argument("--exceptions", type=Path, default=HERE / "exceptions.yaml")
    run.add_argument("--report", type=Path, default=ROOT / "target" / "oracle" / "report.json")
    run.add_argument("--workers", type=int, default=0)
    run.add_argument("--variant-every", type=int, default=suite.VARIANT_EVERY,
                     help="render every n-th sample of a kind again on each platform variant")
    run.add_argument("--updates-per-kind", type=int, default=None,
                     help="changes per kind judged as UPDATEs, each by PUT and by merge PATCH (default per-kind/4)")
    run.add_argument("--helm-from", type=Path, default=None,
                     help="reuse Helm's outcomes from this report (same samples): judge only the bundle again")
    run.add_argument("--no-name-probes", dest="names", action="store_false",
                     help="leave out the invalid and over-long names at every free string and map key")
    run.add_argument("--bundle", type=Path, default=ROOT,
                     help="the tree whose dist/ and deploy/ are judged (default this one): an older "
                          "commit's worktree measures the bundle before a change on the same samples")
    args = parser.parse_args(argv)
    if args.command == "render":
        with tempfile.TemporaryDirectory(prefix="oracle-") as work:
            variant = VARIANTS[args.variant]
            renderer = Renderer(Cluster.boot(Release.at(args.data, args.release), Path(work), variant=variant))
            for path in args.files:
                for obj in yaml.safe_load_all(path.read_text()):
                    if obj:
                        obj = variant.place(obj)
                        print(json.dumps({"object": f"{obj.get('kind')} {obj.get('metadata', {}).get('namespace')}/{obj.get('metadata', {}).get('name')}", **renderer.application(obj).to_json()}))
        return 0
    if args.command == "test":
        tests = unittest.defaultTestLoader.discover(str(HERE / "tests"), top_level_dir=str(HERE))
        return 0 if unittest.TextTestRunner(verbosity=1).run(tests).wasSuccessful() else 1
    if args.command == "coverage":
        if args.write:
            text, summaries = coverage.section(args.data, args.report)
            args.readme.write_text(coverage.rewrite(args.readme, text))
            print(f"coverage: wrote {args.readme}")
            failed = False
            for s in summaries:
                print(f"coverage: {s.version}: {s.total} sites, {s.reached} reached, {len(s.dead)} dead, "
                      f"{len(s.listed)} listed in unreached.yaml, {len(s.unexplained)} unexplained")
                for site in s.unexplained:
                    print(f"coverage: {s.version} {site.location}: no object reached it, and unreached.yaml does not say why")
                    failed = True
            return 1 if failed else 0
        problems = coverage.missing_rows(args.data, args.readme)
        for problem in problems:
            print(f"coverage: {problem}")
        return 1 if problems else 0
    if args.command == "probes":
        report = json.loads(args.report.read_text())
        with tempfile.TemporaryDirectory(prefix="oracle-") as work:
            found = probes.search(args.data, report, args.releases or versions(), Path(work), args.workers)
        if args.write:
            kept = [p for p in probes.read() if p.where not in {f.where for f in found if f.release == p.release}]
            probes.write(kept + found)
            print(f"probes: wrote {probes.PROBES}")
        return 0
    if args.command == "nulls":
        with tempfile.TemporaryDirectory(prefix="oracle-") as work:
            nulls_table.write(args.data, ROOT, args.releases or nulls_table.own_charts(), Path(work), args.workers)
        return 0
    with tempfile.TemporaryDirectory(prefix="oracle-") as work:
        return suite.run(
            data=args.data, root=ROOT, bundle=args.bundle, cli=args.cli, seed=args.seed, per_kind=args.per_kind,
            versions=args.releases or versions(), exceptions=args.exceptions,
            report=args.report, workdir=Path(work), workers=args.workers, names=args.names,
            variant_every=args.variant_every, updates_per_kind=args.updates_per_kind, helm_from=args.helm_from,
            patch_per_kind=args.patch_per_kind, patch_light=args.patch_light,
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
