// Drives the web console in headless Chromium (Debian's /usr/bin/chromium) with playwright-core.
//
//   node tests/browser/console.mjs SCENARIO BASE_URL OUT_DIR [RELEASE_FILE | LOCATIONS...]
//
// It does what a person does, saves a screenshot of each page under OUT_DIR and prints one JSON
// object of what it saw; the pytest side (tests/browser/test_console_browser.py) judges it.
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

const [scenario, base, out, release] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const TIMEOUT = 60_000;
fs.mkdirSync(out, { recursive: true });

const browser = await chromium.launch({
  executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"],
});
const seen = { errors: [], requests: [] };
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (error) => seen.errors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") seen.errors.push(message.text());
  });
  page.on("request", (request) => seen.requests.push(request.url()));
  const shot = async (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });

  if (scenario === "journey") {
    await page.goto(`${base}/`);
    await page.getByLabel("Query").fill("declare path parameters");
    await page.getByLabel("docs", { exact: true }).check();
    await page.getByLabel("explain").check();
    await page.getByRole("button", { name: "Search" }).click();
    await page.locator(".result").first().waitFor();
    seen.search = {
      url: page.url(),
      count: await page.locator(".result").count(),
      firstTitle: await page.locator(".result-title").first().textContent(),
      firstCrumbs: await page.locator(".result .crumbs").first().textContent(),
      firstPreview: await page.locator(".result .preview").first().textContent(),
      firstScore: await page.locator(".result .score").first().textContent(),
      firstReasons: await page.locator(".result").first().locator(".reasons li").allTextContents(),
      firstStages: await page.locator(".result").first().locator(".stages li").allTextContents(),
      status: await page.locator("#search-status").textContent(),
    };
    await shot("search");

    await page.locator(".result-title").first().click();
    // A doc section opens rendered; its numbered source is in the page, behind "Source".
    await page.locator("#content .line").first().waitFor({ state: "attached" });
    seen.content = {
      url: page.url(),
      title: await page.locator("#content-title").textContent(),
      meta: await page.locator("#content-meta").textContent(),
      text: await page.locator("#content").textContent(),
      marked: await page.locator("#content mark").count(),
    };
    await shot("content");

    await page.getByRole("link", { name: "Whole page" }).click();
    await page.waitForURL((url) => !url.searchParams.get("location").includes("#"));
    await page.locator("#content-title", { hasText: "Path Parameters" }).waitFor();
    const next = page.locator(".next-part");
    seen.whole = {
      url: page.url(),
      hasNext: (await next.count()) > 0,
      marked: await page.locator("#content mark").allTextContents(),
    };
    if (seen.whole.hasNext) {
      const before = await page.locator("#content").textContent();
      await next.click();
      await page.waitForURL(/cursor=/);
      await page.waitForFunction((old) => {
        const node = document.querySelector("#content");
        return node && node.textContent && node.textContent !== old;
      }, before);
      seen.whole.secondPart = await page.locator("#parts").textContent();
      seen.whole.secondMeta = await page.locator("#content-meta").textContent();
      seen.whole.secondFirstLine = await page.locator("#content .no").first().textContent();
      seen.whole.secondUrl = page.url();
    }
    await shot("content-part");

    // Back through the parts and the block to the results (the browser's own history).
    for (let i = 0; i < 5 && page.url().includes("location="); i += 1) {
      await page.goBack();
      seen.history = [...(seen.history || []), page.url()];
    }
    await page.locator(".result").first().waitFor();
    seen.back = { url: page.url(), count: await page.locator(".result").count() };

    await page.getByRole("link", { name: "Sources" }).click();
    await page.locator("#sources tbody tr").first().waitFor();
    seen.sources = await page.locator("#sources tbody tr").evaluateAll((rows) =>
      rows.map((r) => [...r.children].map((c) => c.textContent.trim())));
    await shot("sources");

    // A shared link opens the same search in a fresh page.
    const shared = await context.newPage();
    await shared.goto(seen.search.url);
    await shared.locator(".result").first().waitFor();
    seen.shared = {
      firstTitle: await shared.locator(".result-title").first().textContent(),
      query: await shared.getByLabel("Query").inputValue(),
      explain: await shared.getByLabel("explain").isChecked(),
    };

    // Narrow window: nothing wider than the screen, every control labelled.
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(seen.search.url);
    await page.locator(".result").first().waitFor();
    seen.narrow = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      unlabelled: [...document.querySelectorAll("input, select, button")]
        .filter((c) => !(c.labels && c.labels.length) && !c.getAttribute("aria-label")
          && !(c.tagName === "BUTTON" && c.textContent.trim()))
        .map((c) => c.id || c.name || c.tagName),
      lang: document.documentElement.lang,
    }));
    await shot("search-narrow");
  } else if (scenario === "reading") {
    // A definition, a rendered section and its source, explain, a miss, long lines.
    const [definition, section, unsafe, longDoc] = process.argv.slice(5);
    const visible = (selector) => page.locator(selector).isVisible();
    const noOverflow = () => page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      // The boxes on the page (a code block or a table may scroll inside its own box).
      widest: Math.max(...[...document.querySelectorAll(
        "main > section:not([hidden]) > *:not([hidden]), #rendered > *")]
        .map((n) => n.getBoundingClientRect().right)),
      mainRight: document.querySelector("main").getBoundingClientRect().right,
    }));

    await page.goto(`${base}/?${new URLSearchParams({ location: definition })}`);
    await page.locator("#content .line").first().waitFor();
    seen.definition = {
      meta: await page.locator("#content-meta").textContent(),
      firstNumber: await page.locator("#content .no").first().textContent(),
      lastNumber: await page.locator("#content .no").last().textContent(),
      lines: await page.locator("#content .line").count(),
      marks: await page.locator("#content mark").evaluateAll((ms) => ms.map((m) => m.title)),
      text: await page.locator("#content").textContent(),
      links: await page.locator("#parts a").allTextContents(),
      rendered: await visible("#rendered"),
    };
    await shot("definition");

    await page.goto(`${base}/?${new URLSearchParams({ location: section })}`);
    await page.locator("#rendered").waitFor();
    seen.rendered = {
      sourceVisible: await visible("#content"),
      pressed: await page.getByRole("button", { name: "Source" }).getAttribute("aria-pressed"),
      headings: await page.locator("#rendered h1, #rendered h2, #rendered h3").allTextContents(),
      codeBlocks: await page.locator("#rendered pre code").count(),
      inlineCode: await page.locator("#rendered p code").count(),
      text: await page.locator("#rendered").innerText(),
    };
    await shot("rendered");
    await page.getByRole("button", { name: "Source" }).click();
    await page.locator("#content .line").first().waitFor();
    seen.source = {
      renderedVisible: await visible("#rendered"),
      pressed: await page.getByRole("button", { name: "Source" }).getAttribute("aria-pressed"),
      firstNumber: await page.locator("#content .no").first().textContent(),
      text: await page.locator("#content").textContent(),
    };
    await shot("source");
    await page.getByRole("button", { name: "Source" }).click();
    await page.locator("#rendered").waitFor();

    await page.goto(`${base}/?${new URLSearchParams({ location: unsafe })}`);
    await page.locator("#rendered").waitFor();
    seen.unsafe = {
      scripts: await page.locator("#rendered script, #rendered img, #rendered iframe").count(),
      handlers: await page.locator("#rendered [onerror], #rendered [onclick]").count(),
      hrefs: await page.locator("#rendered a").evaluateAll((as) => as.map((a) => a.getAttribute("href"))),
      text: await page.locator("#rendered").innerText(),
      alerted: await page.evaluate(() => window.__alerted === true),
    };
    await shot("sanitised");

    await page.goto(`${base}/?q=declare+path+parameters&kinds=docs&explain=true`);
    await page.locator(".result").first().waitFor();
    const first = page.locator(".result").first();
    seen.explain = {
      folds: await first.locator("details.stages-fold").count(),
      summary: await first.locator("details.stages-fold summary").textContent(),
      visibleStages: await first.locator(".stages li").evaluateAll((lis) =>
        lis.filter((li) => li.checkVisibility()).length),
      stages: await first.locator(".stages li").allTextContents(),
      decided: await first.locator(".decided").textContent(),
      previewCode: await page.locator(".result .preview code").count(),
      previewText: await first.locator(".preview").textContent(),
    };
    await shot("explain");
    await first.locator("details.stages-fold summary").click();
    await first.locator(".stages li").first().waitFor();
    seen.explain.openedStages = await first.locator(".stages li").evaluateAll((lis) =>
      lis.filter((li) => li.checkVisibility()).length);
    await shot("explain-open");

    for (const [name, query] of [["not-found", ""], ["not-found-from-results", "declare path parameters"]]) {
      const params = { location: "tutorial/nowhere-at-all" };
      if (query) params.q = query;
      await page.goto(`${base}/?${new URLSearchParams(params)}`);
      await page.locator("#content-status.error").waitFor();
      seen[name] = {
        status: await page.locator("#content-status").textContent(),
        contentVisible: await visible("#content"),
        renderedVisible: await visible("#rendered"),
        sourceButton: await visible("#show-source"),
        back: await page.locator("#back").textContent(),
        backHref: await page.locator("#back").getAttribute("href"),
      };
      await shot(name);
    }

    await page.goto(`${base}/?${new URLSearchParams({ location: longDoc })}`);
    await page.locator("#rendered").waitFor();
    seen.long = { rendered: await noOverflow() };
    await shot("long-rendered");
    await page.getByRole("button", { name: "Source" }).click();
    await page.locator("#content .line").first().waitFor();
    seen.long.source = await noOverflow();
    await shot("long-source");
    await page.setViewportSize({ width: 360, height: 740 });
    seen.long.narrow = await noOverflow();
    await shot("long-source-narrow");
  } else if (scenario === "sources-live") {
    // The daemon is held in its first build: the page shows it loading, then, refreshing by
    // itself, ready once the test's release file lets the build finish.
    await page.goto(`${base}/?view=sources`);
    await page.locator("#sources tbody tr").first().waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll("#sources tbody tr")].some((r) => r.textContent.includes("loading")));
    seen.loading = await page.locator("#sources tbody tr").evaluateAll((rows) =>
      rows.map((r) => ({ text: r.textContent, progress: r.querySelector("progress") !== null,
        value: r.querySelector("progress") ? r.querySelector("progress").value : null })));
    seen.healthWhileLoading = await page.locator("#health").textContent();
    await shot("sources-loading");
    fs.writeFileSync(release, "");
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll("#sources tbody tr")];
      return rows.length && rows.every((r) => r.textContent.includes("ready"));
    });
    seen.ready = await page.locator("#sources tbody tr").allTextContents();
    await shot("sources-ready");
  } else if (scenario === "sources-crawl") {
    // A crawled site that lost pages: its row says partial with the counts, and the failed
    // pages open under a fold.
    await page.goto(`${base}/?view=sources`);
    const cell = page.locator("#sources tbody tr td[data-crawl]").first();
    await cell.waitFor();
    seen.crawl = {
      state: await cell.getAttribute("data-crawl"),
      text: await cell.evaluate((td) => td.childNodes[0].textContent),
      title: await cell.getAttribute("title"),
      color: await cell.evaluate((td) => getComputedStyle(td).color),
      readyColor: await page.locator("#sources tbody tr td").nth(1).evaluate((td) => getComputedStyle(td).color),
      stateCell: await page.locator("#sources tbody tr td").nth(1).textContent(),
    };
    await cell.locator("summary").click();
    seen.crawl.failures = await cell.locator("li").evaluateAll((lis) =>
      lis.filter((li) => li.checkVisibility()).map((li) => li.textContent));
    await shot("sources-crawl");
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
} catch (error) {
  seen.failure = String(error && error.stack ? error.stack : error);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen) + "\n");
