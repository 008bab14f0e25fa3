// The Scriptorium console: search, read, and see why, over this daemon's HTTP/JSON API.
// No framework and no build step; every view is addressed by its URL, so links can be shared:
//   /?q=…&kinds=docs&mode=…&surface=…&explain=true   a search
//   /?location=…[&mode=full][&cursor=…]               a block or a page, part by part
//   /?view=sources                                    the sources, refreshed every second
"use strict";

const $ = (id) => document.getElementById(id);
const PART_CHARS = 8000;
let sourcesTimer = null;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function headers() {
  const token = sessionStorage.getItem("scriptorium-token");
  const out = { "content-type": "application/json" };
  if (token) out.authorization = `Bearer ${token}`;
  return out;
}

async function call(rpc, body) {
  const reply = await fetch(`/v1/${rpc}`, {
    method: "POST", headers: headers(), body: JSON.stringify(body),
  });
  const data = await reply.json().catch(() => ({ status: "UNKNOWN", message: reply.statusText }));
  if (!reply.ok) {
    const why = data.resolution && data.resolution.candidates && data.resolution.candidates.length
      ? ` (candidates: ${data.resolution.candidates.join(", ")})` : "";
    throw new Error(`${data.status}: ${data.message}${why}`);
  }
  return data;
}

function link(params, text, cls) {
  const href = `/?${new URLSearchParams(params)}`;
  const a = el("a", { href, text });
  if (cls) a.className = cls;
  return a;
}

function setStatus(node, text, error = false) {
  node.textContent = text;
  node.classList.toggle("error", error);
}

function show(view) {
  for (const name of ["search", "content", "sources"]) $(`${name}-view`).hidden = name !== view;
  for (const a of document.querySelectorAll("nav a[data-view]")) {
    if (a.dataset.view === view && !a.classList.contains("brand")) {
      a.setAttribute("aria-current", "page");
    } else a.removeAttribute("aria-current");
  }
  if (sourcesTimer && view !== "sources") { clearTimeout(sourcesTimer); sourcesTimer = null; }
}

// -- search ------------------------------------------------------------------------------------

function fillForm(params) {
  $("q").value = params.get("q") || "";
  const kinds = (params.get("kinds") || "").split(",");
  for (const box of document.querySelectorAll('input[name="kinds"]')) {
    box.checked = kinds.includes(box.value);
  }
  $("mode").value = params.get("mode") || "";
  $("surface").value = params.get("surface") || "";
  $("explain").checked = params.get("explain") === "true";
}

function formParams() {
  const params = new URLSearchParams();
  params.set("q", $("q").value);
  const kinds = [...document.querySelectorAll('input[name="kinds"]:checked')].map((b) => b.value);
  if (kinds.length) params.set("kinds", kinds.join(","));
  if ($("mode").value) params.set("mode", $("mode").value);
  if ($("surface").value.trim()) params.set("surface", $("surface").value.trim());
  if ($("explain").checked) params.set("explain", "true");
  return params;
}

function stagesOf(result, stages) {
  const list = el("ul", { class: "stages", "aria-label": "Stages" });
  for (const stage of stages) {
    const drop = (stage.drops || []).find((d) => d.refId === result.refId);
    const item = el("li", { class: drop ? "dropped" : "kept",
      text: drop ? `${stage.stage}: dropped (${drop.why})` : `${stage.stage}: kept` });
    list.append(item);
  }
  return list;
}

function renderResult(result, stages, query) {
  const item = el("li", { class: "result" });
  const params = { location: result.location };
  if (query) params.q = query;
  const title = link(params, result.title || result.location, "result-title");
  item.append(el("div", {}, title));
  if (result.sectionPath && result.sectionPath.length) {
    item.append(el("div", { class: "crumbs", text: result.sectionPath.join(" › ") }));
  }
  item.append(el("div", { class: "meta",
    text: `${result.location} · ${result.source} · ${result.kind.replace("REF_KIND_", "").toLowerCase()}` }));
  item.append(el("p", { class: "preview", text: result.preview || result.snippet || "" }));
  item.append(el("div", { class: "score", text: `score ${Number(result.score).toFixed(3)}` }));
  if (result.reasons && result.reasons.length) {
    const reasons = el("ul", { class: "reasons", "aria-label": "Reasons" });
    for (const r of result.reasons) {
      reasons.append(el("li", { text: `${r.name} ×${Number(r.weight).toFixed(2)}${r.detail ? ` — ${r.detail}` : ""}` }));
    }
    item.append(reasons);
  }
  if (stages.length) item.append(stagesOf(result, stages));
  return item;
}

async function runSearch(params) {
  show("search");
  fillForm(params);
  const results = $("results");
  results.replaceChildren();
  $("drops").hidden = true;
  const query = params.get("q");
  if (!query) { setStatus($("search-status"), ""); return; }
  document.title = `${query} · Scriptorium`;
  setStatus($("search-status"), "Searching…");
  const body = { query, explain: params.get("explain") === "true" };
  const kinds = (params.get("kinds") || "").split(",").filter(Boolean);
  if (kinds.length) body.kinds = kinds.map((k) => `CORPUS_${k.toUpperCase()}`);
  if (params.get("mode")) body.mode = params.get("mode");
  if (params.get("surface")) body.surface = params.get("surface");
  try {
    const reply = await call("Search", body);
    const stages = reply.stages || [];
    for (const result of reply.results) results.append(renderResult(result, stages, query));
    let text = `${reply.results.length} results`;
    if (reply.abstained) text += ` — abstained (${reply.abstainReason.replace("ABSTAIN_REASON_", "").toLowerCase()})`;
    setStatus($("search-status"), text);
    const drops = stages.flatMap((s) => (s.drops || []).map((d) => ({ stage: s.stage, ...d })));
    if (drops.length) {
      $("drop-list").replaceChildren(...drops.map((d) =>
        el("li", {}, `${d.stage}: `, link({ location: d.location, q: query }, d.location), ` — ${d.why}`)));
      $("drops").hidden = false;
    }
  } catch (error) {
    setStatus($("search-status"), error.message, true);
  }
}

// -- content -----------------------------------------------------------------------------------

function renderLines(reply) {
  const pre = $("content");
  pre.replaceChildren();
  const ranges = reply.ranges || [];
  let number = reply.startLine || 1; // a part's own first line
  for (const line of reply.content.split("\n")) {
    const range = ranges.find((r) => number >= r.startLine && number <= r.endLine);
    const row = el(range ? "mark" : "span", range ? { class: "line", title: range.reason } : { class: "line" },
      el("span", { class: "no", "aria-hidden": "true", text: String(number) }), line);
    pre.append(row);
    number += 1;
  }
}

async function runContent(params) {
  show("content");
  const location = params.get("location");
  const query = params.get("q");
  $("back").href = query ? `/?${new URLSearchParams({ q: query })}` : "/";
  $("content-title").textContent = location;
  document.title = `${location} · Scriptorium`;
  $("content").replaceChildren();
  $("parts").replaceChildren();
  $("parts-after").replaceChildren();
  setStatus($("content-status"), "Loading…");
  const mode = params.get("mode") || "multi_range";
  const body = { location, mode: `CONTENT_MODE_${mode.toUpperCase()}`, maxChars: PART_CHARS };
  if (params.get("cursor")) body.cursor = params.get("cursor");
  try {
    const reply = await call("GetContent", body);
    $("content-title").textContent = reply.title || reply.location;
    const crumbs = (reply.sectionPath || []).join(" › ");
    $("content-meta").textContent =
      `${reply.location} · ${reply.source} · lines ${reply.startLine}–${reply.endLine}` +
      (crumbs ? ` · ${crumbs}` : "");
    renderLines(reply);
    const nav = [];
    const keep = query ? { q: query } : {};
    const page = reply.location.split("#")[0];
    if (page !== reply.location) nav.push(link({ location: page, ...keep }, "Whole page"));
    const part = reply.part;
    if (part && part.count > 1) nav.push(el("span", { text: `Part ${part.number} of ${part.count}` }));
    $("parts").replaceChildren(...nav);
    if (reply.nextCursor) {
      const next = { location, mode, cursor: reply.nextCursor, ...keep };
      $("parts-after").replaceChildren(link(next, "Next part →", "next-part"));
    }
    setStatus($("content-status"), reply.revisionSkew ? "The page changed since it was found." : "");
  } catch (error) {
    setStatus($("content-status"), error.message, true);
  }
}

// -- sources -----------------------------------------------------------------------------------

function ago(seconds) {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

async function refreshSources() {
  try {
    const reply = await call("ListSources", {});
    const rows = reply.sources.map((s) => {
      const total = Number(s.buildFilesTotal || 0);
      const done = Number(s.buildFilesDone || 0);
      const build = total > 0
        ? el("progress", { max: String(total), value: String(done), "aria-label": `${s.name} build: ${done} of ${total} files` })
        : document.createTextNode("—");
      const buildCell = el("td", {}, build, total > 0 ? ` ${done}/${total}` : "");
      const vectorsTotal = Number(s.vectorsTotal || 0);
      const vectorsDone = Number(s.vectorsDone || 0);
      const vectorState = s.vectorsState || "off";
      const vectorsCell = vectorState === "encoding"
        ? el("td", {}, el("progress", { max: String(vectorsTotal), value: String(vectorsDone), "aria-label": `${s.name} vectors: ${vectorsDone} of ${vectorsTotal} blocks` }), ` ${vectorsDone}/${vectorsTotal}`)
        : el("td", { text: vectorState, title: s.vectorsDetail || "" });
      const state = s.state.replace("SOURCE_STATE_", "").toLowerCase();
      return el("tr", { "data-source": s.name },
        el("th", { scope: "row", text: s.name }), el("td", { text: s.kind }),
        el("td", { class: `state-${s.state}`, text: state + (s.lastError ? `: ${s.lastError}` : "") }),
        el("td", { class: "num", text: s.documentCount }), el("td", { class: "num", text: s.blockCount }),
        el("td", { class: "num", text: s.generation }),
        el("td", { class: "num", text: ago(Number(s.stalenessSeconds || 0)) }), buildCell, vectorsCell);
    });
    $("sources").tBodies[0].replaceChildren(...rows);
    setStatus($("sources-meta"), `server ${reply.serverVersion} · generation ${reply.generation}`);
  } catch (error) {
    setStatus($("sources-meta"), error.message, true);
  }
  if (!$("sources-view").hidden) sourcesTimer = setTimeout(refreshSources, 1000);
}

function runSources() {
  show("sources");
  document.title = "Sources · Scriptorium";
  if (!sourcesTimer) refreshSources();
}

// -- routing -----------------------------------------------------------------------------------

function route() {
  const params = new URLSearchParams(location.search);
  if (params.get("view") === "sources") runSources();
  else if (params.get("location")) runContent(params);
  else runSearch(params);
}

function go(href) {
  history.pushState(null, "", href);
  route();
  $("main").focus();
}

async function health() {
  try {
    const reply = await fetch("/readyz");
    const data = await reply.json();
    $("health").textContent = data.status === "SERVING" ? "serving" : "not serving";
    $("health").className = `health ${data.status === "SERVING" ? "ok" : "bad"}`;
  } catch {
    $("health").textContent = "unreachable";
    $("health").className = "health bad";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    go(`/?${formParams()}`);
  });
  document.addEventListener("click", (event) => {
    const a = event.target.closest("a[href^='/']");
    if (!a || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(a.getAttribute("href"));
  });
  $("token").value = sessionStorage.getItem("scriptorium-token") || "";
  $("token").addEventListener("change", () => {
    sessionStorage.setItem("scriptorium-token", $("token").value.trim());
    route();
  });
  window.addEventListener("popstate", route);
  health();
  route();
});
