// The demo page: post a question, read the server-sent events as they arrive, draw each one.
// Every value from the server goes into the page as text (textContent), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const timings = (window.demoTimings = {});
let lastErrorStep = null;
// The conversation so far: each question and the answer it got, sent with the next question so a
// follow-up ("and how many of those ...") keeps what the earlier answer found.
let history = [];
let asking = "";

function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.text !== undefined && options.text !== null) node.textContent = String(options.text);
  if (options.cls) node.className = options.cls;
  for (const [key, value] of Object.entries(options.attrs || {})) node.setAttribute(key, value);
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

function showMessage(text, kind = "error") {
  const box = $("message");
  box.textContent = text;
  box.className = kind === "info" ? "info" : "";
  box.hidden = !text;
}

async function loadOptions() {
  const options = await (await fetch("/api/options")).json();
  for (const useCase of options.use_cases) {
    const label = `${useCase.name}: ${useCase.title}` + (useCase.loaded ? "" : " (not loaded)");
    $("use-case").appendChild(el("option", { text: label, attrs: { value: useCase.name } }));
  }
  if (options.use_case) $("use-case").value = options.use_case;
  for (const name of options.collections) $("collection-names").appendChild(el("option", { attrs: { value: name } }));
  for (const name of [options.strategy, ...options.strategies]) {
    $("strategy-names").appendChild(el("option", { attrs: { value: name } }));
  }
  $("strategy").value = options.strategy;
  for (const name of options.operations) $("operations").appendChild(el("option", { text: name, attrs: { value: name } }));
  $("model").value = options.model;
  $("base-url").value = options.base_url;
}

function choice() {
  const own = $("source").value === "collections";
  return {
    question: $("question").value,
    use_case: own ? null : $("use-case").value,
    collections: own ? $("collections").value : null,
    model: $("model").value || null,
    base_url: $("base-url").value || null,
    strategy: $("strategy").value || undefined, // blank: the server's default, every door's
    operations: $("operations").value,
    history,
  };
}

function cost(event) {
  const parts = [];
  if (event.latency_s !== undefined) parts.push(`query ${event.latency_s.toFixed(2)} s`);
  if (event.model) {
    parts.push(`model ${event.model.latency_s.toFixed(2)} s`);
    parts.push(`${event.model.prompt_tokens}+${event.model.completion_tokens} tokens`);
  }
  return el("span", { cls: "cost", text: parts.join(" · ") });
}

function table(result) {
  const head = el("tr", {}, result.columns.map((c) => el("th", { text: c })));
  const rows = result.rows.map((row, index) => {
    const ids = result.row_ids[index] || [];
    const tr = el("tr", {}, row.map((v) => el("td", { text: v === null ? "" : v, cls: typeof v === "number" ? "num" : "" })));
    if (ids.length) tr.dataset.ids = ids.join(" ");
    return tr;
  });
  const shown = result.rows.length;
  const kind = { groups: "groups", aggregation: "aggregation", objects: "objects" }[result.kind];
  const more = result.total !== null && result.total !== undefined && result.total > shown ? ` (${shown} shown)` : "";
  const title = result.kind === "aggregation"
    ? `${result.collection}: aggregation over ${result.total ?? "?"} objects`
    : `${result.collection}: ${result.total ?? shown}${result.truncated ? "+" : ""} ${kind}${more}`;
  return el("div", {}, [
    el("div", { cls: "label", text: title }),
    el("table", { cls: `result ${result.kind}` }, [el("thead", {}, [head]), el("tbody", {}, rows)]),
    ...result.notes.map((note) => el("div", { cls: "dim", text: note })),
  ]);
}

function drawCall(event) {
  timings.firstStep = timings.firstStep || performance.now();
  const badges = [el("span", { cls: "badge", text: event.tool })];
  if (event.error) badges.push(el("span", { cls: "badge bad", text: `error: ${event.error.code}` }));
  else badges.push(el("span", { cls: "badge ok", text: "ran" }));
  if (lastErrorStep !== null) badges.push(el("span", { cls: "badge fix", text: `correction of step ${lastErrorStep}` }));
  if (event.recovered_from_text) badges.push(el("span", { cls: "badge fix", text: "recovered from text" }));
  lastErrorStep = event.error ? event.step : null;
  const left = el("div", {}, [
    el("div", { cls: "label", text: "the model's call" }),
    el("pre", { cls: "arguments", text: typeof event.arguments === "string" ? event.arguments : JSON.stringify(event.arguments, null, 1) }),
    event.error ? el("div", { cls: "error", text: `${event.error.code}: ${event.error.message}` }) : null,
    event.weaviate_calls.length ? el("div", { cls: "label", text: "weaviate-client calls" }) : null,
    event.weaviate_calls.length ? el("pre", { text: event.weaviate_calls.join("\n") }) : null,
    event.result ? table(event.result) : null,
  ]);
  const right = event.program
    ? el("div", {}, [el("div", { cls: "label", text: "the query as code (weaviate-client v4)" }), el("pre", { cls: "code", text: event.program })])
    : null;
  const card = el("div", { cls: `card step${event.error ? " failed" : ""}`, attrs: { id: `step-${event.step}` } }, [
    el("h3", {}, [el("span", { text: `step ${event.step}` }), ...badges, cost(event)]),
    el("div", { cls: right ? "split" : "" }, [left, right]),
  ]);
  $("trace").appendChild(card);
}

function drawTurn(event) {
  if (event.kind === "call") return; // its time and tokens are shown on the step it made
  const what = { decision: "decided", commit: "committed the answer", answer: "answered" }[event.kind] || event.kind;
  const text = `model ${what} · ${event.latency_s.toFixed(2)} s · ${event.prompt_tokens}+${event.completion_tokens} tokens`;
  const line = el("div", { cls: `turn turn-${event.kind}`, text });
  if (event.content && event.kind !== "answer") line.appendChild(el("pre", { text: event.content }));
  $("trace").appendChild(line);
}

function drawAnswer(event) {
  timings.answer = performance.now();
  const box = $("answer");
  box.replaceChildren();
  box.className = "card answer";
  box.hidden = false;
  const shown = event.final_answer || `(no answer: ${event.outcome}${event.error ? ": " + event.error : ""})`;
  box.appendChild(el("h3", {}, [el("span", { text: "answer" }), el("span", { cls: "badge", text: event.outcome }),
    el("span", { cls: "cost", text: `${event.total_time.toFixed(2)} s · ${event.prompt_tokens}+${event.completion_tokens} tokens · ${event.steps} model turns · ${event.corrections} corrections` })]));
  box.appendChild(el("div", { cls: "text final-answer", text: shown }));
  if (event.committed) box.appendChild(el("div", { cls: "committed" }, [el("b", { text: "committed: " }), el("span", { text: event.committed })]));
  if (event.commit_error) box.appendChild(el("div", { cls: "error", text: `no committed answer: ${event.commit_error}` }));
  if (event.is_partial_answer) box.appendChild(el("div", { cls: "error", text: `partial answer: ${event.missing_information.join("; ")}` }));
  box.closest(".qa").querySelector("details.steps").open = false; // answered: its steps fold away
  history.push({ question: asking, answer: event.final_answer || "" });
  if (event.sources.length) {
    const useCase = choice().use_case || "";
    const links = event.sources.map((s) => {
      const href = `/api/object?collection=${encodeURIComponent(s.collection)}&uuid=${encodeURIComponent(s.object_id)}&use_case=${encodeURIComponent(useCase)}`;
      const link = el("a", { text: `${s.collection} ${s.object_id.slice(0, 8)}`, attrs: { href, target: "_blank", title: s.object_id } });
      link.addEventListener("mouseenter", () => markSource(s.object_id, true));
      link.addEventListener("mouseleave", () => markSource(s.object_id, false));
      return el("li", {}, [link]);
    });
    box.appendChild(el("div", { cls: "label", text: `sources (${event.sources.length})` }));
    box.appendChild(el("ul", { cls: "sources" }, links));
  }
}

function markSource(uuid, on) {
  for (const row of document.querySelectorAll("tr[data-ids]")) {
    if (row.dataset.ids.split(" ").includes(uuid)) row.classList.toggle("source", on);
  }
}

function handle(type, event) {
  if (type === "started") {
    $("run-header").textContent = `${event.question} · model ${event.model} · strategy ${event.strategy} · tool ${event.tools} · over ${event.collections.join(", ")}`;
  } else if (type === "turn") drawTurn(event);
  else if (type === "call") drawCall(event);
  else if (type === "answer") drawAnswer(event);
  else if (type === "error") showMessage(`${event.kind}: ${event.message}`);
}

async function ask(submitted) {
  submitted.preventDefault();
  timings.asked = performance.now();
  delete timings.firstStep;
  delete timings.answer;
  let response;
  try {
    response = await fetch("/api/ask", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(choice()) });
  } catch (error) {
    showMessage(`the demo server did not answer: ${error}`);
    return;
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    showMessage(body.error || `the server answered ${response.status}`);
    return; // a question already running keeps its trace on the page
  }
  showMessage("");
  lastErrorStep = null;
  asking = $("question").value.trim();
  startTurn();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const type = /^event: (.*)$/m.exec(chunk);
      const data = /^data: (.*)$/m.exec(chunk);
      if (type && data) handle(type[1], JSON.parse(data[1]));
    }
  }
  timings.done = performance.now();
}

// A new question: the last turn keeps its elements but not their ids; the new one takes them.
function startTurn() {
  for (const id of ["run-header", "trace", "answer"]) $(id)?.removeAttribute("id");
  const steps = el("details", { cls: "steps", attrs: { open: "" } }, [el("summary", { text: "steps" }), el("div", { attrs: { id: "trace" } })]);
  const turn = el("article", { cls: "qa" }, [
    el("div", { cls: "run-header", attrs: { id: "run-header" }, text: "asking…" }),
    steps,
    el("div", { attrs: { id: "answer", hidden: "" } }),
  ]);
  $("conversation").appendChild(turn);
}

$("new-conversation").addEventListener("click", () => {
  history = [];
  $("conversation").replaceChildren();
  showMessage("");
});
$("source").addEventListener("change", () => {
  const own = $("source").value === "collections";
  $("use-case-label").hidden = own;
  $("collections-label").hidden = !own;
});
$("ask-form").addEventListener("submit", ask);
loadOptions().catch((error) => showMessage(`could not read the options: ${error}`));
