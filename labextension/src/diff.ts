/**
 * Line diffs: Myers' algorithm and unified-diff hunks, with no DOM.
 */

/**
 * Lines of unchanged context around each change in a diff.
 */
const CONTEXT = 3;

/**
 * Edit distance beyond which Myers gives up ("whole file replaced").
 */
const MAX_EDITS = 2000;

/**
 * A line of a file, with whether it ended with a newline.
 */
export interface ILine {
  text: string;
  eol: boolean;
}

/**
 * Split on `\n` only, so a CRLF line keeps its `\r` (shown as a marker).
 */
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
