import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer, type ServeOptions } from '../src/app/serve.js';
import { NAME_FIELDS } from '../src/core/fields.js';
import { tempDir } from './helpers.js';
import { ROOT } from './serve-helpers.js';
import { requireTool } from './tool-check.js';

const CHROMIUM = '/usr/bin/chromium';
const available = requireTool('Chromium', CHROMIUM, 'apt-get install -y chromium');

// The browsable page as a person sees it: a real headless Chromium on a local preview. One
// Chromium serves the whole file (each preview has its own server and dataset) and one tab each
// preview: a new tab cost Chromium about 1.7 CPU-s here, a navigation in an open one about 1. Each
// test starts with its own navigation (goto: a new document; the page keeps nothing in storage or
// cookies), so no test sees another's page.
let chromiumBrowser: Browser | undefined;
beforeAll(async () => {
  if (!available) return;
  chromiumBrowser = await chromium.launch({
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
afterAll(() => chromiumBrowser?.close());

/** A preview server on a copy of the sample dataset (with `options`), and a tab of the file's Chromium; `stop` closes both. */
async function startPreview(options: Partial<ServeOptions> = {}) {
  const { dir: root, cleanup } = await tempDir('cities-browser-');
  await copyFile(join(ROOT, 'data/cities.csv'), join(root, 'cities.csv'));
  const server = await serve({ dir: join(root, 'site'), data: join(root, 'cities.csv'), port: 0, ...options });
  const page = await chromiumBrowser!.newPage();
  const stop = async () => {
    await page.context().close();
    await server.close();
    await cleanup();
  };
  return { server, page, stop };
}

describe.runIf(available)('the browsable API in Chromium', () => {
  let server: RunningServer;
  let page: Page;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => ({ server, page, stop } = await startPreview()));
  afterAll(() => stop?.());

  it('shows the cities, and the next link leads to page 2', async () => {
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
    await page.goto(server.apiUrl);
    await page.selectOption('select.ordering-term >> nth=0', '-name_en');
    await page.fill('input[name=page_size]', '5');
    await page.click('button[type=submit]');
    await page.waitForURL(`${server.url}/cities/?ordering=-name_en&page_size=5`);
    const text = await page.locator('pre.response').innerText();
    expect(text).toContain(`"next": "${server.url}/cities/?ordering=-name_en&page=2&page_size=5"`);
    expect(text.match(/"id": /g)).toHaveLength(5);
  });

  it('orders by several fields: each picked term joins the one ordering parameter, and the picker shows them again', async () => {
    await page.goto(server.apiUrl);
    await page.selectOption('select.ordering-term >> nth=0', 'name_fr');
    await page.selectOption('select.ordering-term >> nth=1', '-name_de');
    await page.selectOption('select.ordering-term >> nth=2', 'name_it');
    await page.click('#listing button[type=submit]');
    await page.waitForURL(`${server.url}/cities/?ordering=name_fr%2C-name_de%2Cname_it`);
    expect(await page.locator('pre.response').innerText()).toContain('"count": 48');
    const picked = await page
      .locator('select.ordering-term')
      .evaluateAll((s) => s.map((e) => (e as unknown as { value: string }).value));
    expect(picked).toEqual(['name_fr', '-name_de', 'name_it', '']);
  });

  it('a read-only server shows no POST form', async () => {
    await page.goto(server.apiUrl);
    expect(await page.locator('section.post').count()).toBe(0);
  });
});

describe.runIf(available)("DRF's POST form on a --writable server, in Chromium", () => {
  const TOKEN = 'browser-token-0123456789abcdef';
  let server: RunningServer;
  let page: Page;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => ({ server, page, stop } = await startPreview({ writable: true, token: TOKEN })));
  afterAll(() => stop?.());

  const city = (name: string) => Object.fromEntries(NAME_FIELDS.map((f) => [f, `${name} ${f}`]));

  it.each([
    ['HTML form', 'multipart/form-data'],
    ['Raw data', 'application/json'],
    ['Raw data', 'application/x-www-form-urlencoded'],
  ])('%s (%s): the city is created and the 201 answer shown in place', async (tab, media) => {
    await page.goto(server.apiUrl);
    await page.fill('#post-token', TOKEN);
    const name = `${tab} ${media}`.replace(/\W+/g, '-');
    if (tab === 'HTML form') {
      for (const [field, value] of Object.entries(city(name))) await page.fill(`#post-${field}`, value);
      await page.fill('#post-longitude', '12.5');
      await page.fill('#post-latitude', '41.9');
      await page.check('#post-top');
    } else {
      await page.getByRole('tab', { name: 'Raw data' }).click();
      await page.selectOption('#post-media-type', media);
      const body = { ...city(name), longitude: '12.5', latitude: '41.9', top: 'true' };
      await page.fill(
        '#post-content',
        media === 'application/json'
          ? JSON.stringify({ ...body, longitude: 12.5, latitude: 41.9, top: true })
          : new URLSearchParams(body).toString(),
      );
    }
    await page.locator('section.post form:visible button[type=submit]').click();
    await page.locator('pre.response', { hasText: 'HTTP 201 Created' }).waitFor();
    const text = await page.locator('pre.response').innerText();
    expect(text).toContain(`"name_en": "${name} name_en"`);
    expect(text).toContain('"top": true');
    expect(text).toContain('"longitude": 12.5,');
    // Listed since: the server answers from the new dataset.
    const listed = await (await fetch(`${server.url}/cities/?ordering=-name_en&page_size=100`)).text();
    expect(listed).toContain(`${name} name_en`);
  });

  it('without the token: 401, shown in place, nothing created', async () => {
    await page.goto(server.apiUrl);
    for (const [field, value] of Object.entries(city('no-token'))) await page.fill(`#post-${field}`, value);
    await page.locator('section.post form:visible button[type=submit]').click();
    await page.locator('pre.response', { hasText: 'HTTP 401 Unauthorized' }).waitFor();
    expect(await (await fetch(`${server.url}/cities/?page_size=100`)).text()).not.toContain('no-token');
  });

  it("the Raw data tab starts as DRF's: a media type per parser, the writable fields' initial values", async () => {
    await page.goto(server.apiUrl);
    expect(await page.getByRole('tab').allInnerTexts()).toEqual(['HTML form', 'Raw data']);
    const media = await page.locator('#post-media-type option').allInnerTexts();
    expect(media).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    const initial = JSON.parse(await page.locator('#post-content').inputValue()) as Record<string, unknown>;
    expect(initial).toEqual({
      ...Object.fromEntries(NAME_FIELDS.map((f) => [f, ''])),
      longitude: null,
      latitude: null,
      top: false,
    });
  });
});
