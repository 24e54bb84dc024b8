/**
 * The diff card's body: one table per file, drawn from the hunks the
 * kernel planned.
 *
 * The kernel sends hunks with three lines of context, already cut to the
 * card's row limit (`CardLimits.max_diff_lines`), so this module has no
 * diff algorithm: it draws each line, numbers it, and shows each cut as
 * "N more rows". It also stops at `limits.maxDiffLines` rows itself, so a
 * hand-made payload cannot make it draw more.
 */

import { el, text } from './dom';
import { fileLink } from './opener';
import { int, isObject, json, Json, JsonObject, str } from './payload';
import { ILimits, ILinkContext } from './tokens';

/**
 * One file's section: header link, +/- counts, notices and the table.
 */
export function fileDiff(
  value: Json,
  links: ILinkContext,
  limits: ILimits,
  budget: { rows: number }
): HTMLElement {
  const section = el('div', 'dsh-ToolCard-file');
  if (!isObject(value) || typeof value.path !== 'string') {
    section.appendChild(
      el('pre', 'dsh-ToolCard-json', clip(json(value), limits))
    );
    return section;
  }
  const head = el('div', 'dsh-ToolCard-fileHeader');
  section.appendChild(head);
  const hunks = Array.isArray(value.hunks) ? value.hunks : null;
  head.appendChild(
    fileLink(value.path, hunks ? firstLine(hunks) : null, links)
  );
  if (value.newFile === true) {
    head.appendChild(el('span', 'dsh-ToolCard-badge dsh-mod-new', 'new file'));
  }
  if (value.crlf === true) {
    head.appendChild(el('span', 'dsh-ToolCard-badge', 'CRLF'));
  }
  const added = int(value.added);
  const removed = int(value.removed);
  if (added !== null && removed !== null && (added > 0 || removed > 0)) {
    head.appendChild(
      el('span', 'dsh-ToolCard-stat dsh-mod-added', `+${added}`)
    );
    head.appendChild(
      el('span', 'dsh-ToolCard-stat dsh-mod-removed', `\u2212${removed}`)
    );
  }
  const skipped = str(value.skipped);
  if (skipped !== null) {
    section.appendChild(el('div', 'dsh-ToolCard-notice', skipped));
  }
  if (hunks === null) {
    if (skipped === null) {
      section.appendChild(
        el(
          'div',
          'dsh-ToolCard-notice',
          'This diff was stored by an older dsh_nb; run the cell again to see it.'
        )
      );
    }
    return section;
  }
  if (hunks.length > 0) {
    section.appendChild(diffTable(hunks, value, budget));
  }
  const notice = str(value.notice);
  if (notice !== null) {
    section.appendChild(
      el('div', 'dsh-ToolCard-notice dsh-mod-truncated', notice)
    );
  }
  return section;
}

function clip(value: string, limits: ILimits): string {
  return value.length <= limits.maxOutputChars
    ? value
    : value.slice(0, limits.maxOutputChars) + '\u2026';
}

/**
 * The new-file line of the first change, to open the file there.
 */
function firstLine(hunks: Json[]): number | null {
  for (const hunk of hunks) {
    if (!isObject(hunk) || !Array.isArray(hunk.lines)) {
      continue;
    }
    let line = int(hunk.newStart) ?? 1;
    for (const item of hunk.lines) {
      if (typeof item === 'string') {
        if (item[0] === '-' || item[0] === '+') {
          return line;
        }
        line += item[0] === ' ' ? 1 : 0;
      } else if (isObject(item)) {
        line += int(item.new) ?? 0;
      }
    }
  }
  return null;
}

function gapText(count: number): string {
  return `\u22ef ${count.toLocaleString('en-US')} unchanged line${count === 1 ? '' : 's'}`;
}

function noteRow(className: string, label: string): HTMLElement {
  const row = el('tr', className);
  const cell = el('td', undefined, label);
  cell.colSpan = 4;
  row.appendChild(cell);
  return row;
}

function diffTable(
  hunks: Json[],
  file: JsonObject,
  budget: { rows: number }
): HTMLElement {
  const table = el('table', 'dsh-ToolCard-diff');
  for (const hunk of hunks) {
    if (!isObject(hunk) || !Array.isArray(hunk.lines)) {
      continue;
    }
    const group = el('tbody', 'dsh-ToolCard-hunk');
    const gap = int(hunk.gap);
    const header = str(hunk.header) ?? '@@';
    const headRow = noteRow(
      'dsh-ToolCard-hunkHeader',
      gap !== null && gap > 0 ? `${header}  ${gapText(gap)}` : header
    );
    makeToggle(headRow, group);
    group.appendChild(headRow);
    let oldNo = int(hunk.oldStart) ?? 1;
    let newNo = int(hunk.newStart) ?? 1;
    let hidden = 0;
    for (const item of hunk.lines) {
      if (budget.rows <= 0) {
        hidden +=
          typeof item === 'string'
            ? 1
            : (int(isObject(item) ? item.more : null) ?? 0);
        continue;
      }
      if (typeof item === 'string') {
        const kind = item[0];
        if (kind === '\\') {
          group.appendChild(noteRow('dsh-ToolCard-noEol', item));
          continue;
        }
        group.appendChild(
          diffRow(
            kind,
            kind === '+' ? null : oldNo,
            kind === '-' ? null : newNo,
            item.slice(1)
          )
        );
        budget.rows--;
        oldNo += kind === '+' ? 0 : 1;
        newNo += kind === '-' ? 0 : 1;
      } else if (isObject(item)) {
        const more = int(item.more) ?? 0;
        oldNo += int(item.old) ?? 0;
        newNo += int(item.new) ?? 0;
        group.appendChild(
          noteRow(
            'dsh-ToolCard-skip',
            `\u22ef ${more.toLocaleString('en-US')} more row${more === 1 ? '' : 's'}`
          )
        );
      }
    }
    if (hidden > 0) {
      group.appendChild(
        noteRow(
          'dsh-ToolCard-skip',
          `\u22ef ${hidden.toLocaleString('en-US')} more rows`
        )
      );
    }
    table.appendChild(group);
  }
  const after = int(file.after);
  if (after !== null && after > 0) {
    const tail = el('tbody', 'dsh-ToolCard-gap');
    tail.appendChild(noteRow('', gapText(after)));
    table.appendChild(tail);
  }
  return table;
}

function makeToggle(headRow: HTMLElement, group: HTMLElement): void {
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
}

function diffRow(
  sign: string,
  oldNo: number | null,
  newNo: number | null,
  line: string
): HTMLElement {
  const kind = sign === '-' ? 'removed' : sign === '+' ? 'added' : 'context';
  const row = el('tr', `dsh-ToolCard-line dsh-mod-${kind}`);
  row.appendChild(
    el('td', 'dsh-ToolCard-lineNo', oldNo === null ? '' : String(oldNo))
  );
  row.appendChild(
    el('td', 'dsh-ToolCard-lineNo', newNo === null ? '' : String(newNo))
  );
  row.appendChild(
    el('td', 'dsh-ToolCard-sign', kind === 'context' ? ' ' : sign)
  );
  const code = el('td', 'dsh-ToolCard-code');
  if (line.endsWith('\r')) {
    code.appendChild(text(line.slice(0, -1)));
    const cr = el('span', 'dsh-ToolCard-cr', '\u240d');
    cr.title = 'carriage return (CRLF line ending)';
    code.appendChild(cr);
  } else {
    code.appendChild(text(line));
  }
  row.appendChild(code);
  return row;
}
