/**
 * Card bodies by kind: generic, terminal and diff, and the result section.
 */

import { fileDiff } from './diffview';
import { el } from './dom';
import { fileLink } from './opener';
import { int, isObject, json, Json, JsonObject, str } from './payload';
import { terminalOutput } from './terminal';
import { ILinkContext } from './tokens';

/**
 * The generic body: raw input, content blocks, locations, result.
 */
export function genericBody(
  body: HTMLElement,
  call: JsonObject | null,
  result: JsonObject | null,
  links: ILinkContext
): void {
  if (call && 'rawInput' in call) {
    const raw = call.rawInput;
    body.appendChild(
      el('pre', 'dsh-ToolCard-input', typeof raw === 'string' ? raw : json(raw))
    );
  }
  if (call && Array.isArray(call.content)) {
    body.appendChild(blocks(call.content));
  }
  if (call && Array.isArray(call.locations)) {
    body.appendChild(locations(call.locations, links));
  }
  if (result) {
    resultSection(body, result, call, links);
  }
}

function blocks(items: Json[]): HTMLElement {
  const node = el('div', 'dsh-ToolCard-content');
  for (const item of items) {
    if (
      isObject(item) &&
      item.type === 'text' &&
      typeof item.text === 'string'
    ) {
      node.appendChild(el('div', 'dsh-ToolCard-text', item.text));
    } else {
      node.appendChild(el('pre', 'dsh-ToolCard-json', json(item)));
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

function resultSection(
  body: HTMLElement,
  result: JsonObject,
  call: JsonObject | null,
  links: ILinkContext
): void {
  const title = str(result.title);
  if (title !== null && title !== str(call?.title)) {
    body.appendChild(el('div', 'dsh-ToolCard-resultTitle', title));
  }
  const tag = str(result.card);
  if (tag === 'terminal') {
    terminalOutput(body, result);
  } else if (tag === 'diff' && Array.isArray(result.diffs)) {
    for (const diff of result.diffs) {
      body.appendChild(fileDiff(diff, links));
    }
  } else if (Array.isArray(result.content)) {
    const content = blocks(result.content);
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
    command.appendChild(document.createTextNode(str(call.title) ?? ''));
    body.appendChild(command);
    const cwd = str(call.cwd) ?? links.cwd;
    if (cwd !== null) {
      body.appendChild(el('div', 'dsh-ToolCard-cwd', `in ${cwd}`));
    }
  } else if (call) {
    genericBody(body, call, null, links);
  }
  if (result && str(result.card) === 'terminal') {
    const title = str(result.title);
    if (title !== null && title !== str(call?.title)) {
      body.appendChild(el('div', 'dsh-ToolCard-resultTitle', title));
    }
    terminalOutput(body, result);
  } else if (result) {
    resultSection(body, result, call, links);
  }
}

/**
 * The diff body: proposed diffs, locations, then the result once.
 */
export function diffBody(
  body: HTMLElement,
  call: JsonObject | null,
  result: JsonObject | null,
  links: ILinkContext
): void {
  const callDiffs =
    call && str(call.card) === 'diff' && Array.isArray(call.diffs)
      ? call.diffs
      : null;
  if (call && str(call.card) !== 'diff') {
    genericBody(body, call, null, links);
  }
  if (callDiffs) {
    for (const diff of callDiffs) {
      body.appendChild(fileDiff(diff, links));
    }
  }
  if (call && Array.isArray(call.locations)) {
    body.appendChild(locations(call.locations, links));
  }
  if (!result) {
    return;
  }
  const resultDiffs =
    str(result.card) === 'diff' && Array.isArray(result.diffs)
      ? result.diffs
      : null;
  if (resultDiffs && callDiffs && json(resultDiffs) === json(callDiffs)) {
    // The applied change repeats the proposed one: show it once.
    const title = str(result.title);
    if (title !== null && title !== str(call?.title)) {
      body.appendChild(el('div', 'dsh-ToolCard-resultTitle', title));
    }
    return;
  }
  resultSection(body, result, call, links);
}
