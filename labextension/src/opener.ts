/**
 * Clickable file locations and opening them in JupyterLab's editor.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { PageConfig } from '@jupyterlab/coreutils';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { el } from './dom';
import { anchor, resolveServerPath } from './paths';
import { FileOpener, ILinkContext } from './tokens';

/**
 * The slice of a file editor document widget used to place the cursor.
 */
interface IEditorDocument {
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

/**
 * The notebook's folder, relative to the server root ('' at the root).
 */
async function notebookDir(
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
async function askServer(
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
  })) as IEditorDocument | undefined;
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
 * The opener JupyterLab cards use: resolve the path, then open it.
 */
export function createOpener(app: JupyterFrontEnd): FileOpener {
  const opener: FileOpener = async (path, line, context) => {
    const serverRoot = PageConfig.getOption('serverRoot');
    let serverPath = resolveServerPath(path, {
      cwd: context.cwd,
      serverRoot,
      baseDir: await notebookDir(context.resolver)
    });
    if (serverPath === null && !serverRoot) {
      // Notebook 7 does not publish the server root: ask the server.
      serverPath = await askServer(path, context);
    }
    if (serverPath === null) {
      return 'it is outside the Jupyter server root';
    }
    return openInEditor(app, serverPath, line);
  };
  return opener;
}
