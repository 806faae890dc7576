import { cloudflareRecipe } from './cloudflare/recipe.js';
import { denoRecipe } from './deno/recipe.js';
import { lambdaRecipe } from './lambda/recipe.js';
import { netlifyRecipe } from './netlify/recipe.js';
import type { EdgeRecipe } from './recipe.js';

// Every edge platform `cities-api edge` knows, by name: a platform is a folder of src/platforms/
// (its adapter.ts, bundled into lib/edge/ by scripts/bundle-edge.mjs, and its recipe.ts) and a line here.

export const RECIPES = {
  cloudflare: cloudflareRecipe,
  deno: denoRecipe,
  netlify: netlifyRecipe,
  lambda: lambdaRecipe,
} as const satisfies Record<string, EdgeRecipe>;

export type Platform = keyof typeof RECIPES;
export const PLATFORMS = Object.keys(RECIPES) as Platform[];
