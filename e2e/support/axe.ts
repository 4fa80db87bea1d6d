// axe-core checks shared by the specs that look at accessibility (a11y,
// activity, ledger): one way to run axe, one way to report what it found.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import type { AxeResults } from 'axe-core';
import { expect } from './fixtures';

/**
 * An axe run on the page as it is now.
 *
 * Legacy mode runs axe.run() in the page itself. The default mode runs axe in
 * every frame and then merges the frames' partial results in a blank page it
 * opens for the purpose: a new page, axe's 0.5 MB injected into it and every
 * passing node serialised across, on every run, for pages that have no frames
 * (no template of the console renders a frame or an iframe). Only
 * violations and incomplete results are used, so passes and inapplicable
 * rules are not collected (resultTypes: axe then keeps one node of those).
 */
export function axe(page: Page): AxeBuilder {
  return new AxeBuilder({ page }).setLegacyMode(true).options({ resultTypes: ['violations', 'incomplete'] });
}

/**
 * Runs axe and fails with a readable list of serious/critical violations:
 * every rule in the light scheme, then colour contrast again in the dark one
 * (no other rule depends on the colours). `exclude` leaves out selectors,
 * e.g. a long list's rows after the 20th: the same markup as the first ones,
 * and checking the contrast of 3,000 elements of a long CRD list takes axe
 * half a minute on a loaded 2-core machine.
 */
export async function expectAccessible(page: Page, what: string, exclude: string[] = []) {
  const runs = [
    { colorScheme: 'light' as const, rules: undefined },
    { colorScheme: 'dark' as const, rules: ['color-contrast'] },
  ];
  for (const { colorScheme, rules } of runs) {
    await page.emulateMedia({ colorScheme });
    let builder = axe(page);
    for (const selector of exclude) builder = builder.exclude(selector);
    if (rules) builder = builder.withRules(rules);
    const results = await builder.analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    const report = bad.map((v) => `  - [${v.impact}] ${v.id}: ${v.help}\n` +
      v.nodes.slice(0, 5).map((n) => `      ${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1).join(' ').trim()}`).join('\n'));
    expect(bad, `${what} in the ${colorScheme} scheme has serious/critical axe violations:\n${report.join('\n')}`).toEqual([]);
    expect(undecidedContrast(results), `${what} in the ${colorScheme} scheme: axe could not decide the contrast of these`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: null });
}

/** Colour contrast only, in whatever theme the page shows now. */
export async function expectContrast(page: Page, what: string, exclude: string[] = []) {
  let builder = axe(page).withRules(['color-contrast']);
  for (const selector of exclude) builder = builder.exclude(selector);
  const results = await builder.analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.flatMap((v) => v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary}`)), `${what}: contrast`).toEqual([]);
  expect(undecidedContrast(results), `${what}: axe could not decide the contrast of these`).toEqual([]);
}

/**
 * Text whose contrast axe could not decide because it sits on a gradient or
 * an image: a contrast nobody checked (the tables' old scroll shadows were
 * such gradients). Other undecided cases (a row partly under the sticky
 * header, a glyph-only cell) are left out: they are incidental, not a design.
 */
function undecidedContrast(results: AxeResults): string[] {
  return results.incomplete.filter((v) => v.id === 'color-contrast').flatMap((v) => v.nodes
    .filter((n) => n.any.some((a) => ['bgGradient', 'bgImage'].includes((a.data as { messageKey?: string } | null)?.messageKey ?? '')))
    .map((n) => `${n.target.join(' ')}: ${n.any.map((a) => a.message).join('; ')}`));
}
