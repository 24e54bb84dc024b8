/**
 * Card bodies by kind: generic, terminal and diff, and the result section.
 *
 * One content rule, the `text/html` card's (contract §7.3): once a result
 * is there, its content replaces the pending content. The kernel already
 * leaves the call's `content` and `diffs` out of a completed card; the
 * bodies below draw the call's content only while no result exists, so an
 * older payload follows the same rule.
 */

import { fileDiff } from './diffview';
import { el, text } from './dom';
import { isMedia, media } from './media';
import { fileLink } from './opener';
import { int, isObject, json, Json, JsonObject, str } from './payload';
import { terminalOutput } from './terminal';
import { tableOf, tableView } from './tables';
import { ILimits, ILinkContext } from './tokens';

function clip(value: string, limits: ILimits): string {
  return value.length <= limits.maxOutputChars
    ? value
    : value.slice(0, limits.maxOutputChars);
}

function cutNotice(cut: Json, what: string): HTMLElement | null {
  if (!isObject(cut)) {
    return null;
  }
  const shown = int(cut.shown) ?? 0;
  const total = int(cut.total) ?? 0;
  const unit = str(cut.unit) ?? 'characters';
  return el(
    'div',
    'dsh-ToolCard-notice dsh-mod-truncated',
    `${what} truncated: ${(total - shown).toLocaleString('en-US')} more ${unit} not shown (${total.toLocaleString('en-US')} in all).`
  );
}

/**
 * The generic body: raw input, content blocks, locations, result.
 */
export function genericBody(
  body: HTMLElement,
  call: JsonObject | null,
  result: JsonObject | null,
  links: ILinkContext,
  failed = false
): void {
  if (call) {
    callSection(body, call, result !== null, links);
  }
  if (result) {
    resultSection(body, result, links, !failed);
  }
}

/**
 * A result that is one text block holding a table, drawn as the table.
 */
function tableResult(items: Json[]): HTMLElement | null {
  if (items.length !== 1) {
    return null;
  }
  const item = items[0];
  if (
    !isObject(item) ||
    item.type !== 'text' ||
    typeof item.text !== 'string' ||
    typeof item.notice === 'string'
  ) {
    return null;
  }
  const shape = tableOf(item.text);
  return shape === null ? null : tableView(shape, item.text);
}

/**
 * A call's raw input, its content while pending, and its locations.
 */
function callSection(
  body: HTMLElement,
  call: JsonObject,
  done: boolean,
  links: ILinkContext
): void {
  if ('rawInput' in call) {
    const raw = call.rawInput;
    body.appendChild(
      el(
        'pre',
        'dsh-ToolCard-input',
        clip(typeof raw === 'string' ? raw : json(raw), links.limits)
      )
    );
    const notice = cutNotice(call.rawInputTruncated, 'Input');
    if (notice) {
      body.appendChild(notice);
    }
  }
  if (!done && Array.isArray(call.content)) {
    body.appendChild(blocks(call.content, links.limits));
  }
  if (Array.isArray(call.locations)) {
    body.appendChild(locations(call.locations, links));
  }
}

/**
 * Content blocks, at most `maxOutputChars` characters each and twice that
 * in all, as the kernel cut them.
 */
function blocks(items: Json[], limits: ILimits): HTMLElement {
  const node = el('div', 'dsh-ToolCard-content');
  let left = 2 * limits.maxOutputChars;
  for (const item of items) {
    if (left <= 0) {
      node.appendChild(
        el(
          'div',
          'dsh-ToolCard-notice dsh-mod-truncated',
          'More content not shown.'
        )
      );
      break;
    }
    const captioned = isObject(item) && isMedia(item);
    const isText =
      isObject(item) &&
      (item.type === 'text' || captioned) &&
      typeof item.text === 'string';
    const raw = isText ? (item.text as string) : json(item);
    const shown = clip(raw, {
      ...limits,
      maxOutputChars: Math.min(left, limits.maxOutputChars)
    });
    left -= shown.length;
    if (captioned) {
      node.appendChild(media(item as JsonObject, shown));
    } else if (
      shown !== '' ||
      !isObject(item) ||
      typeof item.notice !== 'string'
    ) {
      node.appendChild(
        el(
          isText ? 'div' : 'pre',
          isText ? 'dsh-ToolCard-text' : 'dsh-ToolCard-json',
          shown
        )
      );
    }
    if (isObject(item) && typeof item.notice === 'string') {
      node.appendChild(
        el('div', 'dsh-ToolCard-notice dsh-mod-truncated', item.notice)
      );
    } else if (shown.length < raw.length) {
      node.appendChild(
        el(
          'div',
          'dsh-ToolCard-notice dsh-mod-truncated',
          `truncated: ${(raw.length - shown.length).toLocaleString('en-US')} more characters not shown`
        )
      );
    }
  }
  return node;
}

function locations(items: Json[], links: ILinkContext): HTMLElement {
  const list = el('ul', 'dsh-ToolCard-locations');
  for (const item of items) {
    if (!isObject(item) || typeof item.path !== 'string') {
      continue;
    }
    const line = int(item.line);
    const entry = el('li');
    entry.appendChild(fileLink(item.path, line, links));
    list.appendChild(entry);
  }
  return list;
}

function diffs(body: HTMLElement, items: Json[], links: ILinkContext): void {
  const budget = { rows: links.limits.maxDiffLines };
  for (const diff of items) {
    body.appendChild(fileDiff(diff, links, links.limits, budget));
  }
  if (items.length === 0) {
    body.appendChild(el('div', 'dsh-ToolCard-notice', 'No file changes.'));
  }
}

function resultSection(
  body: HTMLElement,
  result: JsonObject,
  links: ILinkContext,
  tables = false
): void {
  const tag = str(result.card);
  if (tag === 'terminal') {
    terminalOutput(body, result, links.limits);
  } else if (tag === 'diff' && Array.isArray(result.diffs)) {
    diffs(body, result.diffs, links);
  } else if (Array.isArray(result.content)) {
    const table = tables ? tableResult(result.content) : null;
    if (table !== null) {
      table.classList.add('dsh-ToolCard-result');
      body.appendChild(table);
      return;
    }
    const content = blocks(result.content, links.limits);
    content.classList.add('dsh-ToolCard-result');
    body.appendChild(content);
  }
}

/**
 * The terminal body: description, command and cwd, then output.
 */
export function terminalBody(
  body: HTMLElement,
  call: JsonObject | null,
  result: JsonObject | null,
  links: ILinkContext
): void {
  if (call && str(call.card) === 'terminal') {
    const description = str(call.description);
    if (description !== null) {
      body.appendChild(el('div', 'dsh-ToolCard-description', description));
    }
    const command = el('pre', 'dsh-ToolCard-command');
    command.appendChild(el('span', 'dsh-ToolCard-prompt', '$ '));
    command.appendChild(text(str(call.title) ?? ''));
    body.appendChild(command);
    const cwd = str(call.cwd) ?? links.cwd;
    if (cwd !== null) {
      body.appendChild(el('div', 'dsh-ToolCard-cwd', `in ${cwd}`));
    }
  } else if (call) {
    callSection(body, call, result !== null, links);
  }
  if (result) {
    resultSection(body, result, links);
  }
}

/**
 * The diff body: the proposed diffs while pending, else the result's.
 */
export function diffBody(
  body: HTMLElement,
  call: JsonObject | null,
  result: JsonObject | null,
  links: ILinkContext
): void {
  if (call && str(call.card) !== 'diff') {
    callSection(body, call, result !== null, links);
  } else if (call && Array.isArray(call.locations)) {
    body.appendChild(locations(call.locations, links));
  }
  if (result) {
    resultSection(body, result, links);
  } else if (call && str(call.card) === 'diff' && Array.isArray(call.diffs)) {
    diffs(body, call.diffs, links);
  }
}
