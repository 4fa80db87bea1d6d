import AxeBuilder from '@axe-core/playwright';
import { test } from './support/fixtures';
test('all violations', async ({ page }) => {
  test.setTimeout(300_000);
  for (const path of ['/', '/csrs', '/csrs?state=pending', '/flowschemas', '/flowschemas/classify', '/prioritylevels/global-default', '/zz']) {
    await page.goto(path);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const r = await new AxeBuilder({ page }).exclude('[data-testid=list-row]:nth-child(n+6)').analyze();
      for (const v of r.violations) console.log(`VIOL ${path} ${colorScheme} [${v.impact}] ${v.id} ${v.nodes.slice(0,3).map((n) => n.target.join(' ')).join(' | ')}`);
      console.log(`VIOL ${path} ${colorScheme} passes=${r.passes.length} incomplete=${r.incomplete.map((i) => i.id + ':' + i.nodes.length).join(',')}`);
    }
  }
});
