// Types of test-prerequisites.mjs (plain JS so that scripts/run-tests.mjs runs without tsx).
export const RABBITMQ_SERVER: string;
export const LUA_MISSING: string;
export function onPath(name: string, path?: string): boolean;
export function executable(file: string): boolean;
export function probeMachine(): { root: boolean; rabbitmq: boolean; lua: boolean; apt: boolean };
export function suitesLeftOut(m: {
  mode: string;
  root: boolean;
  skipRoot: boolean;
  rabbitmq: boolean;
}): { suite: string; reason: string }[];
export function luaAction(m: { lua: boolean; root: boolean; apt: boolean }): 'ok' | 'install' | 'missing';
