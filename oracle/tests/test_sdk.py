"""The SDK is driven from one module (:mod:`cozystack_oracle.sdk`), by the
oracle and by tools/helm-chart alike."""

import ast
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imports_helm_python(path: Path) -> bool:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "helm_python" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "helm_python":
            return True
    return False


class OneDriver(unittest.TestCase):
    def test_only_the_sdk_module_imports_helm_python(self):
        python = sorted(ROOT.glob("oracle/**/*.py")) + [ROOT / "tools" / "helm-chart"]
        python += [p for p in sorted((ROOT / "e2e").rglob("*.py"))]
        importers = [str(p.relative_to(ROOT)) for p in python if imports_helm_python(p)]
        self.assertEqual(importers, ["oracle/cozystack_oracle/sdk.py"])

    def test_the_reader_sees_an_import(self):
        # The check above can fail: a file that imports the SDK is seen.
        probe = ROOT / "target" / "test_sdk_probe.py"
        probe.parent.mkdir(exist_ok=True)
        probe.write_text("from helm_python import Chart\n")
        try:
            self.assertTrue(imports_helm_python(probe))
        finally:
            probe.unlink()


if __name__ == "__main__":
    unittest.main()
