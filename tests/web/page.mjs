// page.mjs — what the browser tests do to the demo page: wait for it, draw on it, read it.
import { rowRuns, runsToMouseEvents } from './strokes.mjs';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const ready = (page) => page.waitForSelector('body[data-state="ready"]', { timeout: 30_000 });
// Two animation frames: the page predicts in the frame after the last pointer event.
export const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
export const text = (page, selector) => page.locator(selector).textContent();

export async function prediction(page) {
  await settle(page);
  const digit = await page.locator('#prediction').getAttribute('data-digit');
  return digit === '' ? null : Number(digit);
}

export async function clearPad(page) {
  await page.click('#clear');
  await settle(page);
}

// Draws a 28 x 28 digit as mouse strokes, sent through a DevTools session in one go
// (the browser still delivers them as real, ordered mouse events).
export async function drawDigit(page, pixels) {
  await clearPad(page);
  const box = await page.locator('#pad').boundingBox();
  const cdp = await page.context().newCDPSession(page);
  try {
    await Promise.all(runsToMouseEvents(box, rowRuns(pixels)).map((e) => cdp.send('Input.dispatchMouseEvent', e)));
  } finally {
    await cdp.detach();
  }
  return prediction(page);
}

// Clicks "Check for updates" and waits until the check is over (the button is disabled meanwhile).
export async function checkForUpdates(page) {
  await page.click('#check-updates');
  await page.waitForSelector('#check-updates:not([disabled])');
}

export function waitForText(page, selector, pattern) {
  return page.waitForFunction(
    ([s, p]) => new RegExp(p).test(document.querySelector(s)?.textContent ?? ''),
    [selector, pattern.source],
    { timeout: 15_000 },
  );
}
