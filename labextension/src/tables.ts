/**
 * A result that is a table, drawn as one (the `text/html` card's rules,
 * `dsh_nb/cards/tables.py`): the tabular form `{columns, data, rows}` a
 * DataFrame becomes, or a list of records with the same keys. Numbers are
 * right-aligned, `null` is an empty cell, the count reads "5 of 1,000
 * rows", and the text the model read is one click away. All text goes in
 * as `textContent`.
 */

import { el } from './dom';
import { Json } from './payload';

/** Rows drawn of a list of records; the JSON holds them all. */
const MAX_DRAWN_ROWS = 500;
const MAX_TEXT = 2_000_000;
const TABLE_KEYS = new Set(['columns', 'data', 'rows', 'shown_rows', 'index']);

interface ITableShape {
  columns: string[];
  rows: Json[][];
  total: number;
  index: number;
}

function label(value: Json): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isPlainObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function tabular(value: { [key: string]: Json }): ITableShape | null {
  const { columns, data, rows } = value;
  if (!Object.keys(value).every(k => TABLE_KEYS.has(k))) {
    return null;
  }
  if (!Array.isArray(columns) || !Array.isArray(data)) {
    return null;
  }
  if (
    typeof rows !== 'number' ||
    !Number.isInteger(rows) ||
    rows < data.length
  ) {
    return null;
  }
  if (!data.every(r => Array.isArray(r) && r.length === columns.length)) {
    return null;
  }
  const index = Array.isArray(value.index) ? value.index.length : 0;
  return {
    columns: columns.map(label),
    rows: (data as Json[][]).slice(0, MAX_DRAWN_ROWS),
    total: rows,
    index
  };
}

function records(value: Json[]): ITableShape | null {
  if (value.length === 0 || !value.every(r => isPlainObject(r))) {
    return null;
  }
  const items = value as { [key: string]: Json }[];
  const keys = Object.keys(items[0]);
  if (keys.length === 0) {
    return null;
  }
  const first = new Set(keys);
  for (const item of items) {
    const own = Object.keys(item);
    if (own.length !== keys.length || !own.every(k => first.has(k))) {
      return null;
    }
  }
  return {
    columns: keys,
    rows: items.slice(0, MAX_DRAWN_ROWS).map(r => keys.map(k => r[k])),
    total: items.length,
    index: 0
  };
}

/**
 * The table `text` holds, or null.
 */
export function tableOf(text: string): ITableShape | null {
  const start = text.trimStart()[0];
  if (text.length > MAX_TEXT || (start !== '{' && start !== '[')) {
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(value)) {
    return records(value as Json[]);
  }
  return isPlainObject(value) ? tabular(value) : null;
}

/**
 * "5 of 1,000 rows", or "3 rows" when all are shown.
 */
export function rowCount(shape: ITableShape): string {
  const noun = shape.total === 1 ? 'row' : 'rows';
  const total = shape.total.toLocaleString('en-US');
  if (shape.rows.length < shape.total) {
    return `${shape.rows.length.toLocaleString('en-US')} of ${total} ${noun}`;
  }
  return `${total} ${noun}`;
}

function cell(tag: 'td' | 'th', value: Json): HTMLElement {
  if (value === null || value === undefined) {
    return el(tag, 'dsh-ToolCard-null');
  }
  if (typeof value === 'number') {
    return el(tag, 'dsh-ToolCard-number', JSON.stringify(value));
  }
  return el(tag, undefined, label(value));
}

/**
 * The table, its row count and the model's text, folded.
 */
export function tableView(shape: ITableShape, modelText: string): HTMLElement {
  const node = el('div', 'dsh-ToolCard-tableview');
  const scroll = el('div', 'dsh-ToolCard-tablescroll');
  const table = el('table', 'dsh-ToolCard-table');
  const head = el('thead');
  const top = el('tr');
  for (const name of shape.columns) {
    top.appendChild(el('th', undefined, name));
  }
  head.appendChild(top);
  table.appendChild(head);
  const body = el('tbody');
  for (const row of shape.rows) {
    const line = el('tr');
    row.forEach((value, i) =>
      line.appendChild(cell(i < shape.index ? 'th' : 'td', value))
    );
    body.appendChild(line);
  }
  table.appendChild(body);
  scroll.appendChild(table);
  node.appendChild(scroll);
  node.appendChild(el('div', 'dsh-ToolCard-rows', rowCount(shape)));
  const details = el('details', 'dsh-ToolCard-modeltext');
  details.appendChild(el('summary', undefined, 'what the model read'));
  details.appendChild(el('pre', 'dsh-ToolCard-json', modelText));
  node.appendChild(details);
  return node;
}
