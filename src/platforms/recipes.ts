import { cloudflareRecipe } from './cloudflare/recipe.js';
import { denoRecipe } from './deno/recipe.js';
import { lambdaRecipe } from './lambda/recipe.js';
import { netlifyRecipe } from './netlify/recipe.js';
import type { EdgeRecipe, Platform } from './recipe.js';

// Every edge platform `cities-api edge` knows, by name: a platform is a folder of src/platforms/
// (its adapter.ts, bundled into lib/edge/ by scripts/bundle-edge.mjs, and its recipe.ts), its name
// in recipe.ts's PLATFORMS (what the CLI's start-up reads, without loading a recipe) and a line
// here (the compiler holds the two to the same names).

export const RECIPES = {
  cloudflare: cloudflareRecipe,
  deno: denoRecipe,
  netlify: netlifyRecipe,
  lambda: lambdaRecipe,
} as const satisfies Record<Platform, EdgeRecipe>;

export { PLATFORMS, type Platform } from './recipe.js';
