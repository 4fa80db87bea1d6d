// Reading the console's list pages: rows, names and cells by column key.
import type { Locator, Page } from '@playwright/test';
import { expect } from './fixtures';

export function table(page: Page): Locator {
  return page.getByTestId('list-table');
}

export function rows(page: Page): Locator {
  return page.getByTestId('list-row');
}

/** The object names of the rows, in page order (the link in each row's header cell). */
export async function rowNames(page: Page): Promise<string[]> {
  return (await rows(page).locator('th[scope=row] a').allTextContents()).map((s) => s.trim());
}

/** The column keys (data-column) of the list table, in order. */
export async function columnKeys(page: Page): Promise<string[]> {
  return table(page).locator('thead th').evaluateAll((ths) => ths.map((th) => th.getAttribute('data-column') || ''));
}

export interface RowData {
  name: string;
  href: string;
  text: string;
  cells: Record<string, string>;
}

/** Every row with its cells' text keyed by column. */
export async function readRows(page: Page): Promise<RowData[]> {
  const keys = await columnKeys(page);
  return rows(page).evaluateAll((trs, keys) => trs.map((tr) => {
    const cellEls = Array.from(tr.children);
    const cells: Record<string, string> = {};
    cellEls.forEach((c, i) => { cells[keys[i] || String(i)] = (c.textContent || '').replace(/\s+/g, ' ').trim(); });
    const a = tr.querySelector('th a');
    return {
      name: (a?.textContent || '').trim(),
      href: a?.getAttribute('href') || '',
      text: (tr.textContent || '').replace(/\s+/g, ' ').trim(),
      cells,
    };
  }), keys);
}

/** "Showing N of T" → {shown, total}. */
export async function listCount(page: Page): Promise<{ shown: number; total: number }> {
  const text = (await page.getByTestId('list-count').textContent()) || '';
  const m = /Showing\s+(\d+)\s+of\s+(\d+)/.exec(text);
  expect(m, `list-count text "${text}"`).not.toBeNull();
  return { shown: Number(m![1]), total: Number(m![2]) };
}

/** Opens /<kind> and checks the table has at least one row. */
export async function openList(page: Page, kind: string): Promise<RowData[]> {
  const res = await page.goto(`/${kind}`);
  expect(res!.status(), `GET /${kind}`).toBe(200);
  await expect(table(page)).toBeVisible();
  await expect(rows(page).first(), `/${kind} should list at least one object`).toBeVisible();
  return readRows(page);
}

/**
 * Chooses a filter term that is part of an object name and matches some rows
 * but not all (when there is more than one row), and returns it with the row
 * it was taken from.
 */
export function chooseFilterTerm(all: RowData[]): { term: string; from: RowData } {
  const total = all.length;
  const candidates: { term: string; from: RowData; matches: number; part: boolean }[] = [];
  for (const r of all) {
    const name = r.name.toLowerCase();
    const parts = name.split(/[-.:_/]+/).filter((p) => p.length >= 3 && p !== name);
    for (const term of new Set([...parts, name])) {
      const matches = all.filter((x) => x.text.toLowerCase().includes(term)).length;
      if (matches >= 1 && (total === 1 || matches < total)) candidates.push({ term, from: r, matches, part: term !== name });
    }
  }
  // A part of a name (what a person types) before a whole name; then the
  // term that keeps the fewest rows; then the longer term.
  candidates.sort((a, b) => Number(b.part) - Number(a.part) || a.matches - b.matches || b.term.length - a.term.length);
  if (!candidates.length) throw new Error(`no part of any name narrows the list of ${total} rows: ${all.map((r) => r.name).join(', ')}`);
  return { term: candidates[0].term, from: candidates[0].from };
}
