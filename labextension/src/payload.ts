/**
 * Reading the card payload defensively: it is data from the kernel.
 *
 * Nothing here trusts the shape of the JSON; lookups use own keys only so
 * payload strings such as `constructor` or `__proto__` never match.
 */

import { IToolCard } from './tokens';

/**
 * A value parsed from the payload: anything JSON can hold.
 */
export type Json = unknown;
/**
 * A JSON object; its keys come from the payload.
 */
export type JsonObject = { [key: string]: unknown };

/**
 * Whether `value` is a plain JSON object (not null, not an array).
 */
export function isObject(value: Json): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Own-key lookup, so payload strings like `constructor` miss.
 */
export function has(table: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(table, key);
}

/**
 * The value if it is a string, else `null`.
 */
export function str(value: Json): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * The value if it is an integer, else `null`.
 */
export function int(value: Json): number | null {
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

/**
 * Pretty JSON text for display; never throws (cycles, BigInt).
 */
export function json(value: Json): string {
  try {
    const text = JSON.stringify(value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}
