/**
 * Pending approvals as JupyterLab notifications.
 *
 * A tool call that waits for a person shows its prompt in a cell, which may
 * be scrolled far away (an MCP client's call lands in the panel under the
 * cell that started the server). The kernel announces every such prompt on
 * the `dsh_nb.approvals` comm; this plugin raises a warning notification
 * with *Allow once* and *Reject* and sends the answer back, and the kernel
 * answers the very same prompt, as a click on its buttons would. When the
 * prompt is settled any way (in the cell, from code, by a timeout or a
 * cancellation) the kernel says so and the notification goes away.
 * While any prompt waits, a status-bar item says "Waiting for you: ...":
 * the kernel's own status reads "Idle" then, which misleads.
 *
 * Either side may come first: the kernel opens a comm when dsh_nb loads,
 * and this plugin opens one on a kernel where dsh_nb is already loaded
 * (a reload, a second tab). Kernel text reaches the page only as the
 * notification's message, which JupyterLab renders as text, never markup.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ISessionContext, Notification } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Widget } from '@lumino/widgets';

import { visible } from './dom';

/**
 * The comm target both sides register.
 */
export const APPROVALS_TARGET = 'dsh_nb.approvals';

/**
 * The id of the plugin that raises the notifications.
 */
export const APPROVALS_PLUGIN_ID = 'dsh-nb:approvals';

/**
 * The labels of the notification's actions (the prompt's own buttons').
 */
export const ALLOW_LABEL = 'Allow once';
export const REJECT_LABEL = 'Reject';

/**
 * The id of the status-bar item that says the kernel waits for a person.
 */
export const WAITING_ITEM_ID = 'dsh-nb:approvals-waiting';

/**
 * One shown notification and where its answer goes.
 */
interface IShown {
  toast: string;
  comm: Kernel.IComm;
  kernel: Kernel.IKernelConnection;
  tool: string;
}

/**
 * The status-bar item: while an approval waits, the kernel is not idle in
 * any sense that matters to the person, so it says who it waits for.
 */
export class WaitingStatus extends Widget {
  constructor() {
    super();
    this.addClass('dsh-WaitingStatus');
    this.node.setAttribute('role', 'status');
    this.node.title = 'A tool call waits for your approval';
    this.setWaiting([]);
  }

  /**
   * Show the tools that wait, or nothing when none does.
   */
  setWaiting(tools: string[]): void {
    if (tools.length === 0) {
      this.node.textContent = '';
      this.hide();
      return;
    }
    const names = Array.from(new Set(tools)).join(', ');
    const count =
      tools.length === 1 ? '1 approval' : `${tools.length} approvals`;
    this.node.textContent = `Waiting for you: ${count} (${names})`;
    this.show();
  }
}

/**
 * A string field of a message, or '' (kernel text is never trusted).
 */
function field(data: { [key: string]: unknown }, key: string): string {
  const value = data[key];
  return typeof value === 'string' ? visible(value) : '';
}

/**
 * Watches notebook kernels and mirrors their pending approvals.
 */
export class ApprovalNotifier {
  private _shown = new Map<string, IShown>();
  private _kernels = new WeakSet<Kernel.IKernelConnection>();

  constructor(private _status: WaitingStatus | null = null) {}

  private _changed(): void {
    this._status?.setWaiting(Array.from(this._shown.values(), s => s.tool));
  }

  /**
   * Follow a session's kernel, now and whenever it changes.
   */
  watch(context: ISessionContext): void {
    const attach = (): void => {
      const kernel = context.session?.kernel;
      if (kernel) {
        this._attach(kernel, context);
      }
    };
    context.kernelChanged.connect(attach);
    attach();
  }

  private _attach(
    kernel: Kernel.IKernelConnection,
    context: ISessionContext
  ): void {
    if (this._kernels.has(kernel) || kernel.isDisposed) {
      return;
    }
    this._kernels.add(kernel);
    kernel.registerCommTarget(APPROVALS_TARGET, comm =>
      this._adopt(kernel, context, comm)
    );
    kernel.statusChanged.connect((_sender, status) => {
      if (
        status === 'restarting' ||
        status === 'autorestarting' ||
        status === 'dead'
      ) {
        this._dismissWhere(shown => shown.kernel === kernel);
      }
    });
    kernel.disposed.connect(() =>
      this._dismissWhere(shown => shown.kernel === kernel)
    );
    void this._join(kernel, context);
  }

  /**
   * Open a comm of our own where dsh_nb already runs and we hold none.
   *
   * Asking first keeps kernels without dsh_nb from seeing an unknown
   * target; the kernel lists the comm it opened itself when it loaded.
   */
  private async _join(
    kernel: Kernel.IKernelConnection,
    context: ISessionContext
  ): Promise<void> {
    try {
      const reply = await kernel.requestCommInfo({
        target_name: APPROVALS_TARGET
      });
      const content = reply.content;
      if (content.status !== 'ok' || kernel.isDisposed) {
        return;
      }
      const ids = Object.keys(content.comms);
      if (ids.length === 0 || ids.some(id => kernel.hasComm(id))) {
        return;
      }
      const comm = kernel.createComm(APPROVALS_TARGET);
      this._adopt(kernel, context, comm);
      comm.open({ type: 'hello', version: 1 });
    } catch (reason) {
      // The kernel went away or cannot answer: it greets us on its next load.
      console.debug('dsh-nb: no approval comm', reason);
    }
  }

  private _adopt(
    kernel: Kernel.IKernelConnection,
    context: ISessionContext,
    comm: Kernel.IComm
  ): void {
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
      const data = msg.content.data as { [key: string]: unknown } | null;
      if (data && typeof data === 'object') {
        this._handle(kernel, context, comm, data);
      }
    };
    comm.onClose = () => {
      this._dismissWhere(shown => shown.comm === comm);
    };
  }

  private _handle(
    kernel: Kernel.IKernelConnection,
    context: ISessionContext,
    comm: Kernel.IComm,
    data: { [key: string]: unknown }
  ): void {
    const id = field(data, 'id');
    if (!id) {
      return;
    }
    const key = `${kernel.id} ${id}`;
    if (data.type === 'settled') {
      this._dismiss(key);
      return;
    }
    if (data.type !== 'pending' || this._shown.has(key)) {
      return;
    }
    const tool = field(data, 'tool');
    const agent = field(data, 'agent') || 'an agent';
    const reason = field(data, 'reason');
    const where = PathExt.basename(context.path || context.name || '');
    let message = `${agent} asks to run "${tool}"`;
    if (where) {
      message += ` in ${where}`;
    }
    if (reason) {
      message += `: ${reason}`;
    }
    const answer = (value: 'allow-once' | 'reject') => () => {
      this._shown.delete(key);
      this._changed();
      try {
        comm.send({ type: 'answer', id, answer: value });
      } catch (reason) {
        console.warn('dsh-nb: could not send the approval answer', reason);
      }
    };
    const toast = Notification.emit(message, 'warning', {
      autoClose: false,
      actions: [
        {
          label: ALLOW_LABEL,
          caption: `Run ${tool} this once`,
          displayType: 'accent',
          callback: answer('allow-once')
        },
        {
          label: REJECT_LABEL,
          caption: `Do not run ${tool}`,
          displayType: 'warn',
          callback: answer('reject')
        }
      ]
    });
    this._shown.set(key, { toast, comm, kernel, tool });
    this._changed();
  }

  private _dismiss(key: string): void {
    const shown = this._shown.get(key);
    if (shown) {
      this._shown.delete(key);
      Notification.dismiss(shown.toast);
      this._changed();
    }
  }

  private _dismissWhere(test: (shown: IShown) => boolean): void {
    for (const [key, shown] of Array.from(this._shown)) {
      if (test(shown)) {
        this._dismiss(key);
      }
    }
  }
}

/**
 * Raise a notification for every approval a notebook's kernel waits on.
 */
export const approvalsPlugin: JupyterFrontEndPlugin<void> = {
  id: APPROVALS_PLUGIN_ID,
  description:
    'Raises a notification with Allow once / Reject for each pending dsh_nb approval.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IStatusBar],
  activate: (
    _app: JupyterFrontEnd,
    tracker: INotebookTracker,
    statusBar: IStatusBar | null
  ) => {
    let status: WaitingStatus | null = null;
    if (statusBar) {
      status = new WaitingStatus();
      statusBar.registerStatusItem(WAITING_ITEM_ID, {
        item: status,
        align: 'left',
        rank: 1000
      });
    }
    const notifier = new ApprovalNotifier(status);
    tracker.forEach(panel => notifier.watch(panel.sessionContext));
    tracker.widgetAdded.connect((_sender, panel) =>
      notifier.watch(panel.sessionContext)
    );
  }
};
