import { expect } from 'vitest';

// setupFiles of every tier: Buffers compare with Buffer.equals, byte for byte as before, instead of
// toEqual's element-by-element walk, which took about 45 s to compare a site of 4 MB (readTree).
expect.addEqualityTesters([
  (a: unknown, b: unknown) => (Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : undefined),
]);
