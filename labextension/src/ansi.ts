/**
 * ANSI terminal output to styled spans, through `textContent` only.
 *
 * Colours come from a fixed palette indexed by number, so an escape
 * sequence can pick a colour but never inject a style string.
 */

import { el } from './dom';

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
    if (match[3] === 'm' && match[2] === '' && !/[?<=>]/.test(match[1] ?? '')) {
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

/**
 * A text node for an unstyled span, else a `<span>` styled by class or
 * by a palette colour.
 */
export function ansiSpan(span: IAnsiSpan): Node {
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
