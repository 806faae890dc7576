import { describe, expect, it } from 'vitest';
import { parseBody } from '../src/http/request-body.js';

describe('#12 a JSON body is decoded as DRF decodes it: a leading U+FEFF is not dropped', () => {
  it.each([
    // Python's json.loads: "Unexpected UTF-8 BOM (decode using utf-8-sig)" → DRF answers 400.
    ['a body starting with a BOM is a JSON parse error', '\ufeff{"name_en":"A"}', { status: 400 }],
    ['a BOM inside a string is kept', '{"name_en":"\ufeffA"}', { data: { name_en: '\ufeffA' } }],
    ['a body without a BOM parses', '{"name_en":"A"}', { data: { name_en: 'A' } }],
  ])('%s', async (_, text, expected) => {
    const parsed = await parseBody(Buffer.from(text), 'application/json');
    expect(parsed).toMatchObject(expected);
    if ('detail' in parsed) expect(parsed.detail).toMatch(/^JSON parse error - /);
  });
});
