"""The playground in a real browser: for every policy, one denied and one
allowed example case is picked from the page's list, and the rendered
verdict, messages and highlights are checked; typing into the manifest
re-evaluates it. Keeps a screenshot in docs/playground.png when
SCREENSHOT is set."""

import json
import os
import sys

from cdp import Page

page = Page(os.environ["BROWSER_URL"])
page.wait_for("document.body.dataset.ready === 'true'")
failures = []

def state():
    return page.js("""(() => ({
      verdict: document.getElementById('verdict').textContent,
      findings: [...document.querySelectorAll('#findings li')].map(li => li.textContent),
      marks: [...document.querySelectorAll('.backdrop mark')].map(m => m.className),
      evaluations: Number(document.body.dataset.evaluations),
    }))()""")

def pick(policy, case):
    page.js(f"""(() => {{
      const p = document.getElementById('policy'); p.value = {json.dumps(policy)};
      p.dispatchEvent(new Event('change'));
      const c = document.getElementById('case'); c.value = {json.dumps(case)};
      c.dispatchEvent(new Event('change'));
    }})()""")
    return state()

cases = page.js("fetch('cases.json').then(r => r.json())")
for policy in cases:
    name = policy["name"]
    plain = [c for c in policy["cases"] if not c["replaysCluster"]]
    denied = next(c for c in plain if c["expect"] == "fail" and c["object"] + c["oldObject"])
    allowed = next(c for c in plain if c["expect"] == "pass")
    seen = pick(name, denied["file"])
    if not seen["verdict"].startswith("Denied"):
        failures.append(f"{name}/{denied['file']}: {seen['verdict']}")
    if not seen["findings"] or "violation" not in seen["marks"]:
        failures.append(f"{name}/{denied['file']}: no highlighted violation {seen}")
    seen = pick(name, allowed["file"])
    if seen["verdict"] != "Allowed" or seen["marks"]:
        failures.append(f"{name}/{allowed['file']}: {seen['verdict']} {seen['marks']}")
    print(f"{name}: {denied['file']} denied, {allowed['file']} allowed")

# Typing re-evaluates (debounced): a manifest that is not YAML is reported
# at its line.
before = state()["evaluations"]
page.js("""(() => { const t = document.getElementById('object');
  t.value = t.value + '\\n  broken: [' ; t.dispatchEvent(new Event('input')); })()""")
page.wait_for(f"Number(document.body.dataset.evaluations) > {before}")
seen = state()
if seen["verdict"] != "Cannot read the input" or "problem" not in seen["marks"]:
    failures.append(f"typing: {seen}")

if os.environ.get("SCREENSHOT"):
    pick("no-delete", "delete-protected-configmap")
    page.screenshot(os.environ["SCREENSHOT"])

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print(f"playground: {len(cases)} policies checked in Chromium")
