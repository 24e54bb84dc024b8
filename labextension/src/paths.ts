/**
 * Where a card's file path lives on the Jupyter server: pure string rules.
 */

/**
 * Use `/` separators and make `path` absolute through an absolute cwd;
 * `absolute` is `null` for a relative path without one.
 */
export function anchor(
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
