// Loads code-server's workbench in headless Chromium (the extension host only starts when a
// browser connects), takes the screenshot when the in-host harness asks for it, and waits for the
// harness's result.json. Every wait is bounded.
//
//   node drive.js --url http://127.0.0.1:PORT/?folder=... --dir E2E_DIR --screenshot out.png
//                 [--chromium /usr/bin/chromium] [--timeout-ms 600000]
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const URL = arg("url");
const DIR = arg("dir");
const SHOT = arg("screenshot");
const CHROMIUM = arg("chromium", process.env.WGMMA_LSP_CHROMIUM || "/usr/bin/chromium");
const TIMEOUT_MS = Number(arg("timeout-ms", 600000));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (m) => console.log(`[drive ${new Date().toISOString()}] ${m}`);

async function main() {
  const deadline = Date.now() + TIMEOUT_MS;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "wgmma-chromium-"));
  let browser;
  try {
    // A fresh profile (--user-data-dir) per run.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      timeout: 60000,
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage",
      ],
      viewport: { width: 1280, height: 760 },
      deviceScaleFactor: 1,
    });
    const page = browser.pages()[0] || await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") log(`browser console error: ${m.text().slice(0, 300)}`);
    });
    page.on("pageerror", (e) => log(`page error: ${String(e).slice(0, 300)}`));
    log(`opening ${URL}`);
    await page.goto(URL, { waitUntil: "domcontentloaded", timeout: 120000 });
    await page.waitForSelector(".monaco-workbench", { timeout: 120000 });
    log("workbench loaded");

    let shot = false;
    while (Date.now() < deadline) {
      if (fs.existsSync(path.join(DIR, "result.json"))) {
        log("result.json written");
        if (!shot && SHOT) {
          await page.screenshot({ path: SHOT });  // at least the final state, for debugging
        }
        return 0;
      }
      if (!shot && fs.existsSync(path.join(DIR, "status.json"))) {
        const status = JSON.parse(fs.readFileSync(path.join(DIR, "status.json"), "utf8"));
        if (status.phase === "screenshot") {
          await sleep(500);
          if (SHOT) {
            await page.screenshot({ path: SHOT });
            log(`screenshot saved to ${SHOT}`);
          }
          shot = true;
          fs.writeFileSync(path.join(DIR, "screenshot.ack"), "ok");
        }
      }
      await sleep(250);
    }
    log(`timed out after ${TIMEOUT_MS} ms waiting for result.json`);
    if (SHOT) {
      await page.screenshot({ path: SHOT.replace(/\.png$/, "") + ".timeout.png" }).catch(() => undefined);
    }
    return 2;
  } finally {
    if (browser) {
      await Promise.race([browser.close(), sleep(10000)]);
    }
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().then((rc) => process.exit(rc), (err) => {
  log(`failed: ${err && err.stack || err}`);
  process.exit(1);
});
