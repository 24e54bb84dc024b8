/**
 * The card widget and its frame: header, status, approval and trace.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { diffBody, genericBody, terminalBody } from './bodies';
import { el, icon } from './dom';
import { failureSection } from './failure';
import { isObject, json, Json, JsonObject, readPayload, str } from './payload';
import { STATUSES, Status } from './statuses';
import { talk } from './talk';
import { exitPill } from './terminal';
import {
  DEFAULT_LIMITS,
  FileOpener,
  ILimits,
  ILinkContext,
  IToolCard
} from './tokens';

/**
 * A widget that renders one tool card.
 */
export class RenderedToolCard extends Widget implements IRenderMime.IRenderer {
  /**
   * Construct a renderer; without an `opener`, locations are plain text.
   */
  constructor(
    options: IRenderMime.IRendererOptions,
    opener: FileOpener | null = null
  ) {
    super();
    this._mimeType = options.mimeType;
    this._resolver = options.resolver;
    this._opener = opener;
    this.addClass('dsh-ToolCardRenderer');
  }

  /**
   * Render the card held by `model` into this widget.
   */
  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = readPayload(model.data[this._mimeType]);
    const metadata = model.metadata[this._mimeType];
    this.node.textContent = '';
    if (data === null) {
      this.node.appendChild(invalidCard(model.data[this._mimeType]));
      return Promise.resolve();
    }
    const links: ILinkContext = {
      opener: this._opener,
      resolver: this._resolver,
      cwd: sessionCwd(data, metadata),
      limits: readLimits(data.limits)
    };
    this.node.appendChild(card(data, metadata, links));
    return Promise.resolve();
  }

  private _mimeType: string;
  private _resolver: IRenderMime.IResolver | null;
  private _opener: FileOpener | null;
}

/**
 * Show a payload that is not a card, as JSON text.
 */
export function invalidCard(value: Json): HTMLElement {
  const root = el('div', 'dsh-ToolCard dsh-mod-error');
  const header = el('div', 'dsh-ToolCard-header');
  header.appendChild(icon('other'));
  header.appendChild(
    el('span', 'dsh-ToolCard-title', 'Invalid tool card payload')
  );
  root.appendChild(header);
  root.appendChild(el('pre', 'dsh-ToolCard-json', json(value)));
  return root;
}

/**
 * The card's status, if it is one the kernel defines; else `pending`.
 */
function statusOf(card: IToolCard): Status {
  const known: readonly string[] = STATUSES;
  return typeof card.status === 'string' && known.includes(card.status)
    ? (card.status as Status)
    : 'pending';
}

/**
 * A status as the badge says it: `timed-out` reads "timed out".
 */
function statusLabel(status: Status): string {
  return status.replace(/-/g, ' ');
}

/**
 * Build the whole card.
 */
export function card(
  data: IToolCard,
  metadata: Json,
  links: ILinkContext
): HTMLElement {
  const status = statusOf(data);
  const call = isObject(data.call) ? data.call : null;
  const result = isObject(data.result) ? data.result : null;
  const kind = cardKind(call, result);
  const root = el('div', `dsh-ToolCard dsh-mod-card-${kind}`);
  root.classList.add(`dsh-mod-${status}`);
  if (data.isError === true) {
    root.classList.add('dsh-mod-error');
  }
  root.dataset.status = status;
  root.appendChild(header(data, status, kind, call, result, metadata));

  const body = el('div', 'dsh-ToolCard-body');
  if (kind === 'terminal') {
    terminalBody(body, call, result, links);
  } else if (kind === 'diff') {
    diffBody(body, call, result, links);
  } else {
    genericBody(body, call, result, links, data.isError === true);
  }
  const failure = failureSection(data.failure);
  if (failure !== null) {
    body.appendChild(failure);
  }
  const said = talk((data.talk ?? null) as Json);
  if (said !== null) {
    body.appendChild(said);
  }
  if (Array.isArray(data.trace) && data.trace.length > 0) {
    body.appendChild(trace(data.trace, metadata));
  }
  if (body.childNodes.length > 0) {
    root.appendChild(body);
  }
  return root;
}

function cardKind(call: JsonObject | null, result: JsonObject | null): string {
  const tag = str(call?.card) ?? str(result?.card);
  return tag === 'terminal' || tag === 'diff' ? tag : 'generic';
}

function header(
  data: IToolCard,
  status: Status,
  kind: string,
  call: JsonObject | null,
  result: JsonObject | null,
  metadata: Json
): HTMLElement {
  const node = el('div', 'dsh-ToolCard-header');
  const iconKind =
    kind === 'terminal'
      ? 'execute'
      : kind === 'diff'
        ? 'edit'
        : (str(call?.kind) ?? 'other');
  node.appendChild(icon(iconKind));
  // The kernel's title (relative to the cwd, as in the text/html card); a
  // payload stored by an older dsh_nb has none: a result's title then
  // replaces the pending one.
  const title =
    str(data.title) ??
    str(result?.title) ??
    str(call?.title) ??
    String(data.tool ?? '');
  const titleNode = el('span', 'dsh-ToolCard-title', title);
  if (kind === 'terminal') {
    titleNode.classList.add('dsh-mod-command');
  }
  node.appendChild(titleNode);
  if (typeof data.tool === 'string' && data.tool !== title) {
    node.appendChild(el('span', 'dsh-ToolCard-tool', data.tool));
  }
  const spacer = el('span', 'dsh-ToolCard-spacer');
  node.appendChild(spacer);
  const duration = durationOf(metadata);
  if (duration !== null) {
    node.appendChild(el('span', 'dsh-ToolCard-duration', duration));
  }
  if (kind === 'terminal' && result && str(result.card) === 'terminal') {
    const pill = exitPill(result);
    if (pill) {
      node.appendChild(pill);
    }
  }
  node.appendChild(
    el('span', `dsh-ToolCard-status dsh-mod-${status}`, statusLabel(status))
  );
  if (typeof data.approval === 'string') {
    // The approval outcome, once: here, not again in the body.
    node.appendChild(
      el('span', 'dsh-ToolCard-approval', `Approval: ${data.approval}`)
    );
  }
  return node;
}

/**
 * Read `durationMs` from the display metadata, if the kernel sent one.
 */
function durationOf(metadata: Json): string | null {
  if (!isObject(metadata)) {
    return null;
  }
  const ms = metadata.durationMs;
  if (typeof ms !== 'number' || !isFinite(ms) || ms < 0) {
    return null;
  }
  return formatMs(ms);
}

function formatMs(ms: number): string {
  if (ms < 10) {
    return `${ms.toFixed(1)} ms`;
  }
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The trace table; per-stage times come from `traceDurationsMs` in the
 * display metadata, kept out of the payload because they vary.
 */
function trace(items: Json[], metadata: Json): HTMLElement {
  const details = el('details', 'dsh-ToolCard-trace');
  details.appendChild(el('summary', undefined, `Trace (${items.length})`));
  const table = el('table');
  const durations =
    isObject(metadata) && Array.isArray(metadata.traceDurationsMs)
      ? metadata.traceDurationsMs
      : [];
  for (const [index, item] of items.entries()) {
    const row = el('tr');
    const fields = isObject(item) ? item : {};
    for (const key of ['stage', 'actor', 'decision']) {
      const value = fields[key];
      row.appendChild(
        el(
          'td',
          undefined,
          typeof value === 'string'
            ? value
            : value === undefined
              ? ''
              : json(value)
        )
      );
    }
    const ms = durations[index];
    if (typeof ms === 'number' && isFinite(ms) && ms >= 0) {
      row.appendChild(el('td', 'dsh-ToolCard-traceTime', formatMs(ms)));
    }
    table.appendChild(row);
  }
  details.appendChild(table);
  return details;
}

/**
 * The card's limits from the payload; a missing or bad one is the default.
 */
export function readLimits(value: Json): ILimits {
  const out = { ...DEFAULT_LIMITS };
  if (isObject(value)) {
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ILimits)[]) {
      const n = value[key];
      if (typeof n === 'number' && Number.isInteger(n) && n > 0) {
        out[key] = Math.min(n, DEFAULT_LIMITS[key] * 50);
      }
    }
  }
  return out;
}

/**
 * The session working folder: display metadata (where the kernel puts it,
 * because it differs per machine), or the payload of older cards.
 */
export function sessionCwd(data: IToolCard, metadata: Json): string | null {
  if (isObject(metadata) && typeof metadata.cwd === 'string') {
    return metadata.cwd;
  }
  return typeof data.cwd === 'string' ? data.cwd : null;
}
