/**
 * The terminal card's output: ANSI colours, copy button, collapsing.
 */

import { ansiSpan, parseAnsi } from './ansi';
import { el } from './dom';
import { int, JsonObject, str } from './payload';

/**
 * Terminal output longer than this many lines starts collapsed.
 */
const COLLAPSE_LINES = 40;

/**
 * The exit-status pill: a signal by name, else the exit code.
 */
export function exitPill(result: JsonObject): HTMLElement | null {
  const signal = str(result.signal);
  if (signal !== null) {
    return el('span', 'dsh-ToolCard-exit dsh-mod-signal', signal);
  }
  const code = int(result.exitCode);
  if (code === null) {
    return null;
  }
  const ok = code === 0;
  return el(
    'span',
    `dsh-ToolCard-exit ${ok ? 'dsh-mod-ok' : 'dsh-mod-failed'}`,
    `exit ${code}`
  );
}

/**
 * Append the output (if any) with its toolbar and collapse control.
 */
export function terminalOutput(body: HTMLElement, result: JsonObject): void {
  const output = str(result.output);
  if (output === null || output === '') {
    return;
  }
  const ansi = parseAnsi(output);
  const wrap = el('div', 'dsh-ToolCard-terminal');
  const toolbar = el('div', 'dsh-ToolCard-toolbar');
  const copy = el('button', 'dsh-ToolCard-copy', 'Copy');
  copy.type = 'button';
  copy.title = 'Copy the output as plain text';
  copy.addEventListener('click', event => {
    event.preventDefault();
    event.stopPropagation();
    copyText(ansi.plain).then(ok => {
      copy.textContent = ok ? 'Copied' : 'Copy failed';
      window.setTimeout(() => {
        copy.textContent = 'Copy';
      }, 1500);
    });
  });
  toolbar.appendChild(copy);
  wrap.appendChild(toolbar);

  const pre = el('pre', 'dsh-ToolCard-output');
  for (const span of ansi.spans) {
    pre.appendChild(ansiSpan(span));
  }
  wrap.appendChild(pre);
  const lineCount = ansi.plain.replace(/\n$/, '').split('\n').length;
  if (lineCount > COLLAPSE_LINES) {
    pre.classList.add('dsh-mod-collapsed');
    const more = el(
      'button',
      'dsh-ToolCard-more',
      `Show all ${lineCount} lines`
    );
    more.type = 'button';
    more.addEventListener('click', event => {
      event.preventDefault();
      event.stopPropagation();
      const collapsed = pre.classList.toggle('dsh-mod-collapsed');
      more.textContent = collapsed
        ? `Show all ${lineCount} lines`
        : 'Show less';
    });
    wrap.appendChild(more);
  }
  body.appendChild(wrap);
}

/**
 * Copy through the async clipboard, falling back to `execCommand`.
 */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Fall through to the legacy path (permissions, focus, old browsers).
  }
  const area = el('textarea', 'dsh-ToolCard-clipboard');
  area.value = text;
  area.setAttribute('readonly', '');
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}
