// The Scriptorium console: search, read, and see why, over this daemon's HTTP/JSON API.
// No framework and no build step; every view is addressed by its URL, so links can be shared:
//   /?q=…&kinds=docs&mode=…&surface=…&explain=true   a search
//   /?location=…[&mode=full][&cursor=…]               a block or a page, part by part
//                                                     (a definition, as `scriptorium get` cuts it)
//   /?view=sources                                    the sources, refreshed every second
"use strict";

const $ = (id) => document.getElementById(id);
const PART_CHARS = 8000;
let sourcesTimer = null;
let preferSource = false; // the reader asked for the Markdown source rather than the rendering

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
    const error = new Error(`${data.status}: ${data.message}`);
    error.candidates = (data.resolution && data.resolution.candidates) || [];
    throw error;
  }
  return data;
}

// -- Markdown ----------------------------------------------------------------------------------
// Rendered by marked and sanitised by DOMPurify, both served by this daemon (vendored from npm
// at the versions package.json pins), so the page still fetches nothing from elsewhere: images
// become their alt text, embedded media and forms go, and links to other pages of the docs
// open them here.

const FORBID_TAGS = ["img", "picture", "source", "video", "audio", "iframe", "object", "embed",
  "form", "input", "button", "textarea", "select", "style", "link", "meta", "svg", "math"];
let markedReady = false;

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function resolvePage(page, href) {
  const [path, fragment] = href.split("#");
  const parts = path.startsWith("/") ? [] : page.split("/").slice(0, -1);
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part && part !== ".") parts.push(part);
  }
  const target = parts.join("/").replace(/\.md$/, "").replace(/\/index$/, "");
  if (!target) return fragment ? `${page}#${fragment}` : page;
  return fragment ? `${target}#${fragment}` : target;
}

function consoleLinks(root, page) {
  for (const a of root.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) {
      a.setAttribute("target", "_blank");
      a.setAttribute("rel", "noopener noreferrer");
    } else {
      a.setAttribute("href", `/?${new URLSearchParams({ location: resolvePage(page, href) })}`);
    }
  }
}

function markdown(text, page, inline = false) {
  if (!window.marked || !window.DOMPurify) return document.createTextNode(text);
  if (!markedReady) {
    marked.use({ gfm: true, renderer: {
      image: (token) => escapeHtml(token.text || ""),
      // Event-handler attributes go before the browser parses the HTML at all: blocked by the
      // page's policy, they would still be reported. DOMPurify does the real cleaning.
      html: (token) => token.text.replace(/\son[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, ""),
    } });
    markedReady = true;
  }
  // Heading ids written as attribute lists (`## Title { #title }`) are anchors, not text; a
  // preview shows a heading's words without its marks.
  text = text.replace(/[ \t]*\{[ \t]*#[\w-]+[ \t]*\}[ \t]*$/gm, "");
  if (inline) text = text.replace(/\{[ \t]*#[\w-]+[ \t]*\}/g, "").replace(/(^|\s)#{1,6}\s+/g, "$1");
  const html = inline ? marked.parseInline(text) : marked.parse(text);
  // Parsed into a template, whose content is inert (nothing in it loads or runs, not even
  // while it is cleaned), and cleaned there in place before it joins the page.
  const template = document.createElement("template");
  template.innerHTML = `<div>${html}</div>`;
  const root = template.content.firstElementChild;
  DOMPurify.sanitize(root, { IN_PLACE: true, FORBID_TAGS, FORBID_ATTR: ["style", "srcset"] });
  consoleLinks(root, page);
  const fragment = document.createDocumentFragment();
  fragment.append(...root.childNodes);
  return fragment;
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

// Every stage a result went through, folded under one line: a result on the page was kept by
// them all, which says little; the line opens onto the list.
function stagesOf(result, stages) {
  const list = el("ul", { class: "stages", "aria-label": "Stages" });
  let dropped = null;
  for (const stage of stages) {
    const drop = (stage.drops || []).find((d) => d.refId === result.refId);
    if (drop && !dropped) dropped = stage.stage;
    const item = el("li", { class: drop ? "dropped" : "kept",
      text: drop ? `${stage.stage}: dropped (${drop.why})` : `${stage.stage}: kept` });
    list.append(item);
  }
  const summary = dropped ? `Dropped at ${dropped}` : `Kept by all ${stages.length} stages`;
  return el("details", { class: "stages-fold" }, el("summary", { text: summary }), list);
}

// What decided the rank: the reasons that weigh most and the scores of the stages that set it.
function decidedBy(result) {
  const reasons = [...(result.reasons || [])]
    .sort((a, b) => Math.abs(Number(b.weight)) - Math.abs(Number(a.weight)))
    .slice(0, 3)
    .map((r) => r.name);
  const scores = Object.entries(result.scores || {})
    .filter(([, value]) => Number(value))
    .map(([name, value]) => `${name} ${Number(value).toFixed(3)}`);
  let text = `Rank decided by ${reasons.join(", ") || "the score"}`;
  if (scores.length) text += ` (${scores.join(" · ")})`;
  return el("div", { class: "decided", text });
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
  const page = result.location.split("#")[0];
  const preview = result.preview || result.snippet || "";
  const isDoc = result.kind === "REF_KIND_DOC";
  item.append(el("p", { class: "preview" }, isDoc ? markdown(preview, page, true) : preview));
  item.append(el("div", { class: "score", text: `score ${Number(result.score).toFixed(3)}` }));
  if (result.reasons && result.reasons.length) {
    const reasons = el("ul", { class: "reasons", "aria-label": "Reasons" });
    for (const r of result.reasons) {
      reasons.append(el("li", { text: `${r.name} ×${Number(r.weight).toFixed(2)}${r.detail ? ` — ${r.detail}` : ""}` }));
    }
    item.append(reasons);
  }
  if (stages.length) item.append(decidedBy(result), stagesOf(result, stages));
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

function renderLines(reply, ranges) {
  const pre = $("content");
  pre.replaceChildren();
  let number = reply.startLine || 1; // a part's own first line
  const lines = reply.content.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop(); // the last line's end
  for (const line of lines) {
    const range = ranges.find((r) => number >= r.startLine && number <= r.endLine);
    const row = el(range ? "mark" : "span", range ? { class: "line", title: range.reason } : { class: "line" },
      el("span", { class: "no", "aria-hidden": "true", text: String(number) }),
      el("span", { class: "text", text: line }));
    pre.append(row);
    number += 1;
  }
}

function showSource(source) {
  $("rendered").hidden = source;
  $("content").hidden = !source;
  $("show-source").setAttribute("aria-pressed", String(source));
}

async function runContent(params) {
  show("content");
  const location = params.get("location");
  const query = params.get("q");
  // Back to the results there are, else to an empty search.
  $("back").href = query ? `/?${new URLSearchParams({ q: query })}` : "/";
  $("back").textContent = query ? "← Back to the results" : "← Search";
  $("content-title").textContent = location;
  document.title = `${location} · Scriptorium`;
  $("content").replaceChildren();
  $("rendered").replaceChildren();
  $("content").hidden = true;
  $("rendered").hidden = true;
  $("show-source").hidden = true;
  $("parts").replaceChildren();
  $("parts-after").replaceChildren();
  setStatus($("content-status"), "Loading…");
  const mode = params.get("mode") || "multi_range";
  const body = { location, mode: `CONTENT_MODE_${mode.toUpperCase()}`, maxChars: PART_CHARS };
  if (params.get("cursor")) body.cursor = params.get("cursor");
  try {
    let reply = await call("GetContent", body);
    let ranges = reply.ranges || [];
    const code = reply.kind === "REF_KIND_CODE";
    if (code && location.includes("#") && !params.get("mode") && !reply.location.includes("#")) {
      // A definition (path#name): the highlighted ranges cover the whole file and every def
      // in it; what was asked for is that definition, as `scriptorium get` cuts it.
      reply = await call("GetContent", { location, maxChars: PART_CHARS });
      ranges = [{ startLine: reply.startLine, endLine: reply.endLine, reason: "definition" }];
    }
    $("content-title").textContent = reply.title || reply.location;
    const crumbs = (reply.sectionPath || []).join(" › ");
    $("content-meta").textContent =
      `${reply.location} · ${reply.source} · lines ${reply.startLine}–${reply.endLine}` +
      (crumbs ? ` · ${crumbs}` : "");
    renderLines(reply, ranges);
    const page = reply.location.split("#")[0];
    if (reply.kind === "REF_KIND_DOC") {
      $("rendered").replaceChildren(markdown(reply.content, page));
      $("show-source").hidden = false;
      showSource(preferSource);
    } else {
      $("content").hidden = false;
    }
    const nav = [];
    const keep = query ? { q: query } : {};
    if (page !== reply.location) nav.push(link({ location: page, ...keep }, code ? "Whole file" : "Whole page"));
    const part = reply.part;
    if (part && part.count > 1) nav.push(el("span", { text: `Part ${part.number} of ${part.count}` }));
    $("parts").replaceChildren(...nav);
    if (reply.nextCursor) {
      const next = { location, mode, cursor: reply.nextCursor, ...keep };
      $("parts-after").replaceChildren(link(next, "Next part →", "next-part"));
    }
    setStatus($("content-status"), reply.revisionSkew ? "The page changed since it was found." : "");
  } catch (error) {
    // Nothing to show: no empty box, but the message and the pages it may have meant.
    setStatus($("content-status"), error.message, true);
    if (error.candidates && error.candidates.length) {
      const keep = query ? { q: query } : {};
      $("parts").replaceChildren(el("span", { text: "Did you mean" }),
        ...error.candidates.map((c) => link({ location: c, ...keep }, c, "candidate")));
    }
  }
}

// -- sources -----------------------------------------------------------------------------------

function ago(seconds) {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

function pathOf(url) {
  try { return new URL(url).pathname; } catch { return url; }
}

// What the last crawl of a fetched site did: the counts, and each page that did not answer
// (its status or error) in a list a reader can open; "—" for sources that are not crawled.
function crawlSummary(crawl) {
  if (!crawl || !crawl.state) return el("td", { text: "—" });
  const counts = [`${crawl.state}`, `${Number(crawl.pagesFetched || 0)} fetched`];
  if (Number(crawl.pagesUnchanged || 0)) counts.push(`${crawl.pagesUnchanged} unchanged`);
  const skipped = (crawl.skipped || []).reduce((n, s) => n + Number(s.pages || 0), 0);
  if (skipped) counts.push(`${skipped} skipped`);
  if (Number(crawl.pagesFailed || 0)) counts.push(`${crawl.pagesFailed} failed`);
  const cell = el("td", { class: `crawl-${crawl.state}`, title: crawl.detail || "", "data-crawl": crawl.state },
    counts.join(" · "));
  const failures = crawl.failures || [];
  if (failures.length) {
    const list = el("ul", { class: "crawl-failures" }, ...failures.map((f) =>
      el("li", { title: f.url, text: `${pathOf(f.url)}: ${f.error}` })));
    cell.append(el("details", {}, el("summary", { text: "failed pages" }), list));
  }
  return cell;
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
      const crawlCell = crawlSummary(s.crawl);
      // A partial crawl's sentence is the source's last error too; the Crawl column shows it.
      const shownError = s.crawl && s.lastError === s.crawl.detail ? "" : s.lastError;
      const state = s.state.replace("SOURCE_STATE_", "").toLowerCase();
      return el("tr", { "data-source": s.name },
        el("th", { scope: "row", text: s.name }), el("td", { text: s.kind }),
        el("td", { class: `state-${s.state}`, text: state + (shownError ? `: ${shownError}` : "") }),
        el("td", { class: "num", text: s.documentCount }), el("td", { class: "num", text: s.blockCount }),
        el("td", { class: "num", text: s.generation }),
        el("td", { class: "num", text: ago(Number(s.stalenessSeconds || 0)) }), buildCell, vectorsCell,
        crawlCell);
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
  $("show-source").addEventListener("click", () => {
    preferSource = $("show-source").getAttribute("aria-pressed") !== "true";
    showSource(preferSource);
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
