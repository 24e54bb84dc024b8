/**
 * Native JupyterLab renderer for dsh_nb tool cards.
 *
 * The Python side displays every tool call as a MIME bundle whose richest
 * entry is `application/vnd.dsh.tool-card+json`; this extension turns that
 * JSON into a card (header, terminal, diff or generic body) and makes file
 * locations open in the editor at the right line, which a static `text/html`
 * fallback cannot do.
 *
 * Security: the factory is `safe`, so cards render in untrusted notebooks.
 * Every string of the payload therefore reaches the DOM through
 * `textContent` or `createElement` only; `innerHTML` is never used.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PageConfig } from '@jupyterlab/coreutils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

/**
 * The MIME type of a tool card: the JSON render intent of one tool call
 * (its call view, its result view once done, status, `callId`, tool name,
 * `isError`). See `dsh_nb` design notes, "The card MIME type".
 */
export const MIME_TYPE = 'application/vnd.dsh.tool-card+json';

/**
 * The id of the front-end plugin that registers the renderer.
 */
export const PLUGIN_ID = 'dsh-nb:tool-card';

/**
 * The statuses a card can be in.
 */
export type ToolCardStatus =
  | 'pending'
  | 'awaiting-approval'
  | 'running'
  | 'done'
  | 'denied'
  | 'error'
  | 'timed-out'
  | 'cancelled';

/**
 * A file a call reads or modifies; `line` is 1-based.
 */
export interface IFileLocation {
  path: string;
  line?: number;
}

/**
 * One file's change; `oldText: null` is a new file.
 */
export interface IFileDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/**
 * The wire form of a card payload (only the fields this renderer reads).
 */
export interface IToolCard {
  tool: string;
  callId?: string;
  status: ToolCardStatus;
  isError: boolean;
  call?: { [key: string]: unknown };
  result?: { [key: string]: unknown };
  approval?: string;
  trace?: { stage?: unknown; actor?: unknown; decision?: unknown }[];
  cwd?: string;
}

/**
 * Opens a file path (as written in the card) at a 1-based line.
 *
 * `cwd` is the card's working folder, used for relative paths. The
 * promise resolves to `null` once the file is open, or to the reason it
 * cannot be opened, shown to the user.
 */
export type FileOpener = (
  path: string,
  line: number | null,
  context: { cwd: string | null; resolver: IRenderMime.IResolver | null }
) => Promise<string | null>;

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
    const data = Private.readPayload(model.data[this._mimeType]);
    const metadata = model.metadata[this._mimeType];
    this.node.textContent = '';
    if (data === null) {
      this.node.appendChild(Private.invalidCard(model.data[this._mimeType]));
      return Promise.resolve();
    }
    const links: Private.ILinkContext = {
      opener: this._opener,
      resolver: this._resolver,
      cwd: typeof data.cwd === 'string' ? data.cwd : null
    };
    this.node.appendChild(Private.card(data, metadata, links));
    return Promise.resolve();
  }

  private _mimeType: string;
  private _resolver: IRenderMime.IResolver | null;
  private _opener: FileOpener | null;
}

/**
 * Create a renderer factory whose cards open files through `opener`.
 */
export function createRendererFactory(
  opener: FileOpener | null
): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [MIME_TYPE],
    defaultRank: 0,
    createRenderer: options => new RenderedToolCard(options, opener)
  };
}

/**
 * A factory without file opening, for hosts other than JupyterLab.
 */
export const rendererFactory = createRendererFactory(null);

/**
 * Resolve a card path to a path relative to the Jupyter server root.
 *
 * The rule, in order:
 * 1. an absolute path inside the server root becomes relative to it;
 *    an absolute path outside it cannot be opened (`null`);
 * 2. a relative path with an absolute card `cwd` is joined to the cwd,
 *    then rule 1 applies;
 * 3. any other relative path is taken relative to `baseDir`, the
 *    notebook's folder (the kernel's default working folder); climbing
 *    above the server root gives `null`.
 *
 * Backslashes are read as separators, so Windows paths work as well.
 */
export function resolveServerPath(
  path: string,
  options: { cwd: string | null; serverRoot: string; baseDir: string }
): string | null {
  return Private.resolveServerPath(path, options);
}

/**
 * Open `serverPath` in the text editor and put the cursor on `line`.
 */
async function openInEditor(
  app: JupyterFrontEnd,
  serverPath: string,
  line: number | null
): Promise<string | null> {
  if (!app.commands.hasCommand('docmanager:open')) {
    return 'this application cannot open documents';
  }
  try {
    // Check first: opening a missing file shows an error dialog.
    await app.serviceManager.contents.get(serverPath, { content: false });
  } catch {
    return `${serverPath} was not found on the Jupyter server`;
  }
  const widget = (await app.commands.execute('docmanager:open', {
    path: serverPath,
    factory: 'Editor'
  })) as Private.IEditorDocument | undefined;
  if (!widget) {
    // Notebook 7 may open the file in another browser tab.
    return null;
  }
  await widget.context?.ready;
  await widget.revealed;
  const editor = widget.content?.editor;
  if (line !== null && editor) {
    const last = Math.max(0, (editor.lineCount ?? line) - 1);
    const position = { line: Math.min(line - 1, last), column: 0 };
    editor.setCursorPosition(position);
    editor.revealPosition?.(position);
    editor.focus?.();
  }
  return null;
}

/**
 * Register the renderer with the application's rendermime registry.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Renders dsh_nb tool cards and opens their file locations in the editor.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  activate: (app: JupyterFrontEnd, rendermime: IRenderMimeRegistry) => {
    const opener: FileOpener = async (path, line, context) => {
      const serverRoot = PageConfig.getOption('serverRoot');
      let serverPath = Private.resolveServerPath(path, {
        cwd: context.cwd,
        serverRoot,
        baseDir: await Private.notebookDir(context.resolver)
      });
      if (serverPath === null && !serverRoot) {
        // Notebook 7 does not publish the server root: ask the server.
        serverPath = await Private.askServer(path, context);
      }
      if (serverPath === null) {
        return 'it is outside the Jupyter server root';
      }
      return openInEditor(app, serverPath, line);
    };
    rendermime.addFactory(createRendererFactory(opener), 0);
  }
};

export default plugin;

/**
 * Helpers: payload reading, DOM building, ANSI, diff, paths.
 */
namespace Private {
  /**
   * What a renderer needs to make locations clickable.
   */
  export interface ILinkContext {
    opener: FileOpener | null;
    resolver: IRenderMime.IResolver | null;
    cwd: string | null;
  }

  /**
   * The slice of a file editor document widget used to place the cursor.
   */
  export interface IEditorDocument {
    context?: { ready: Promise<void> };
    revealed?: Promise<void>;
    content?: {
      editor?: {
        lineCount?: number;
        setCursorPosition(position: { line: number; column: number }): void;
        revealPosition?(position: { line: number; column: number }): void;
        focus?(): void;
      };
    };
  }

  type Json = unknown;
  type JsonObject = { [key: string]: unknown };

  const STATUS_LABELS: { [key: string]: string } = {
    pending: 'pending',
    'awaiting-approval': 'awaiting approval',
    running: 'running',
    done: 'done',
    denied: 'denied',
    error: 'error',
    'timed-out': 'timed out',
    cancelled: 'cancelled'
  };

  /**
   * Terminal output longer than this many lines starts collapsed.
   */
  const COLLAPSE_LINES = 40;

  /**
   * Lines of unchanged context around each change in a diff.
   */
  const CONTEXT = 3;

  /**
   * Rows shown per file before the diff is truncated with a notice.
   */
  const MAX_ROWS = 2000;

  /**
   * Edit distance beyond which Myers gives up ("whole file replaced").
   */
  const MAX_EDITS = 2000;

  // ---------------------------------------------------------------- payload

  export function isObject(value: Json): value is JsonObject {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  /**
   * Own-key lookup, so payload strings like `constructor` miss.
   */
  function has(table: object, key: string): boolean {
    return Object.prototype.hasOwnProperty.call(table, key);
  }

  function str(value: Json): string | null {
    return typeof value === 'string' ? value : null;
  }

  function int(value: Json): number | null {
    return typeof value === 'number' && Number.isInteger(value) ? value : null;
  }

  /**
   * Accept the payload as an object (or a JSON string of one).
   */
  export function readPayload(value: Json): IToolCard | null {
    let data = value;
    if (typeof data === 'string') {
      try {
        data = JSON.parse(data);
      } catch {
        return null;
      }
    }
    if (!isObject(data) || typeof data.tool !== 'string') {
      return null;
    }
    return data as unknown as IToolCard;
  }

  function json(value: Json): string {
    try {
      const text = JSON.stringify(value, null, 2);
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  }

  // -------------------------------------------------------------------- DOM

  function el<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    className?: string,
    text?: string
  ): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';

  /**
   * Fixed icon paths (16x16, stroked); never built from payload data.
   */
  const ICONS: { [kind: string]: string[] } = {
    read: ['M3 2h7l3 3v9H3z', 'M5 7h6', 'M5 9.5h6', 'M5 12h4'],
    edit: ['M2.5 13.5l1-3.5 7.5-7.5 2.5 2.5-7.5 7.5z', 'M9.5 4l2.5 2.5'],
    delete: ['M2.5 4h11', 'M6 4V2.5h4V4', 'M4 4l.8 9.5h6.4L12 4'],
    move: ['M2 8h10', 'M9 4.5L12.5 8 9 11.5'],
    search: [
      'M7 2.5a4.5 4.5 0 1 0 0 9a4.5 4.5 0 1 0 0-9z',
      'M10.3 10.3l3.2 3.2'
    ],
    execute: ['M2 2.5h12v11H2z', 'M4.5 6l2 2-2 2', 'M8 10.5h3.5'],
    fetch: [
      'M8 2a6 6 0 1 0 0 12a6 6 0 1 0 0-12z',
      'M2 8h12',
      'M8 2c-2.2 2.4-2.2 9.6 0 12',
      'M8 2c2.2 2.4 2.2 9.6 0 12'
    ],
    other: ['M8 2.5l5.5 5.5L8 13.5 2.5 8z']
  };

  function icon(kind: string): SVGSVGElement {
    const paths = has(ICONS, kind) ? ICONS[kind] : ICONS.other;
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('class', 'dsh-ToolCard-icon');
    svg.setAttribute('viewBox', '0 0 16 16');
    svg.setAttribute('width', '16');
    svg.setAttribute('height', '16');
    svg.setAttribute('aria-hidden', 'true');
    for (const d of paths) {
      const path = document.createElementNS(SVG_NS, 'path');
      path.setAttribute('d', d);
      svg.appendChild(path);
    }
    return svg;
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

  function statusOf(card: IToolCard): string {
    return typeof card.status === 'string' && has(STATUS_LABELS, card.status)
      ? card.status
      : 'pending';
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
    if (typeof data.approval === 'string') {
      body.appendChild(
        el('div', 'dsh-ToolCard-approval', `Approval: ${data.approval}`)
      );
    }
    if (kind === 'terminal') {
      terminalBody(body, call, result, data, links);
    } else if (kind === 'diff') {
      diffBody(body, call, result, links);
    } else {
      genericBody(body, call, result, links);
    }
    if (Array.isArray(data.trace) && data.trace.length > 0) {
      body.appendChild(trace(data.trace, metadata));
    }
    if (body.childNodes.length > 0) {
      root.appendChild(body);
    }
    return root;
  }

  function cardKind(
    call: JsonObject | null,
    result: JsonObject | null
  ): string {
    const tag = str(call?.card) ?? str(result?.card);
    return tag === 'terminal' || tag === 'diff' ? tag : 'generic';
  }

  function header(
    data: IToolCard,
    status: string,
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
    const title =
      str(call?.title) ?? str(result?.title) ?? String(data.tool ?? '');
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
      el('span', `dsh-ToolCard-status dsh-mod-${status}`, STATUS_LABELS[status])
    );
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

  function exitPill(result: JsonObject): HTMLElement | null {
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

  // ---------------------------------------------------------- generic card

  function genericBody(
    body: HTMLElement,
    call: JsonObject | null,
    result: JsonObject | null,
    links: ILinkContext
  ): void {
    if (call && 'rawInput' in call) {
      const raw = call.rawInput;
      body.appendChild(
        el(
          'pre',
          'dsh-ToolCard-input',
          typeof raw === 'string' ? raw : json(raw)
        )
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

  /**
   * A path (and line) that opens the file in the editor when clicked.
   */
  export function fileLink(
    path: string,
    line: number | null,
    links: ILinkContext
  ): HTMLElement {
    const goodLine = line !== null && line >= 1 ? line : null;
    const label = goodLine === null ? path : `${path}:${goodLine}`;
    const opener = links.opener;
    if (!opener) {
      return el('span', 'dsh-ToolCard-location', label);
    }
    const button = el('button', 'dsh-ToolCard-location dsh-mod-link', label);
    button.type = 'button';
    button.title =
      goodLine === null ? `Open ${path}` : `Open ${path} at line ${goodLine}`;
    button.dataset.path = path;
    if (goodLine !== null) {
      button.dataset.line = String(goodLine);
    }
    button.addEventListener('click', event => {
      event.preventDefault();
      event.stopPropagation();
      button.classList.remove('dsh-mod-unresolved');
      opener(path, goodLine, { cwd: links.cwd, resolver: links.resolver })
        .then(problem => {
          if (problem !== null) {
            button.classList.add('dsh-mod-unresolved');
            button.title = `Cannot open ${path}: ${problem}`;
          }
        })
        .catch(reason => {
          button.classList.add('dsh-mod-unresolved');
          button.title = `Cannot open ${path}: ${String(reason)}`;
        });
    });
    return button;
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

  // --------------------------------------------------------- terminal card

  function terminalBody(
    body: HTMLElement,
    call: JsonObject | null,
    result: JsonObject | null,
    data: IToolCard,
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
      const cwd = str(call.cwd) ?? str(data.cwd);
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

  function terminalOutput(body: HTMLElement, result: JsonObject): void {
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

  // ------------------------------------------------------------------ ANSI

  /**
   * A run of text with one SGR state.
   */
  export interface IAnsiSpan {
    text: string;
    fg: number | null;
    bg: number | null;
    bold: boolean;
    dim: boolean;
    italic: boolean;
    underline: boolean;
    inverse: boolean;
  }

  const BASE16 = [
    '#3e424d',
    '#e75c58',
    '#00a250',
    '#ddb62b',
    '#208ffb',
    '#d160c4',
    '#60c6c8',
    '#c5c1b4',
    '#282c36',
    '#b22b31',
    '#007427',
    '#b27d12',
    '#0065ca',
    '#a03196',
    '#258f8f',
    '#a1a6b2'
  ];

  /**
   * The fixed 256-colour xterm palette; the only colours output can use.
   */
  export const PALETTE: string[] = (() => {
    const colours = BASE16.slice();
    const steps = [0, 95, 135, 175, 215, 255];
    for (let r = 0; r < 6; r++) {
      for (let g = 0; g < 6; g++) {
        for (let b = 0; b < 6; b++) {
          colours.push(`rgb(${steps[r]}, ${steps[g]}, ${steps[b]})`);
        }
      }
    }
    for (let i = 0; i < 24; i++) {
      const v = 8 + i * 10;
      colours.push(`rgb(${v}, ${v}, ${v})`);
    }
    return colours;
  })();

  function nearestCube(r: number, g: number, b: number): number {
    const q = (v: number) =>
      Math.round((Math.max(0, Math.min(255, v)) / 255) * 5);
    return 16 + 36 * q(r) + 6 * q(g) + q(b);
  }

  // CSI sequences, OSC strings (hyperlinks, titles) and two-byte escapes.
  const ESCAPES =
    // eslint-disable-next-line no-control-regex
    /\x1b\[([0-9;:?<=>]*)([ -/]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

  /**
   * Split terminal output into styled spans and its plain text.
   *
   * SGR (`ESC[...m`) sets colours and weights; other escapes are dropped.
   * A lone carriage return rewinds the line, as a terminal would.
   */
  export function parseAnsi(input: string): {
    spans: IAnsiSpan[];
    plain: string;
  } {
    const text = rewindCarriageReturns(input);
    const spans: IAnsiSpan[] = [];
    const state: IAnsiSpan = {
      text: '',
      fg: null,
      bg: null,
      bold: false,
      dim: false,
      italic: false,
      underline: false,
      inverse: false
    };
    let plain = '';
    let last = 0;
    const push = (chunk: string) => {
      if (!chunk) {
        return;
      }
      plain += chunk;
      const prev = spans[spans.length - 1];
      if (prev && sameStyle(prev, state)) {
        prev.text += chunk;
      } else {
        spans.push({ ...state, text: chunk });
      }
    };
    ESCAPES.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = ESCAPES.exec(text)) !== null) {
      push(text.slice(last, match.index));
      last = ESCAPES.lastIndex;
      if (
        match[3] === 'm' &&
        match[2] === '' &&
        !/[?<=>]/.test(match[1] ?? '')
      ) {
        applySgr(state, match[1] ?? '');
      }
    }
    push(text.slice(last));
    return { spans, plain };
  }

  function sameStyle(a: IAnsiSpan, b: IAnsiSpan): boolean {
    return (
      a.fg === b.fg &&
      a.bg === b.bg &&
      a.bold === b.bold &&
      a.dim === b.dim &&
      a.italic === b.italic &&
      a.underline === b.underline &&
      a.inverse === b.inverse
    );
  }

  function rewindCarriageReturns(text: string): string {
    if (text.indexOf('\r') < 0) {
      return text;
    }
    return text
      .replace(/\r+\n/g, '\n')
      .split('\n')
      .map(line => {
        const cut = line.lastIndexOf('\r', line.length - 2);
        return cut < 0
          ? line.replace(/\r$/, '')
          : line.slice(cut + 1).replace(/\r$/, '');
      })
      .join('\n');
  }

  function applySgr(state: IAnsiSpan, params: string): void {
    const codes =
      params === ''
        ? [0]
        : params.split(/[;:]/).map(p => (p === '' ? 0 : parseInt(p, 10)));
    for (let i = 0; i < codes.length; i++) {
      const code = codes[i];
      if (code === 0) {
        state.fg = state.bg = null;
        state.bold =
          state.dim =
          state.italic =
          state.underline =
          state.inverse =
            false;
      } else if (code === 1) {
        state.bold = true;
      } else if (code === 2) {
        state.dim = true;
      } else if (code === 3) {
        state.italic = true;
      } else if (code === 4) {
        state.underline = true;
      } else if (code === 7) {
        state.inverse = true;
      } else if (code === 22) {
        state.bold = state.dim = false;
      } else if (code === 23) {
        state.italic = false;
      } else if (code === 24) {
        state.underline = false;
      } else if (code === 27) {
        state.inverse = false;
      } else if (code >= 30 && code <= 37) {
        state.fg = code - 30;
      } else if (code >= 90 && code <= 97) {
        state.fg = code - 90 + 8;
      } else if (code === 39) {
        state.fg = null;
      } else if (code >= 40 && code <= 47) {
        state.bg = code - 40;
      } else if (code >= 100 && code <= 107) {
        state.bg = code - 100 + 8;
      } else if (code === 49) {
        state.bg = null;
      } else if (code === 38 || code === 48) {
        let colour: number | null = null;
        if (codes[i + 1] === 5 && i + 2 < codes.length) {
          const n = codes[i + 2];
          colour = n >= 0 && n <= 255 ? n : null;
          i += 2;
        } else if (codes[i + 1] === 2 && i + 4 < codes.length) {
          colour = nearestCube(codes[i + 2], codes[i + 3], codes[i + 4]);
          i += 4;
        }
        if (colour !== null) {
          if (code === 38) {
            state.fg = colour;
          } else {
            state.bg = colour;
          }
        }
      }
    }
  }

  function ansiSpan(span: IAnsiSpan): Node {
    let fg = span.fg;
    let bg = span.bg;
    if (span.inverse) {
      [fg, bg] = [bg ?? 0, fg ?? 7];
    }
    const plain =
      fg === null &&
      bg === null &&
      !span.bold &&
      !span.dim &&
      !span.italic &&
      !span.underline;
    if (plain) {
      return document.createTextNode(span.text);
    }
    const node = el('span', undefined, span.text);
    const classes: string[] = [];
    if (fg !== null) {
      if (fg < 16) {
        classes.push(`dsh-ansi-fg${fg}`);
      } else {
        node.style.color = PALETTE[fg];
      }
    }
    if (bg !== null) {
      if (bg < 16) {
        classes.push(`dsh-ansi-bg${bg}`);
      } else {
        node.style.backgroundColor = PALETTE[bg];
      }
    }
    if (span.bold) {
      classes.push('dsh-ansi-bold');
    }
    if (span.dim) {
      classes.push('dsh-ansi-dim');
    }
    if (span.italic) {
      classes.push('dsh-ansi-italic');
    }
    if (span.underline) {
      classes.push('dsh-ansi-underline');
    }
    node.className = classes.join(' ');
    return node;
  }

  // ------------------------------------------------------------- diff card

  function diffBody(
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

  /**
   * A line of a file, with whether it ended with a newline.
   */
  interface ILine {
    text: string;
    eol: boolean;
  }

  export function splitLines(text: string): ILine[] {
    if (text === '') {
      return [];
    }
    const parts = text.split('\n');
    const lines: ILine[] = [];
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      if (last && parts[i] === '') {
        break;
      }
      lines.push({ text: parts[i], eol: !last });
    }
    return lines;
  }

  /**
   * One step of an edit script: 0 keep, 1 delete (old), 2 insert (new).
   */
  export interface IEdit {
    op: 0 | 1 | 2;
    a: number;
    b: number;
  }

  /**
   * Myers' O((N+M)D) line diff; `null` when more than `maxEdits` edits.
   *
   * Common prefix and suffix are trimmed first, so a small change in a
   * large file costs little.
   */
  export function diffKeys(
    a: number[],
    b: number[],
    maxEdits: number = MAX_EDITS
  ): IEdit[] | null {
    let start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) {
      start++;
    }
    let endA = a.length;
    let endB = b.length;
    while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
      endA--;
      endB--;
    }
    const middle = myers(a, b, start, endA, start, endB, maxEdits);
    if (middle === null) {
      return null;
    }
    const edits: IEdit[] = [];
    for (let i = 0; i < start; i++) {
      edits.push({ op: 0, a: i, b: i });
    }
    edits.push(...middle);
    for (let i = 0; endA + i < a.length; i++) {
      edits.push({ op: 0, a: endA + i, b: endB + i });
    }
    return edits;
  }

  function myers(
    a: number[],
    b: number[],
    a0: number,
    a1: number,
    b0: number,
    b1: number,
    maxEdits: number
  ): IEdit[] | null {
    const n = a1 - a0;
    const m = b1 - b0;
    const out: IEdit[] = [];
    if (n === 0 || m === 0) {
      for (let i = 0; i < n; i++) {
        out.push({ op: 1, a: a0 + i, b: b0 });
      }
      for (let j = 0; j < m; j++) {
        out.push({ op: 2, a: a1, b: b0 + j });
      }
      return out;
    }
    const max = Math.min(n + m, maxEdits);
    const offset = max + 1;
    const v = new Int32Array(2 * max + 3);
    const trace: Int32Array[] = [];
    let found = -1;
    for (let d = 0; d <= max && found < 0; d++) {
      trace.push(v.slice(offset - d - 1, offset + d + 2));
      for (let k = -d; k <= d; k += 2) {
        let x =
          k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])
            ? v[offset + k + 1]
            : v[offset + k - 1] + 1;
        let y = x - k;
        while (x < n && y < m && a[a0 + x] === b[b0 + y]) {
          x++;
          y++;
        }
        v[offset + k] = x;
        if (x >= n && y >= m) {
          found = d;
          break;
        }
      }
    }
    if (found < 0) {
      return null;
    }
    let x = n;
    let y = m;
    for (let d = found; d > 0; d--) {
      const snap = trace[d];
      const at = (k: number) => snap[k + d + 1];
      const k = x - y;
      const prevK =
        k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
      const prevX = at(prevK);
      const prevY = prevX - prevK;
      while (x > prevX && y > prevY) {
        x--;
        y--;
        out.push({ op: 0, a: a0 + x, b: b0 + y });
      }
      if (prevK === k + 1) {
        y--;
        out.push({ op: 2, a: a0 + x, b: b0 + y });
      } else {
        x--;
        out.push({ op: 1, a: a0 + x, b: b0 + y });
      }
    }
    while (x > 0 && y > 0) {
      x--;
      y--;
      out.push({ op: 0, a: a0 + x, b: b0 + y });
    }
    return out.reverse();
  }

  /**
   * A unified-diff hunk: the edits it covers and its header numbers.
   */
  export interface IHunk {
    oldStart: number;
    oldLines: number;
    newStart: number;
    newLines: number;
    edits: IEdit[];
  }

  /**
   * Group an edit script into hunks with `context` lines around changes.
   */
  export function hunks(edits: IEdit[], context: number = CONTEXT): IHunk[] {
    const out: IHunk[] = [];
    const len = edits.length;
    let i = 0;
    let previousEnd = 0;
    for (;;) {
      while (i < len && edits[i].op === 0) {
        i++;
      }
      if (i >= len) {
        break;
      }
      const start = Math.max(previousEnd, i - context);
      let j = i;
      let end = len;
      for (;;) {
        while (j < len && edits[j].op !== 0) {
          j++;
        }
        let run = j;
        while (run < len && edits[run].op === 0) {
          run++;
        }
        if (run < len && run - j <= 2 * context) {
          j = run;
          continue;
        }
        end = Math.min(run, j + context);
        break;
      }
      const slice = edits.slice(start, end);
      const first = slice[0];
      let oldLines = 0;
      let newLines = 0;
      for (const e of slice) {
        if (e.op !== 2) {
          oldLines++;
        }
        if (e.op !== 1) {
          newLines++;
        }
      }
      out.push({
        oldStart: oldLines === 0 ? first.a : first.a + 1,
        oldLines,
        newStart: newLines === 0 ? first.b : first.b + 1,
        newLines,
        edits: slice
      });
      previousEnd = end;
      i = end;
    }
    return out;
  }

  /**
   * Compute a file's hunks, with a notice when the diff was simplified.
   */
  export function computeDiff(
    oldText: string | null,
    newText: string
  ): {
    hunks: IHunk[];
    oldLines: ILine[];
    newLines: ILine[];
    notice: string | null;
  } {
    const oldLines = splitLines(oldText ?? '');
    const newLines = splitLines(newText);
    const ids = new Map<string, number>();
    const key = (line: ILine) => {
      const k = line.eol ? line.text + '\n' : line.text;
      let id = ids.get(k);
      if (id === undefined) {
        id = ids.size;
        ids.set(k, id);
      }
      return id;
    };
    const a = oldLines.map(key);
    const b = newLines.map(key);
    let notice: string | null = null;
    let edits = diffKeys(a, b);
    if (edits === null) {
      notice =
        'Too many changes to compare line by line: shown as the whole file replaced.';
      edits = [];
      for (let i = 0; i < a.length; i++) {
        edits.push({ op: 1, a: i, b: 0 });
      }
      for (let j = 0; j < b.length; j++) {
        edits.push({ op: 2, a: a.length, b: j });
      }
    }
    return { hunks: hunks(edits), oldLines, newLines, notice };
  }

  function looksBinary(text: string | null): boolean {
    return text !== null && text.indexOf('\u0000') >= 0;
  }

  function fileDiff(value: Json, links: ILinkContext): HTMLElement {
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
      head.appendChild(
        el('span', 'dsh-ToolCard-badge dsh-mod-new', 'new file')
      );
    }
    head.appendChild(
      el('span', 'dsh-ToolCard-stat dsh-mod-added', `+${added}`)
    );
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

  // ----------------------------------------------------------------- paths

  /**
   * The notebook's folder, relative to the server root ('' at the root).
   */
  export async function notebookDir(
    resolver: IRenderMime.IResolver | null
  ): Promise<string> {
    if (!resolver) {
      return '';
    }
    try {
      const probe = await resolver.resolveUrl('dsh-probe');
      const decoded = decodeURI(probe).replace(/^\/+/, '');
      const cut = decoded.lastIndexOf('/');
      return cut < 0 ? '' : decoded.slice(0, cut);
    } catch {
      return '';
    }
  }

  /**
   * Resolve an absolute path (or one made absolute by the card's cwd)
   * through the server's `/api/resolvePath`, via the notebook's resolver.
   *
   * Only used when the page does not carry `serverRoot`: that endpoint
   * reads an absolute path outside the root as relative to the root.
   */
  export async function askServer(
    rawPath: string,
    context: { cwd: string | null; resolver: IRenderMime.IResolver | null }
  ): Promise<string | null> {
    const { absolute } = anchor(rawPath, context.cwd);
    const resolve = context.resolver?.resolvePath;
    if (absolute === null || !resolve) {
      return null;
    }
    try {
      const found = await resolve.call(context.resolver, absolute);
      return found && found.scope === 'server'
        ? found.path.replace(/^\/+/, '')
        : null;
    } catch {
      return null;
    }
  }

  /**
   * Use `/` separators and make `path` absolute through an absolute cwd;
   * `absolute` is `null` for a relative path without one.
   */
  function anchor(
    rawPath: string,
    rawCwd: string | null
  ): { path: string; absolute: string | null } {
    const path = rawPath.replace(/\\/g, '/');
    const cwd = rawCwd ? rawCwd.replace(/\\/g, '/') : null;
    if (isAbsolute(path)) {
      return { path, absolute: path };
    }
    if (cwd && isAbsolute(cwd)) {
      return { path, absolute: `${cwd.replace(/\/+$/, '')}/${path}` };
    }
    return { path, absolute: null };
  }

  function isAbsolute(path: string): boolean {
    return /^(\/|[A-Za-z]:\/|\/\/)/.test(path);
  }

  /**
   * Normalise `.` and `..` segments; `null` if `..` climbs past the start.
   */
  function normalise(path: string): string[] | null {
    const out: string[] = [];
    for (const part of path.split('/')) {
      if (part === '' || part === '.') {
        continue;
      }
      if (part === '..') {
        if (out.length === 0) {
          return null;
        }
        out.pop();
      } else {
        out.push(part);
      }
    }
    return out;
  }

  function drivePrefix(path: string): string {
    const match = /^([A-Za-z]):\//.exec(path);
    return match ? match[1].toLowerCase() + ':' : '';
  }

  export function resolveServerPath(
    rawPath: string,
    options: { cwd: string | null; serverRoot: string; baseDir: string }
  ): string | null {
    const { path, absolute } = anchor(rawPath, options.cwd);
    if (path === '') {
      return null;
    }
    if (absolute === null) {
      const parts = normalise(`${options.baseDir}/${path}`);
      return parts === null || parts.length === 0 ? null : parts.join('/');
    }
    const root = options.serverRoot.replace(/\\/g, '/');
    if (!isAbsolute(root) || drivePrefix(root) !== drivePrefix(absolute)) {
      return null;
    }
    const rootParts = normalise(root.replace(/^[A-Za-z]:/, ''));
    const parts = normalise(absolute.replace(/^[A-Za-z]:/, ''));
    if (
      rootParts === null ||
      parts === null ||
      parts.length <= rootParts.length
    ) {
      return null;
    }
    const windows = drivePrefix(root) !== '';
    for (let i = 0; i < rootParts.length; i++) {
      const same = windows
        ? rootParts[i].toLowerCase() === parts[i].toLowerCase()
        : rootParts[i] === parts[i];
      if (!same) {
        return null;
      }
    }
    return parts.slice(rootParts.length).join('/');
  }
}
