// The page of a finished run: the report's own view of each question (evaluation.report.html.run_view),
// drawn as text (textContent), filtered on the page.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.text !== undefined && options.text !== null) node.textContent = String(options.text);
  if (options.cls) node.className = options.cls;
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

function block([title, text]) {
  return el("div", {}, [el("div", { cls: "label", text: title }), el("pre", { text })]);
}

function question(q) {
  const failed = q.reasons.length > 0;
  const badges = [el("span", { cls: `badge ${failed ? "bad" : "ok"}`, text: failed ? "failed" : "passed" }),
    el("span", { cls: "badge", text: q.use_case }), el("span", { cls: "badge", text: q.trajectory })];
  for (const reason of q.reasons) badges.push(el("span", { cls: "badge fix reason", text: reason }));
  const summary = el("summary", {}, [el("h3", {}, [el("span", { text: q.id }), ...badges]), el("span", { text: q.preview })]);
  const rows = [];
  for (let i = 0; i < q.blocks.length; i += 2) rows.push(el("div", { cls: "split" }, q.blocks.slice(i, i + 2).map(block)));
  const body = el("div", {}, [
    el("div", { cls: "question-text", text: q.question }),
    el("div", { cls: "dim", text: q.score_line }),
    q.error ? el("div", { cls: "error", text: q.error }) : null,
    ...rows,
    q.calls ? block(["Every call the model made", q.calls]) : null,
    q.final_answer ? block(["Final answer", q.final_answer]) : null,
    q.committed_answer ? block(["Committed answer", q.committed_answer]) : null,
  ]);
  const card = el("details", { cls: `card question ${failed ? "failed" : "passed"}` }, [summary, body]);
  card.dataset.text = [q.id, q.question, ...q.reasons].join(" ").toLowerCase();
  return card;
}

function filter() {
  const which = $("which").value;
  const words = $("find").value.toLowerCase().trim();
  for (const card of document.querySelectorAll(".question")) {
    const kind = which === "all" || card.classList.contains(which);
    card.hidden = !(kind && (!words || card.dataset.text.includes(words)));
  }
}

async function open(submitted) {
  if (submitted) submitted.preventDefault();
  const path = $("path").value.trim();
  if (!path) return;
  history.replaceState(null, "", `/run?path=${encodeURIComponent(path)}`);
  const response = await fetch(`/api/run?path=${encodeURIComponent(path)}`);
  const body = await response.json();
  $("questions").replaceChildren();
  if (!response.ok) {
    $("message").textContent = body.error || `the server answered ${response.status}`;
    $("message").hidden = false;
    $("run-meta").textContent = "";
    return;
  }
  $("message").hidden = true;
  const failed = body.questions.filter((q) => q.reasons.length).length;
  $("run-meta").textContent = `${body.name}: ${body.questions.length} questions, ${failed} failed · ` +
    body.meta.map(([key, value]) => `${key}: ${value}`).join(" · ");
  for (const q of body.questions) $("questions").appendChild(question(q));
  filter();
}

$("run-form").addEventListener("submit", open);
$("which").addEventListener("change", filter);
$("find").addEventListener("input", filter);
const given = new URLSearchParams(location.search).get("path");
if (given) {
  $("path").value = given;
  open();
}
