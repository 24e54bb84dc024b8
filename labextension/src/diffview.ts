/**
 * The diff card's body: one table per file, hunks that collapse.
 */

import { computeDiff, IEdit, IHunk, ILine } from './diff';
import { el } from './dom';
import { fileLink } from './opener';
import { isObject, json, Json } from './payload';
import { ILinkContext } from './tokens';

/**
 * Rows shown per file before the diff is truncated with a notice.
 */
const MAX_ROWS = 2000;

/**
 * A NUL character means binary content, which is not diffed.
 */
function looksBinary(text: string | null): boolean {
  return text !== null && text.indexOf('\u0000') >= 0;
}

/**
 * One file's section: header link, +/- counts, notices and the table.
 */
export function fileDiff(value: Json, links: ILinkContext): HTMLElement {
  const section = el('div', 'dsh-ToolCard-file');
  if (!isObject(value) || typeof value.path !== 'string') {
    section.appendChild(el('pre', 'dsh-ToolCard-json', json(value)));
    return section;
  }
  const path = value.path;
  const oldText = typeof value.oldText === 'string' ? value.oldText : null;
  const newText = typeof value.newText === 'string' ? value.newText : '';
  const head = el('div', 'dsh-ToolCard-fileHeader');
  section.appendChild(head);

  if (looksBinary(oldText) || looksBinary(newText)) {
    head.appendChild(fileLink(path, null, links));
    section.appendChild(
      el(
        'div',
        'dsh-ToolCard-notice',
        `Binary content not shown (${oldText?.length ?? 0} → ${newText.length} characters).`
      )
    );
    return section;
  }
  const diff = computeDiff(oldText, newText);
  let added = 0;
  let removed = 0;
  for (const hunk of diff.hunks) {
    for (const e of hunk.edits) {
      added += e.op === 2 ? 1 : 0;
      removed += e.op === 1 ? 1 : 0;
    }
  }
  const firstLine = firstChangedLine(diff.hunks);
  head.appendChild(fileLink(path, firstLine, links));
  if (oldText === null) {
    head.appendChild(el('span', 'dsh-ToolCard-badge dsh-mod-new', 'new file'));
  }
  head.appendChild(el('span', 'dsh-ToolCard-stat dsh-mod-added', `+${added}`));
  head.appendChild(
    el('span', 'dsh-ToolCard-stat dsh-mod-removed', `\u2212${removed}`)
  );
  if (diff.notice) {
    section.appendChild(el('div', 'dsh-ToolCard-notice', diff.notice));
  }
  if (diff.hunks.length === 0) {
    section.appendChild(el('div', 'dsh-ToolCard-notice', 'No changes.'));
    return section;
  }
  section.appendChild(diffTable(diff));
  return section;
}

function firstChangedLine(list: IHunk[]): number | null {
  for (const hunk of list) {
    for (const e of hunk.edits) {
      if (e.op !== 0) {
        return e.b + 1;
      }
    }
  }
  return null;
}

function diffTable(diff: {
  hunks: IHunk[];
  oldLines: ILine[];
  newLines: ILine[];
}): HTMLElement {
  const table = el('table', 'dsh-ToolCard-diff');
  let rows = 0;
  let hidden = 0;
  let previousEnd = 0;
  for (const hunk of diff.hunks) {
    const gap = (hunk.edits[0]?.a ?? 0) - previousEnd;
    const last = hunk.edits[hunk.edits.length - 1];
    previousEnd = last.op === 2 ? last.a : last.a + 1;
    if (rows >= MAX_ROWS) {
      hidden += hunk.edits.length;
      continue;
    }
    const group = el('tbody', 'dsh-ToolCard-hunk');
    const headRow = el('tr', 'dsh-ToolCard-hunkHeader');
    const headCell = el('td');
    headCell.colSpan = 4;
    const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
    headCell.textContent =
      gap > 0
        ? `${header}  \u22ef ${gap} unchanged line${gap === 1 ? '' : 's'} above`
        : header;
    headRow.appendChild(headCell);
    headRow.tabIndex = 0;
    headRow.setAttribute('role', 'button');
    headRow.setAttribute('aria-expanded', 'true');
    headRow.title = 'Collapse or expand this hunk';
    const toggle = (event: Event) => {
      event.preventDefault();
      event.stopPropagation();
      const collapsed = group.classList.toggle('dsh-mod-collapsed');
      headRow.setAttribute('aria-expanded', collapsed ? 'false' : 'true');
    };
    headRow.addEventListener('click', toggle);
    headRow.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        toggle(event);
      }
    });
    group.appendChild(headRow);
    for (const e of hunk.edits) {
      if (rows >= MAX_ROWS) {
        hidden++;
        continue;
      }
      const line = e.op === 2 ? diff.newLines[e.b] : diff.oldLines[e.a];
      group.appendChild(diffRow(e, line));
      rows++;
      if (!line.eol) {
        const note = el('tr', 'dsh-ToolCard-noEol');
        const cell = el('td', undefined, '\\ No newline at end of file');
        cell.colSpan = 4;
        note.appendChild(cell);
        group.appendChild(note);
      }
    }
    table.appendChild(group);
  }
  const below = diff.oldLines.length - previousEnd;
  if (below > 0 && hidden === 0) {
    const tail = el('tbody', 'dsh-ToolCard-gap');
    const row = el('tr');
    const cell = el(
      'td',
      undefined,
      `\u22ef ${below} unchanged line${below === 1 ? '' : 's'} below`
    );
    cell.colSpan = 4;
    row.appendChild(cell);
    tail.appendChild(row);
    table.appendChild(tail);
  }
  if (hidden > 0) {
    const wrap = el('div');
    wrap.appendChild(table);
    wrap.appendChild(
      el(
        'div',
        'dsh-ToolCard-notice',
        `Diff truncated: ${hidden} more line${hidden === 1 ? '' : 's'} not shown.`
      )
    );
    return wrap;
  }
  return table;
}

function diffRow(e: IEdit, line: ILine): HTMLElement {
  const kind = e.op === 0 ? 'context' : e.op === 1 ? 'removed' : 'added';
  const row = el('tr', `dsh-ToolCard-line dsh-mod-${kind}`);
  row.appendChild(
    el('td', 'dsh-ToolCard-lineNo', e.op === 2 ? '' : String(e.a + 1))
  );
  row.appendChild(
    el('td', 'dsh-ToolCard-lineNo', e.op === 1 ? '' : String(e.b + 1))
  );
  row.appendChild(
    el('td', 'dsh-ToolCard-sign', e.op === 0 ? ' ' : e.op === 1 ? '-' : '+')
  );
  const code = el('td', 'dsh-ToolCard-code');
  if (line.text.endsWith('\r')) {
    code.appendChild(document.createTextNode(line.text.slice(0, -1)));
    const cr = el('span', 'dsh-ToolCard-cr', '\u240d');
    cr.title = 'carriage return (CRLF line ending)';
    code.appendChild(cr);
  } else {
    code.textContent = line.text;
  }
  row.appendChild(code);
  return row;
}
