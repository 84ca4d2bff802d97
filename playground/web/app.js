// The playground page: fills the editors from the case list, and on every
// change (debounced) asks the policies' wasm build for a verdict, then
// lists the messages and highlights the field each one names.
import init, { evaluate, policies } from "./cozystack_playground.js";

const EDITORS = ["object", "oldObject", "settings", "request"];
const $ = (id) => document.getElementById(id);
let cases = [];
let timer = null;

function casesOf(policy) {
  return (cases.find((p) => p.name === policy) || { cases: [] }).cases;
}

function fillCases() {
  const select = $("case");
  select.replaceChildren(new Option("(pick an example)", ""));
  for (const c of casesOf($("policy").value)) {
    const mark = { fail: "✗", pass: "✓", warn: "!", skip: "–", "invalid-settings": "⚙" }[c.expect] || "";
    select.add(new Option(`${mark} ${c.file}`, c.file));
  }
}

function loadCase(file) {
  const c = casesOf($("policy").value).find((x) => x.file === file);
  if (!c) return;
  $("operation").value = c.operation;
  for (const editor of EDITORS) $(editor).value = c[editor];
  $("note").textContent = c.description +
    (c.replaysCluster ? " (This case replays recorded cluster answers; the playground has no cluster, so context-aware checks fall back to their static ones.)" : "");
  run();
}

function showEditors() {
  const operation = $("operation").value;
  document.querySelector('[data-editor="object"]').classList.toggle("hidden", operation === "DELETE");
  document.querySelector('[data-editor="oldObject"]').classList.toggle("hidden", operation === "CREATE");
}

function escape(text) {
  return text.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
}

// Marks, per editor: {line, column, length, kind}; lines and columns are
// 1-based and count characters, as the engine reports them.
function paint(marks) {
  for (const editor of EDITORS) {
    const text = $(editor).value;
    const lines = text.split("\n");
    const mine = marks.filter((m) => m.editor === editor);
    const html = lines.map((line, i) => {
      const mark = mine.find((m) => m.line === i + 1);
      if (!mark) return escape(line);
      const start = Math.max(0, mark.column - 1);
      const end = Math.min(line.length, start + Math.max(1, mark.length));
      return escape(line.slice(0, start)) +
        `<mark class="${mark.kind}" data-line="${mark.line}">${escape(line.slice(start, end) || " ")}</mark>` +
        escape(line.slice(end));
    }).join("\n");
    const backdrop = $(editor).previousElementSibling;
    backdrop.innerHTML = html + "\n";
    backdrop.scrollTop = $(editor).scrollTop;
    backdrop.scrollLeft = $(editor).scrollLeft;
  }
}

function render(output) {
  const verdict = $("verdict");
  const list = $("findings");
  list.replaceChildren();
  const marks = [];
  const item = (kind, path, message, where) => {
    const li = document.createElement("li");
    li.className = kind;
    li.innerHTML = `<span class="severity">${kind}</span>` +
      (path ? `<code>${escape(path)}</code>: ` : "") + escape(message) +
      (where ? ` <small>(${where.editor}, line ${where.line})</small>` : "");
    li.dataset.path = path;
    list.append(li);
  };
  if (output.problems.length) {
    verdict.className = "verdict";
    verdict.textContent = "Cannot read the input";
    for (const p of output.problems) {
      item("problem", "", p.message, p.line ? { editor: p.editor, line: p.line } : null);
      if (p.line) marks.push({ editor: p.editor, line: p.line, column: p.column, length: 1, kind: "problem" });
    }
  } else if (output.settingsRefused) {
    verdict.className = "verdict denied";
    verdict.textContent = "Settings refused";
    item("violation", "", output.settingsRefused, null);
  } else {
    const v = output.verdict;
    const warned = v.findings.some((f) => f.severity === "warning");
    verdict.className = "verdict " + (v.allowed ? (warned ? "warned" : "allowed") : "denied");
    verdict.textContent = v.allowed ? (warned ? "Allowed, with warnings" : "Allowed") : `Denied (${v.code})`;
    for (const f of v.findings) {
      const where = f.at ? { editor: f.editor, line: f.at.place.line } : null;
      item(f.severity, f.path, f.message, where);
      if (f.at) marks.push({ editor: f.editor, ...f.at.place, kind: f.severity });
    }
  }
  paint(marks);
}

function run() {
  showEditors();
  const input = { policy: $("policy").value, operation: $("operation").value };
  for (const editor of EDITORS) input[editor] = $(editor).value;
  render(JSON.parse(evaluate(JSON.stringify(input))));
  document.body.dataset.evaluations = String(Number(document.body.dataset.evaluations || 0) + 1);
}

function later() {
  clearTimeout(timer);
  timer = setTimeout(run, 200);
}

async function main() {
  await init();
  cases = await (await fetch("cases.json")).json();
  for (const name of JSON.parse(policies())) $("policy").add(new Option(name, name));
  $("policy").addEventListener("change", () => { fillCases(); later(); });
  $("case").addEventListener("change", (e) => loadCase(e.target.value));
  $("operation").addEventListener("change", run);
  for (const editor of EDITORS) {
    $(editor).addEventListener("input", later);
    $(editor).addEventListener("scroll", () => paint([]) || later());
  }
  fillCases();
  const first = casesOf($("policy").value)[0];
  if (first) { $("case").value = first.file; loadCase(first.file); } else run();
  document.body.dataset.ready = "true";
}

main().catch((e) => { $("verdict").textContent = "The playground failed to start: " + e; });
