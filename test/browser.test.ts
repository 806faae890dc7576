import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../src/app/serve.js';
import { tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

const CHROMIUM = '/usr/bin/chromium';
const available = requireTool('Chromium', CHROMIUM, 'apt-get install -y chromium');

// The browsable page as a person sees it: a real headless Chromium on a local preview.
describe.runIf(available)('the browsable API in Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    let root: string;
    ({ dir: root, cleanup } = await tempDir('cities-browser-'));
    await copyFile(join(ROOT, 'data/cities.csv'), join(root, 'cities.csv'));
    server = await serve({ dir: join(root, 'site'), data: join(root, 'cities.csv'), port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await cleanup?.();
  });

  it('shows the cities, and the next link leads to page 2', async () => {
    const page = await browser.newPage();
    const response = await page.goto(server.apiUrl);
    expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(await page.title()).toBe('City List');
    const text = await page.locator('pre.response').innerText();
    expect(text).toContain('HTTP 200 OK');
    expect(text).toContain('"count": 48');
    expect(text).toContain('"name_en": "Cairo"');
    await page.getByRole('link', { name: `${server.url}/cities/?page=2` }).click();
    await page.waitForURL(`${server.url}/cities/?page=2`);
    const second = await page.locator('pre.response').innerText();
    expect(second).toContain(`"previous": "${server.url}/cities/"`);
    expect(second).toContain(`"next": "${server.url}/cities/?page=3"`);
  });

  it('the form orders and sizes the page', async () => {
    const page = await browser.newPage();
    await page.goto(server.apiUrl);
    await page.selectOption('select[name=ordering]', '-name_en');
    await page.fill('input[name=page_size]', '5');
    await page.click('button[type=submit]');
    await page.waitForURL(`${server.url}/cities/?ordering=-name_en&page_size=5`);
    const text = await page.locator('pre.response').innerText();
    expect(text).toContain(`"next": "${server.url}/cities/?ordering=-name_en&page=2&page_size=5"`);
    expect(text.match(/"id": /g)).toHaveLength(5);
  });
});
