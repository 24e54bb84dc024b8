/**
 * The card MIME type, the payload's wire form and the opener contract.
 *
 * Shared by every module; holds types and constants only, no DOM.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { Status } from './statuses';

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
 * The statuses a card can be in: the kernel's list, generated into
 * `statuses.ts` (`labextension/gen_statuses.py`).
 */
export type ToolCardStatus = Status;

/**
 * A file a call reads or modifies; `line` is 1-based.
 */
export interface IFileLocation {
  path: string;
  line?: number;
}

/**
 * One file's planned diff, as the kernel sends it (see `dsh_nb.cards.payload`).
 */
export interface IFileDiff {
  path: string;
  newFile?: boolean;
  crlf?: boolean;
  added: number;
  removed: number;
  rows: number;
  shown: number;
  skipped?: string;
  notice?: string;
  after?: number;
  hunks: {
    header: string;
    oldStart: number;
    newStart: number;
    gap?: number;
    lines: (string | { more: number; old: number; new: number })[];
  }[];
}

/**
 * The card's limits (`dsh_nb.cards.CardLimits`): the kernel sends content
 * already cut to them, and the renderer never draws more.
 */
export interface ILimits {
  maxOutputLines: number;
  maxOutputChars: number;
  maxDiffLines: number;
}

/**
 * `CardLimits()`'s defaults, for payloads that carry no limits.
 */
export const DEFAULT_LIMITS: ILimits = {
  maxOutputLines: 40,
  maxOutputChars: 200000,
  maxDiffLines: 2000
};

/**
 * The wire form of a card payload (only the fields this renderer reads).
 */
export interface IToolCard {
  tool: string;
  callId?: string;
  status: ToolCardStatus;
  isError: boolean;
  /** The title as the kernel resolved it (since the payload carried it). */
  title?: string;
  call?: { [key: string]: unknown };
  result?: { [key: string]: unknown };
  approval?: string;
  trace?: { stage?: unknown; actor?: unknown; decision?: unknown }[];
  /** What the tool said while it ran: progress and log lines. */
  talk?: { [key: string]: unknown };
  limits?: Partial<ILimits>;
  cwd?: string;
  /** What the body raised: type, message and its traceback (folded). */
  failure?: { type?: unknown; message?: unknown; traceback?: unknown };
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
 * What a renderer needs to make locations clickable.
 */
export interface ILinkContext {
  opener: FileOpener | null;
  resolver: IRenderMime.IResolver | null;
  cwd: string | null;
  limits: ILimits;
}
