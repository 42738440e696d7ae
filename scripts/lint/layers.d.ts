// Types of layers.js (plain JS so that eslint.config.js can import it).
export interface Layer {
  name: string;
  /** Names under src/ (main.ts is a file). */
  folders: string[];
  /** Globs of files outside those folders that belong to the layer. */
  files?: string[];
  /** Its folders may not import one another. */
  isolated?: boolean;
}
export interface Zone {
  target: string | string[];
  from: string | string[];
  except?: string[];
  message?: string;
}
export const COMPOSITION_ROOTS: string;
export const LAYERS: Layer[];
export const TOOLS: string[];
export interface EnginePart {
  /** The folder under src/engine/. */
  folder: string;
  /** What it holds, for the docs. */
  holds: string;
}
export const ENGINE_PARTS: EnginePart[];
export const STORE_DOOR: string;
export const OUTSIDE_LAYERS: string[];
export function layerZones(): Zone[];
