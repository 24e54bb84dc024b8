/**
 * The terminal card's output: styled spans, copy button, collapsing.
 *
 * The kernel parses ANSI escapes and sends `outputSpans` (`[text, style]`)
 * with `outputStyles`; colours are `#rrggbb`, checked again here before
 * they reach CSS, so payload text never becomes a style.
 */

import { el, text } from './dom';
import { int, isObject, Json, JsonObject, str } from './payload';
import { ILimits } from './tokens';

const HEX = /^#[0-9a-fA-F]{6}$/;

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

function colour(value: Json): string | null {
  return typeof value === 'string' && HEX.test(value) ? value : null;
}

function styledSpan(chunk: string, style: Json): Node {
  if (!isObject(style) || Object.keys(style).length === 0) {
    return text(chunk);
  }
  let fg = colour(style.fg);
  let bg = colour(style.bg);
  const node = el('span', undefined, chunk);
  if (style.inverse === true) {
    [fg, bg] = [
      bg ?? 'var(--jp-layout-color1, #fff)',
      fg ?? 'var(--jp-content-font-color1, #000)'
    ];
  }
  if (fg !== null) {
    node.style.color = fg;
  }
  if (bg !== null) {
    node.style.backgroundColor = bg;
  }
  const classes: string[] = [];
  for (const flag of ['bold', 'dim', 'italic', 'underline', 'strike']) {
    if (style[flag] === true) {
      classes.push(`dsh-ansi-${flag}`);
    }
  }
  node.className = classes.join(' ');
  return node;
}

/**
 * Read the spans, at most `limits.maxOutputChars` characters of them.
 */
function readSpans(result: JsonObject, limits: ILimits): [string, Json][] {
  const spans = Array.isArray(result.outputSpans) ? result.outputSpans : [];
  const styles = Array.isArray(result.outputStyles) ? result.outputStyles : [];
  const out: [string, Json][] = [];
  let left = limits.maxOutputChars;
  for (const span of spans) {
    if (!Array.isArray(span) || typeof span[0] !== 'string' || left <= 0) {
      continue;
    }
    const chunk = span[0].length > left ? span[0].slice(0, left) : span[0];
    left -= chunk.length;
    const index = int(span[1]);
    out.push([
      chunk,
      index !== null && index >= 0 && index < styles.length
        ? styles[index]
        : null
    ]);
  }
  if (out.length === 0 && typeof result.output === 'string') {
    out.push([result.output.slice(0, limits.maxOutputChars), null]);
  }
  return out;
}

/**
 * Append the output (if any) with its toolbar and collapse control.
 */
export function terminalOutput(
  body: HTMLElement,
  result: JsonObject,
  limits: ILimits
): void {
  const spans = readSpans(result, limits);
  const plain = spans.map(s => s[0]).join('');
  const cut = result.outputTruncated;
  if (isObject(cut)) {
    const total = int(cut.total) ?? 0;
    const shown = int(cut.shown) ?? 0;
    body.appendChild(
      el(
        'div',
        'dsh-ToolCard-notice dsh-mod-truncated',
        `Output truncated: the first ${(total - shown).toLocaleString('en-US')} of ${total.toLocaleString('en-US')} characters are not shown.`
      )
    );
  }
  if (plain === '') {
    return;
  }
  const wrap = el('div', 'dsh-ToolCard-terminal');
  const toolbar = el('div', 'dsh-ToolCard-toolbar');
  const copy = el('button', 'dsh-ToolCard-copy', 'Copy');
  copy.type = 'button';
  copy.title = 'Copy the output as plain text';
  copy.addEventListener('click', event => {
    event.preventDefault();
    event.stopPropagation();
    copyText(plain).then(ok => {
      copy.textContent = ok ? 'Copied' : 'Copy failed';
      window.setTimeout(() => {
        copy.textContent = 'Copy';
      }, 1500);
    });
  });
  toolbar.appendChild(copy);
  wrap.appendChild(toolbar);

  const pre = el('pre', 'dsh-ToolCard-output');
  for (const [chunk, style] of spans) {
    pre.appendChild(styledSpan(chunk, style));
  }
  wrap.appendChild(pre);
  const lineCount = plain.replace(/\n$/, '').split('\n').length;
  if (lineCount > limits.maxOutputLines) {
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
async function copyText(value: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(value);
      return true;
    }
  } catch {
    // Fall through to the legacy path (permissions, focus, old browsers).
  }
  const area = el('textarea', 'dsh-ToolCard-clipboard');
  area.value = value;
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
