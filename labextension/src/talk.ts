/**
 * What a running tool told its card (the payload's `talk`): a progress bar
 * and its log lines, folded under a summary once there are more than a few.
 * The same rules as the `text/html` fallback (dsh_nb/cards/talk.py).
 */

import { el } from './dom';
import { int, isObject, Json, str } from './payload';

const OPEN_LINES = 6;

function num(value: Json): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function counts(done: number, total: number | null): string {
  return total === null ? `${done}` : `${done} / ${total}`;
}

function progressBar(progress: Json): HTMLElement | null {
  if (!isObject(progress)) {
    return null;
  }
  const done = num(progress.progress);
  if (done === null) {
    return null;
  }
  const total = num(progress.total);
  const box = el('div', 'dsh-ToolCard-progress');
  const track = el('div', 'dsh-ToolCard-progressTrack');
  if (total !== null && total > 0) {
    const fill = el('div', 'dsh-ToolCard-progressFill');
    const share = Math.max(0, Math.min(1, done / total));
    fill.style.width = `${(share * 100).toFixed(1)}%`;
    track.appendChild(fill);
  }
  box.appendChild(track);
  const message = str(progress.message);
  const label = counts(done, total) + (message ? ` · ${message}` : '');
  box.appendChild(el('div', 'dsh-ToolCard-progressLabel', label));
  return box;
}

function logLines(lines: Json[], hidden: number): HTMLElement {
  const pre = el('pre', 'dsh-ToolCard-log');
  if (hidden > 0) {
    pre.appendChild(
      el('span', 'dsh-ToolCard-logMore', `… ${hidden} earlier lines\n`)
    );
  }
  lines.forEach((line, index) => {
    if (!isObject(line)) {
      return;
    }
    const level = str(line.level) ?? 'info';
    const logger = str(line.logger);
    const prefix =
      str(line.source) === 'logging' && logger ? `${logger}: ` : '';
    const text = prefix + (str(line.text) ?? '');
    const ending = index < lines.length - 1 ? '\n' : '';
    const span = el(
      'span',
      `dsh-ToolCard-logLine dsh-mod-${level}`,
      text + ending
    );
    pre.appendChild(span);
  });
  const count = lines.length + hidden;
  if (count <= OPEN_LINES) {
    return pre;
  }
  const details = el('details', 'dsh-ToolCard-logFold');
  details.appendChild(el('summary', undefined, `log (${count} lines)`));
  details.appendChild(pre);
  return details;
}

/**
 * The card's talk section, or `null` when the call said nothing.
 */
export function talk(data: Json): HTMLElement | null {
  if (!isObject(data)) {
    return null;
  }
  const box = el('div', 'dsh-ToolCard-talk');
  const bar = progressBar(data.progress ?? null);
  if (bar !== null) {
    box.appendChild(bar);
  }
  if (Array.isArray(data.lines) && data.lines.length > 0) {
    box.appendChild(logLines(data.lines, int(data.hiddenLines ?? null) ?? 0));
  }
  return box.childNodes.length > 0 ? box : null;
}
