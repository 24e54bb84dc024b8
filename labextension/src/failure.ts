/**
 * What a tool's body raised: its type and message, the traceback folded
 * (the `text/html` card's `dsh-ToolCard-failure`). dsh_nb's own frames
 * arrive collapsed into one line; a model never reads any of this.
 */

import { el } from './dom';

/**
 * The folded failure section, or null when the payload has none.
 */
export function failureSection(failure: unknown): HTMLElement | null {
  if (typeof failure !== 'object' || failure === null) {
    return null;
  }
  const record = failure as { [key: string]: unknown };
  const kind = record.type;
  const traceback = record.traceback;
  if (typeof kind !== 'string' || typeof traceback !== 'string') {
    return null;
  }
  const message = typeof record.message === 'string' ? record.message : '';
  const details = el('details', 'dsh-ToolCard-failure');
  details.appendChild(
    el(
      'summary',
      'dsh-ToolCard-failureSummary',
      `${kind}: ${message} (traceback)`
    )
  );
  details.appendChild(el('pre', 'dsh-ToolCard-traceback', traceback));
  return details;
}
