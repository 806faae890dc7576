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
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
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

  it('the paginator: first, previous, the page numbers, next, last, keeping the ordering and the size', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.apiUrl}?ordering=-name_en&page_size=5`);
    const pager = page.locator('nav.pager');
    expect(await pager.innerText()).toBe('« first\n‹ previous\n1\n2\n3\n…\n10\nnext ›\nlast »');
    await page.screenshot({ path: '/tmp/browsable-page1.png', fullPage: false });
    await pager.getByRole('link', { name: 'last »' }).click();
    await page.waitForURL(`${server.url}/cities/?ordering=-name_en&page=10&page_size=5`);
    expect(await pager.innerText()).toBe('« first\n‹ previous\n1\n…\n8\n9\n10\nnext ›\nlast »');
    await pager.getByRole('link', { name: '8' }).click();
    await page.waitForURL(`${server.url}/cities/?ordering=-name_en&page=8&page_size=5`);
    expect(await pager.locator('[aria-current=page]').innerText()).toBe('8');
    await page.screenshot({ path: '/tmp/browsable-page8.png', fullPage: false });
    await pager.getByRole('link', { name: '‹ previous' }).click();
    await page.waitForURL(`${server.url}/cities/?ordering=-name_en&page=7&page_size=5`);
    await pager.getByRole('link', { name: '« first' }).click();
    await page.waitForURL(`${server.url}/cities/?ordering=-name_en&page_size=5`);
    expect(await page.locator('pre.response').innerText()).toContain(
      `"next": "${server.url}/cities/?ordering=-name_en&page=2&page_size=5"`,
    );
  });

  it('links it makes hold no empty parameter (?ordering=&page_size= asked)', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.apiUrl}?ordering=&page_size=`);
    const hrefs = await page
      .locator('nav.pager a, .formats a')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    expect(hrefs).toEqual([
      '/cities/?page=2',
      '/cities/?page=3',
      '/cities/?page=4',
      '/cities/?page=5',
      '/cities/?page=2',
      '/cities/?page=5',
      '/cities/?format=json',
      '/cities/?format=api',
    ]);
    await page.click('button[type=submit]');
    await page.waitForURL(`${server.url}/cities/`);
  });

  it("the format switch: json gives the API's bytes, api this page", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.apiUrl}?page=2`);
    const [json] = await Promise.all([
      page.waitForResponse(`${server.url}/cities/?format=json&page=2`),
      page.locator('.formats').getByRole('link', { name: 'json' }).click(),
    ]);
    expect(json.headers()['content-type']).toBe('application/json');
    expect(JSON.parse(await json.text())).toMatchObject({ count: 48, previous: `${server.url}/cities/?format=json` });
    await page.goBack();
    await page.locator('.formats').getByRole('link', { name: 'api' }).click();
    await page.waitForURL(`${server.url}/cities/?format=api&page=2`);
    expect(await page.title()).toBe('City List');
  });

  it("the OPTIONS button shows the endpoint's description", async () => {
    const page = await browser.newPage();
    await page.goto(server.apiUrl);
    await page.click('#options');
    // The page already shows its GET answer (HTTP 200 too): wait for the OPTIONS one to replace it.
    await page.locator('pre.response', { hasText: '"name": "City List"' }).waitFor();
    const text = await page.locator('pre.response').innerText();
    expect(text).toMatch(
      /^HTTP 200 OK\nAllow: GET, POST, HEAD, OPTIONS\nContent-Type: application\/json\nVary: Accept\n\n\{\n {4}"name": "City List"/,
    );
    expect(await page.locator('.request').innerText()).toBe('OPTIONS /cities/');
    await page.screenshot({ path: '/tmp/browsable-options.png', fullPage: false });
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
