/**
 * Native JupyterLab renderer for dsh_nb tool cards.
 *
 * The Python side displays every tool call as a MIME bundle whose richest
 * entry is `application/vnd.dsh.tool-card+json`; this extension turns that
 * JSON into a card (header, terminal, diff or generic body) and makes file
 * locations open in the editor at the right line, which a static `text/html`
 * fallback cannot do.
 *
 * A second plugin (`approvals.ts`) raises a notification with *Allow once*
 * and *Reject* for every approval prompt a notebook's kernel waits on, so
 * a prompt in a cell scrolled out of view is still noticed.
 *
 * Security: the factory is `safe`, so cards render in untrusted notebooks.
 * Every string of the payload therefore reaches the DOM through
 * `textContent` or `createElement` only; `innerHTML` is never used.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { approvalsPlugin } from './approvals';
import { RenderedToolCard } from './card';
import { createOpener } from './opener';
import { FileOpener, MIME_TYPE, PLUGIN_ID } from './tokens';

export {
  ALLOW_LABEL,
  APPROVALS_PLUGIN_ID,
  APPROVALS_TARGET,
  ApprovalNotifier,
  REJECT_LABEL,
  WAITING_ITEM_ID,
  WaitingStatus
} from './approvals';
export { RenderedToolCard } from './card';
export { resolveServerPath } from './paths';
export { MIME_TYPE, PLUGIN_ID } from './tokens';
export type {
  FileOpener,
  IFileDiff,
  IFileLocation,
  IToolCard,
  ToolCardStatus
} from './tokens';

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
 * Register the renderer with the application's rendermime registry.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Renders dsh_nb tool cards and opens their file locations in the editor.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  activate: (app: JupyterFrontEnd, rendermime: IRenderMimeRegistry) => {
    rendermime.addFactory(createRendererFactory(createOpener(app)), 0);
  }
};

export default [plugin, approvalsPlugin];
