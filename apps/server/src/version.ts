/** Replaced at bundle time by build.mjs; tsx and tests read the package version. */
declare const __TOOLPORT_VERSION__: string | undefined;
export const VERSION: string = typeof __TOOLPORT_VERSION__ === 'string' ? __TOOLPORT_VERSION__ : '0.1.0';
