import * as assert from "node:assert/strict";
import { test } from "node:test";
import { gateSettings } from "../../src/trust";

test("trace mode is forced off in an untrusted workspace", () => {
  const settings = { trace: { enabled: true, timeout: 30 }, logLevel: "debug" };
  assert.deepEqual(gateSettings(settings, false), { trace: { enabled: false, timeout: 30 }, logLevel: "debug" });
  assert.equal(settings.trace.enabled, true, "the input is not modified");
});

test("a trusted workspace keeps its settings", () => {
  const settings = { trace: { enabled: true } };
  assert.equal(gateSettings(settings, true), settings);
});

test("missing or odd trace sections are handled", () => {
  assert.deepEqual(gateSettings({}, false), { trace: { enabled: false } });
  assert.deepEqual(gateSettings({ trace: "yes" }, false), { trace: { enabled: false } });
  assert.equal(gateSettings(null, false), null);
});
